package sweep

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/format/features"
	"github.com/flycl/flycl/lab/experiment"
	"github.com/flycl/flycl/lab/methods"
	"github.com/flycl/flycl/lab/report"
)

// Params are the hyper-parameters a sweep can vary.
var Params = []string{"m", "p", "k"}

// Point is the outcome of one value.
type Point struct {
	Value    int
	Config   flycl.Config // the configuration run (k may be lowered to m, see With)
	Summary  report.Summary
	Warnings int // warnings of the runs (e.g. λ at a grid edge)
}

// With returns cfg with param set to v, checked (flycl.Config.Check).
// When m is swept below k, k is lowered to m (the largest top-k that
// exists); the table shows the k used.
func With(cfg flycl.Config, param string, v int) (flycl.Config, error) {
	switch param {
	case "m":
		cfg.M = v
		cfg.K = min(cfg.K, v)
	case "p":
		cfg.P = v
	case "k":
		cfg.K = v
	default:
		return cfg, fmt.Errorf("sweep: parameter %q: want m, p or k", param)
	}
	if err := cfg.Check(); err != nil {
		return cfg, fmt.Errorf("sweep: %w", err)
	}
	return cfg, nil
}

// Run runs Fly-CL (with base's configuration and W, param changed) for
// every value.
func Run(ctx context.Context, train, test *features.Set, base methods.Options, param string, values []int, p experiment.Protocol, hooks experiment.Hooks) ([]Point, error) {
	var pts []Point
	for _, v := range values {
		o := base
		var err error
		if o.FlyCL, err = With(base.FlyCL, param, v); err != nil {
			return nil, err
		}
		ms, err := methods.Parse("flycl", o)
		if err != nil {
			return nil, err
		}
		ms[0].Name = fmt.Sprintf("Fly-CL %s=%d", param, v)
		res, err := experiment.Execute(ctx, train, test, ms, p, hooks)
		if err != nil {
			return nil, err
		}
		pts = append(pts, Point{Value: v, Config: o.FlyCL, Summary: report.Summarize(res)[0], Warnings: len(res.Warnings())})
	}
	return pts, nil
}

// Table writes the Markdown table of a sweep over param on the data desc
// (report.SweepTable): one row per value with the m, p and k run.
func Table(w io.Writer, param, desc string, pts []Point) error {
	rows := make([]report.SweepRow, len(pts))
	for i, pt := range pts {
		rows[i] = report.SweepRow{M: pt.Config.M, P: pt.Config.P, K: pt.Config.K, Summary: pt.Summary, Warnings: pt.Warnings}
	}
	return report.SweepTable(w, param, desc, rows)
}

// Save writes sweep_<param>.md, .json and .png to dir, each atomically.
func Save(dir, param, desc string, pts []Point) error {
	base := filepath.Join(dir, "sweep_"+param)
	var b strings.Builder
	if err := Table(&b, param, desc, pts); err != nil {
		return err
	}
	if err := report.WriteText(base+".md", b.String()); err != nil {
		return err
	}
	xs := make([]float64, len(pts))
	sums := make([]report.Summary, len(pts))
	for i, pt := range pts {
		xs[i], sums[i] = float64(pt.Value), pt.Summary
	}
	if err := report.WriteJSON(base+".json", sums); err != nil {
		return err
	}
	return report.Sweep(base+".png", param, xs, sums)
}
