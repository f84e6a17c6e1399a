package report

import (
	"fmt"
	"image/color"
	"io"
	"math"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// curveColors are Tableau's ten categorical colours, so that the ten methods
// of "--methods all" get distinct lines (plotutil's palette has seven).
var curveColors = []color.RGBA{
	{31, 119, 180, 255}, {255, 127, 14, 255}, {44, 160, 44, 255}, {214, 39, 40, 255}, {148, 103, 189, 255},
	{140, 86, 75, 255}, {227, 119, 194, 255}, {127, 127, 127, 255}, {188, 189, 34, 255}, {23, 190, 207, 255},
}

// Curves plots A_t (mean ± std over seeds) against the task for every
// method, with the legend beside the plot so that it hides no curve.
func Curves(path string, sums []Summary) error {
	p := plot.New()
	p.Title.Text = "Class-incremental accuracy"
	p.X.Label.Text = "task"
	p.Y.Label.Text = "A_t (%)"
	legend := plot.NewLegend()
	legend.Top, legend.Left = true, true
	for i, s := range sums {
		pts := make(plotter.XYs, len(s.Curve))
		errs := make(plotter.YErrors, len(s.Curve))
		for t, c := range s.Curve {
			pts[t] = plotter.XY{X: float64(t + 1), Y: c.Mean}
			errs[t] = struct{ Low, High float64 }{c.Std, c.Std}
		}
		line, points, err := plotter.NewLinePoints(pts)
		if err != nil {
			return err
		}
		col := curveColors[i%len(curveColors)]
		line.Color, points.Color = col, col
		points.Shape = plotutil.Shape(i)
		if i >= len(curveColors) {
			line.Dashes = plotutil.Dashes(1 + i/len(curveColors))
		}
		p.Add(line, points)
		if s.Seeds > 1 {
			eb, err := plotter.NewYErrorBars(struct {
				plotter.XYer
				plotter.YErrorer
			}{pts, errs})
			if err == nil {
				eb.Color = col
				p.Add(eb)
			}
		}
		legend.Add(s.Method, line, points)
	}
	p.X.Tick.Marker = plot.TickerFunc(func(min, max float64) []plot.Tick {
		var ts []plot.Tick
		for v := math.Ceil(min); v <= max; v++ {
			ts = append(ts, plot.Tick{Value: v, Label: fmt.Sprint(v)})
		}
		return ts
	})
	const w, h, lw = 6 * vg.Inch, 4 * vg.Inch, 2.6 * vg.Inch
	c := vgimg.PngCanvas{Canvas: vgimg.New(w+lw, h)}
	dc := draw.New(c)
	p.Draw(draw.Crop(dc, 0, -lw, 0, 0))
	legendArea := draw.Crop(dc, w, 0, 0, -0.3*vg.Inch)
	legend.Draw(legendArea)
	return writeFile(path, func(wr io.Writer) error {
		_, err := c.WriteTo(wr)
		return err
	})
}

func savePNG(p *plot.Plot, path string, w, h vg.Length) error {
	c := vgimg.PngCanvas{Canvas: vgimg.New(w, h)}
	p.Draw(draw.New(c))
	return writeFile(path, func(wr io.Writer) error {
		_, err := c.WriteTo(wr)
		return err
	})
}

// heatGrid adapts a square matrix to plotter.GridXYZ.
type heatGrid struct{ m *mat.Dense }

func (g heatGrid) Dims() (int, int)   { r, c := g.m.Dims(); return c, r }
func (g heatGrid) Z(c, r int) float64 { n, _ := g.m.Dims(); return g.m.At(n-1-r, c) } // row 0 on top
func (g heatGrid) X(c int) float64    { return float64(c) }
func (g heatGrid) Y(r int) float64    { return float64(r) }

// Heatmaps draws one correlation heat map per panel side by side, with a
// shared colour scale from -1 to 1.
func Heatmaps(path string, titles []string, mats []*mat.Dense) error {
	const side = 3.2 * vg.Inch
	img := vgimg.New(vg.Length(len(mats))*side, side+0.5*vg.Inch)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 1, Cols: len(mats), PadX: vg.Millimeter, PadY: vg.Millimeter}
	pal := moreland.SmoothBlueRed()
	pal.SetMin(-1)
	pal.SetMax(1)
	cols := pal.Palette(64)
	for i, m := range mats {
		p := plot.New()
		p.Title.Text = titles[i]
		hm := plotter.NewHeatMap(heatGrid{m}, cols)
		hm.Min, hm.Max = -1, 1
		p.Add(hm)
		p.HideAxes()
		p.Draw(tiles.At(dc, i, 0))
	}
	c := vgimg.PngCanvas{Canvas: img}
	return writeFile(path, func(wr io.Writer) error {
		_, err := c.WriteTo(wr)
		return err
	})
}

// SweepPoint is one value of a sensitivity sweep.
type SweepPoint struct {
	Value   float64
	Average Summary
}

// Sweep plots Ā (mean ± std) against the swept parameter.
func Sweep(path, param string, xs []float64, ys []Summary) error {
	if len(xs) != len(ys) || len(xs) == 0 {
		return fmt.Errorf("sweep plot: %d values for %d results", len(xs), len(ys))
	}
	p := plot.New()
	p.Title.Text = "Sensitivity to " + param
	p.X.Label.Text = param
	p.Y.Label.Text = "Ā (%)"
	pts := make(plotter.XYs, len(xs))
	errs := make(plotter.YErrors, len(xs))
	for i := range xs {
		pts[i] = plotter.XY{X: xs[i], Y: ys[i].Average.Mean}
		errs[i] = struct{ Low, High float64 }{ys[i].Average.Std, ys[i].Average.Std}
	}
	line, points, err := plotter.NewLinePoints(pts)
	if err != nil {
		return err
	}
	line.Color = color.RGBA{B: 200, A: 255}
	p.Add(line, points)
	if eb, err := plotter.NewYErrorBars(struct {
		plotter.XYer
		plotter.YErrorer
	}{pts, errs}); err == nil {
		p.Add(eb)
	}
	return savePNG(p, path, 5*vg.Inch, 3.5*vg.Inch)
}
