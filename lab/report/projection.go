package report

import (
	"fmt"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// Histograms plots the distribution of each named sample as a step line
// (density over bins shared by all samples), e.g. the distortion ratios of
// several random projections. xlabel names the quantity.
func Histograms(path, title, xlabel string, names []string, samples [][]float64, bins int) error {
	if len(names) != len(samples) || len(samples) == 0 || bins < 1 {
		return fmt.Errorf("report: histograms: %d names, %d samples, %d bins", len(names), len(samples), bins)
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range samples {
		for _, v := range s {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	if !(hi > lo) {
		hi = lo + 1
	}
	width := (hi - lo) / float64(bins)
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xlabel
	p.Y.Label.Text = "density"
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.XOffs = vg.Points(10)
	for i, s := range samples {
		counts := make([]float64, bins)
		for _, v := range s {
			counts[min(bins-1, int((v-lo)/width))]++
		}
		pts := make(plotter.XYs, 0, 2*bins)
		for b, c := range counts {
			y := c / (float64(len(s)) * width)
			pts = append(pts, plotter.XY{X: lo + float64(b)*width, Y: y}, plotter.XY{X: lo + float64(b+1)*width, Y: y})
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return err
		}
		l.Color = curveColors[i%len(curveColors)]
		l.Width = vg.Points(1.5)
		p.Add(l)
		p.Legend.Add(names[i], l)
	}
	return savePNG(p, path, 7*vg.Inch, 4.5*vg.Inch)
}
