package report

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/flycl/flycl/internal/atomicfile"
	"github.com/flycl/flycl/lab/experiment"
)

// curveColors are Tableau's ten categorical colours, so that the ten methods
// of "--methods all" get distinct lines (plotutil's palette has seven).
var curveColors = []color.RGBA{
	{31, 119, 180, 255}, {255, 127, 14, 255}, {44, 160, 44, 255}, {214, 39, 40, 255}, {148, 103, 189, 255},
	{140, 86, 75, 255}, {227, 119, 194, 255}, {127, 127, 127, 255}, {188, 189, 34, 255}, {23, 190, 207, 255},
}

// CurveInfo says what the A_t plot shows, for its title and caption.
type CurveInfo struct {
	Data  string  // the data set, as the user named it
	Seeds []int64 // the seeds averaged
}

// CurveInfoOf describes r: its data (the data-set spec when the result
// records its configuration, else the data description) and its seeds.
func CurveInfoOf(r *experiment.Result) CurveInfo {
	info := CurveInfo{Data: r.Train, Seeds: r.Protocol.Seeds}
	if r.Config != nil && r.Config.Data != "" {
		info.Data = r.Config.Data
		if r.Config.Backbone != "" {
			info.Data += " (" + r.Config.Backbone + " features)"
		}
	}
	return info
}

// Curves plots A_t (mean over seeds, error bars ± one sample standard
// deviation over seeds) against the task for every method, with the
// legend beside the plot so that it hides no curve. The title names the
// data and the seeds; tasks without a value (no test samples) are left out.
func Curves(path string, sums []Summary, info CurveInfo) error {
	p := plot.New()
	p.Title.Text = "Class-incremental accuracy A_t"
	if info.Data != "" {
		p.Title.Text += " on " + shorten(info.Data, 60)
	}
	seeds := make([]string, len(info.Seeds))
	for i, s := range info.Seeds {
		seeds[i] = strconv.FormatInt(s, 10)
	}
	switch len(seeds) {
	case 0:
	case 1:
		p.Title.Text += "\nseed " + seeds[0]
	default:
		p.Title.Text += fmt.Sprintf("\n%d seeds (%s); error bars: ± 1 std over seeds", len(seeds), shorten(strings.Join(seeds, ", "), 40))
	}
	p.X.Label.Text = "task"
	p.Y.Label.Text = "A_t (%), mean over seeds"
	legend := plot.NewLegend()
	legend.Top, legend.Left = true, true
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, s := range sums {
		var pts plotter.XYs
		var errs plotter.YErrors
		for t, c := range s.Curve {
			if math.IsNaN(c.Mean) || math.IsInf(c.Mean, 0) {
				continue
			}
			sd := c.Std
			if math.IsNaN(sd) || s.Seeds < 2 {
				sd = 0
			}
			pts = append(pts, plotter.XY{X: float64(t + 1), Y: c.Mean})
			errs = append(errs, struct{ Low, High float64 }{sd, sd})
			lo, hi = min(lo, c.Mean-sd), max(hi, c.Mean+sd)
		}
		col := curveColors[i%len(curveColors)]
		if len(pts) == 0 {
			continue
		}
		line, points, err := plotter.NewLinePoints(pts)
		if err != nil {
			return err
		}
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
	if lo <= hi {
		// Room for every error bar, whole ticks at a round step.
		pad := max(1, 0.05*(hi-lo))
		p.Y.Min, p.Y.Max = max(0, lo-pad), hi+pad
		step := niceStep((p.Y.Max - p.Y.Min) / 6)
		p.Y.Min = math.Floor(p.Y.Min/step) * step
		p.Y.Max = math.Ceil(p.Y.Max/step) * step
		p.Y.Tick.Marker = stepTicks(step, "%.0f")
		if step < 1 {
			p.Y.Tick.Marker = stepTicks(step, "%.1f")
		}
	}
	p.X.Tick.Marker = plot.TickerFunc(func(min, max float64) []plot.Tick {
		var ts []plot.Tick
		for v := math.Ceil(min); v <= max; v++ {
			ts = append(ts, plot.Tick{Value: v, Label: fmt.Sprint(v)})
		}
		return ts
	})
	p.X.Min, p.X.Max = 0.7, math.Max(p.X.Max, 1)+0.3
	const w, h, lw = 6 * vg.Inch, 4 * vg.Inch, 2.6 * vg.Inch
	c := vgimg.PngCanvas{Canvas: vgimg.New(w+lw, h)}
	dc := draw.New(c)
	p.Draw(draw.Crop(dc, 0, -lw, 0, 0))
	legendArea := draw.Crop(dc, w, 0, 0, -0.3*vg.Inch)
	legend.Draw(legendArea)
	return atomicfile.WriteFile(path, func(wr io.Writer) error {
		_, err := c.WriteTo(wr)
		return err
	})
}

// niceStep rounds a tick step up to 1, 2 or 5 times a power of ten.
func niceStep(raw float64) float64 {
	if !(raw > 0) {
		return 1
	}
	e := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, f := range []float64{1, 2, 5, 10} {
		if f*e >= raw {
			return f * e
		}
	}
	return 10 * e
}

// stepTicks labels every multiple of step.
func stepTicks(step float64, format string) plot.Ticker {
	return plot.TickerFunc(func(lo, hi float64) []plot.Tick {
		var ts []plot.Tick
		for v := math.Ceil(lo/step-1e-9) * step; v <= hi+1e-9*step; v += step {
			ts = append(ts, plot.Tick{Value: v, Label: fmt.Sprintf(format, v)})
		}
		return ts
	})
}

func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

func savePNG(p *plot.Plot, path string, w, h vg.Length) error {
	c := vgimg.PngCanvas{Canvas: vgimg.New(w, h)}
	p.Draw(draw.New(c))
	return atomicfile.WriteFile(path, func(wr io.Writer) error {
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

// HeatmapInfo says what the heat maps show.
type HeatmapInfo struct {
	// Caption names what was trained and shown, e.g. the method, the seed
	// and the data ("Fly-CL, seed 1993, MNIST").
	Caption string
	// Labels name the classes of the rows and columns, in order.
	Labels []string
}

// Heatmaps draws one correlation heat map per panel side by side, with a
// shared colour scale from -1 to 1 shown by a colour bar, the class labels
// on the axes, and the caption on top.
func Heatmaps(path string, titles []string, mats []*mat.Dense, info HeatmapInfo) error {
	if len(titles) != len(mats) || len(mats) == 0 {
		return fmt.Errorf("heat map: %d titles for %d matrices", len(titles), len(mats))
	}
	for i, m := range mats {
		r, c := m.Dims()
		if r != c || (info.Labels != nil && len(info.Labels) != r) {
			return fmt.Errorf("heat map %d: %d×%d matrix for %d labels", i, r, c, len(info.Labels))
		}
	}
	const side, bar, top = 3.2 * vg.Inch, 1.1 * vg.Inch, 0.35 * vg.Inch
	img := vgimg.New(vg.Length(len(mats))*side+bar, side+0.5*vg.Inch+top)
	dc := draw.New(img)
	pal := moreland.SmoothBlueRed()
	pal.SetMin(-1)
	pal.SetMax(1)
	cols := pal.Palette(64)
	if info.Caption != "" {
		sty := plot.New().Title.TextStyle
		sty.XAlign, sty.YAlign = draw.XCenter, draw.YTop
		dc.FillText(sty, vg.Point{X: dc.Max.X / 2, Y: dc.Max.Y - vg.Millimeter}, info.Caption)
	}
	panels := draw.Crop(dc, 0, -bar, 0, -top)
	tiles := draw.Tiles{Rows: 1, Cols: len(mats), PadX: vg.Millimeter, PadY: vg.Millimeter}
	for i, m := range mats {
		p := plot.New()
		p.Title.Text = titles[i]
		hm := plotter.NewHeatMap(heatGrid{m}, cols)
		hm.Min, hm.Max = -1, 1
		p.Add(hm)
		n, _ := m.Dims()
		var xt, yt []plot.Tick
		for j := 0; j < n; j++ {
			lab := strconv.Itoa(j)
			if info.Labels != nil {
				lab = info.Labels[j]
			}
			xt = append(xt, plot.Tick{Value: float64(j), Label: lab})
			yt = append(yt, plot.Tick{Value: float64(n - 1 - j), Label: lab})
		}
		p.X.Tick.Marker, p.Y.Tick.Marker = plot.ConstantTicks(xt), plot.ConstantTicks(yt)
		p.X.Label.Text = "class"
		if i == 0 {
			p.Y.Label.Text = "class"
		}
		p.X.Padding, p.Y.Padding = 0, 0
		p.Draw(tiles.At(panels, i, 0))
	}
	cb := plot.New()
	cb.Add(&plotter.ColorBar{ColorMap: pal, Vertical: true, Colors: 64})
	cb.HideX()
	cb.Y.Label.Text = "correlation r"
	cb.Title.Text = " "
	cb.Draw(draw.Crop(dc, vg.Length(len(mats))*side+0.15*vg.Inch, 0, 0.45*vg.Inch, -top-0.2*vg.Inch))
	c := vgimg.PngCanvas{Canvas: img}
	return atomicfile.WriteFile(path, func(wr io.Writer) error {
		_, err := c.WriteTo(wr)
		return err
	})
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
