package main

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/flycl/flycl/cmd/internal/cli"
	"github.com/flycl/flycl/lab/analysis"
	"github.com/flycl/flycl/lab/report"
)

func analyzeCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "analyze",
		Short: "Analyses of Fly-CL's components (the paper's appendix)",
	}
	c.AddCommand(analyzeProjectionCmd())
	return c
}

type analyzeProjectionFlags struct {
	data  cli.DataFlags
	pairs int
	model cli.ModelFlags
	out   string
}

func analyzeProjectionCmd() *cobra.Command {
	var f analyzeProjectionFlags
	c := &cobra.Command{
		Use:   "projection",
		Short: "Johnson–Lindenstrauss distortion of the sparse W vs a dense Gaussian W, before and after top-k",
		Long: `Draws --pairs random pairs of training samples and computes, for the sparse W
(--m rows, --p non-zeros per row) and a dense Gaussian W of the same seed,
before and after top-k (--k), the ratio ‖f(x) − f(y)‖ / (√(m·p/d)·‖x − y‖).
Before top-k its mean square is 1 by construction; its spread is the
distortion. Writes projection.json and projection.png (histograms) to --out.`,
		Example: `  flycl-lab analyze projection --data mnist --pairs 5000
  flycl-lab analyze projection --train out/features/cifar10-squeezenet/train.npz --p 100`,
		RunE: func(cmd *cobra.Command, args []string) error { return f.run(cmd) },
	}
	fs := c.Flags()
	fs.StringVar(&f.data.Train, "train", "", "training feature file (.npz)")
	fs.StringVar(&f.data.Data, "data", "", "built-in data set instead: mnist[:DIR] or fashion-mnist[:DIR] (raw pixels)")
	fs.IntVar(&f.pairs, "pairs", 5000, "number of random pairs")
	f.model.Register(fs)
	fs.StringVar(&f.out, "out", "out/projection", "output directory")
	return c
}

func (f *analyzeProjectionFlags) run(cmd *cobra.Command) error {
	if f.pairs < 1 {
		return fmt.Errorf("--pairs %d: need at least 1", f.pairs)
	}
	if f.data.Train != "" && f.data.Test == "" {
		f.data.Test = f.data.Train // only the training split is used
	}
	train, _, _, err := f.data.Load()
	if err != nil {
		return err
	}
	cfg, err := f.model.Config()
	if err != nil {
		return err
	}
	if err := f.model.Validate(cfg, train.D); err != nil {
		return err
	}
	if err := cli.CheckOut(f.out); err != nil {
		return err
	}
	res, err := analysis.ProjectionDistortion(cmd.Context(), train.X, train.D, cfg.M, cfg.P, cfg.K, cfg.TopK, f.pairs, cfg.Seed)
	if err != nil {
		return err
	}
	if err := report.WriteJSON(filepath.Join(f.out, "projection.json"), res); err != nil {
		return err
	}
	name := f.data.Data
	if name == "" {
		name = f.data.Train
	}
	var names []string
	var samples [][]float64
	for _, r := range res {
		names = append(names, r.Name)
		samples = append(samples, r.Ratios)
	}
	title := fmt.Sprintf("JL distortion, %s (d=%d, m=%d, %d pairs)", name, train.D, cfg.M, f.pairs)
	if err := report.Histograms(filepath.Join(f.out, "projection.png"), title, "‖f(x) − f(y)‖ / (√(mp/d)·‖x − y‖)", names, samples, 60); err != nil {
		return err
	}
	w := cmd.OutOrStdout()
	fmt.Fprintf(w, "%s\n| map | mean | std | RMS | 5%% | median | 95%% | (95%%−5%%)/median |\n|---|---:|---:|---:|---:|---:|---:|---:|\n", title)
	for _, r := range res {
		fmt.Fprintf(w, "| %s | %.4f | %.4f | %.4f | %.4f | %.4f | %.4f | %.4f |\n", r.Name, r.Mean, r.Std, r.RMS, r.P05, r.P50, r.P95, r.Spread)
	}
	return nil
}
