package report

import (
	"fmt"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// HebbianPoint is one point of a Hebbian convergence curve.
type HebbianPoint struct {
	Pass     int
	RelDist  float64 // ‖C − C*‖ / ‖C*‖
	Accuracy float64 // in [0, 1]
}

// HebbianPlots writes two PNGs: the relative distance of the Hebbian
// classifier to the ridge solution against passes (log scale), and its
// test accuracy against passes with the ridge solution's accuracy as a
// reference line. title names the data set.
func HebbianPlots(distPath, accPath, title string, pts []HebbianPoint, ridgeAcc float64) error {
	if len(pts) == 0 {
		return fmt.Errorf("report: no Hebbian points to plot")
	}
	dist := make(plotter.XYs, 0, len(pts))
	acc := make(plotter.XYs, len(pts))
	for i, p := range pts {
		if p.RelDist > 0 {
			dist = append(dist, plotter.XY{X: float64(p.Pass), Y: p.RelDist})
		}
		acc[i] = plotter.XY{X: float64(p.Pass), Y: 100 * p.Accuracy}
	}
	pd := plot.New()
	pd.Title.Text = "Hebbian rule → ridge solution: " + title
	pd.X.Label.Text = "passes"
	pd.Y.Label.Text = "‖C − C*‖ / ‖C*‖"
	pd.Y.Scale = plot.LogScale{}
	pd.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	l, err := plotter.NewLine(dist)
	if err != nil {
		return err
	}
	pd.Add(l)
	if err := savePNG(pd, distPath, 6*vg.Inch, 4*vg.Inch); err != nil {
		return err
	}
	pa := plot.New()
	pa.Title.Text = "Hebbian rule, test accuracy: " + title
	pa.X.Label.Text = "passes"
	pa.Y.Label.Text = "accuracy (%)"
	la, err := plotter.NewLine(acc)
	if err != nil {
		return err
	}
	ref, err := plotter.NewLine(plotter.XYs{{X: acc[0].X, Y: 100 * ridgeAcc}, {X: acc[len(acc)-1].X, Y: 100 * ridgeAcc}})
	if err != nil {
		return err
	}
	ref.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	pa.Add(la, ref)
	pa.Legend.Add("Hebbian", la)
	pa.Legend.Add("ridge (Cholesky)", ref)
	pa.Legend.Top = false
	return savePNG(pa, accPath, 6*vg.Inch, 4*vg.Inch)
}
