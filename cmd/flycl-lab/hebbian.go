package main

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/flycl/flycl/cmd/internal/cli"
	"github.com/flycl/flycl/lab/analysis"
	"github.com/flycl/flycl/lab/report"
)

// hebbianFlags configure "flycl-lab hebbian".
type hebbianFlags struct {
	data          cli.DataFlags
	classes       int
	trainPerClass int
	passes, every int
	model         cli.ModelFlags
	out           string
}

func hebbianCmd() *cobra.Command {
	var f hebbianFlags
	c := &cobra.Command{
		Use:   "hebbian",
		Short: "Convergence of the paper's Hebbian rule to the ridge solution, on one task of the first classes",
		Long: `Teaches one task made of the first --classes classes (by label) to Fly-CL
(Cholesky solve) and to the Hebbian learner (flycl-hebbian: the same codes,
statistics and GCV λ, with the classifier updated by ΔC = η(S − GC − λC),
η = 1/(λmax(G) + λ)), and records every --every passes the Hebbian
classifier's distance to the ridge solution C* and its test accuracy.
Writes hebbian.json, hebbian-distance.png and hebbian-accuracy.png to --out.`,
		Example: `  flycl-lab hebbian --data mnist --classes 10 --train-per-class 500 --m 2000 --k 600 --lambdas 1e2,1e3,1e4,1e5 --passes 2000 --every 20`,
		RunE:    func(cmd *cobra.Command, args []string) error { return f.run(cmd) },
	}
	fs := c.Flags()
	fs.StringVar(&f.data.Train, "train", "", "training feature file (.npz)")
	fs.StringVar(&f.data.Test, "test", "", "test feature file (.npz)")
	fs.StringVar(&f.data.Data, "data", "", "built-in data set instead: mnist[:DIR] or fashion-mnist[:DIR] (raw pixels)")
	fs.IntVar(&f.classes, "classes", 10, "number of classes (the smallest labels)")
	fs.IntVar(&f.trainPerClass, "train-per-class", 500, "use the first N training samples of each class (0: all)")
	fs.IntVar(&f.passes, "passes", 1000, "Hebbian passes over the task's statistics")
	fs.IntVar(&f.every, "every", 10, "record distance and accuracy every N passes")
	f.model.Register(fs)
	fs.StringVar(&f.out, "out", "out/hebbian", "output directory")
	return c
}

func (f *hebbianFlags) run(cmd *cobra.Command) error {
	hs := analysis.HebbianSettings{Classes: f.classes, TrainPerClass: f.trainPerClass, Passes: f.passes, Every: f.every}
	if err := hs.Check(); err != nil {
		return err
	}
	train, test, desc, err := f.data.Load()
	if err != nil {
		return err
	}
	task, err := analysis.SelectTask(train, desc, f.classes, f.trainPerClass)
	if err != nil {
		return err
	}
	classes := task.Classes
	xt, yt := task.Subset(test)
	if len(yt) == 0 {
		return fmt.Errorf("%s: no test samples of classes %v", desc, classes)
	}
	cfg, err := f.model.Config()
	if err != nil {
		return err
	}
	if err := cli.CheckOut(f.out); err != nil {
		return err
	}
	curve, err := analysis.Hebbian(cmd.Context(), cfg, task.D, task.X, task.Y, xt, yt, f.passes, f.every)
	if err != nil {
		return err
	}
	if err := report.WriteJSON(filepath.Join(f.out, "hebbian.json"), curve); err != nil {
		return err
	}
	pts := make([]report.HebbianPoint, len(curve.Points))
	for i, p := range curve.Points {
		pts[i] = report.HebbianPoint{Pass: p.Pass, RelDist: p.RelDist, Accuracy: p.Accuracy}
	}
	name := f.data.Data // as the user gave it, not the resolved path
	if name == "" {
		name = f.data.Train
	}
	title := fmt.Sprintf("%s, %d classes", name, len(classes))
	if err := report.HebbianPlots(filepath.Join(f.out, "hebbian-distance.png"), filepath.Join(f.out, "hebbian-accuracy.png"), title, pts, curve.RidgeAccuracy); err != nil {
		return err
	}
	w := cmd.OutOrStdout()
	fmt.Fprintf(w, "%s: λ=%g, η=%.3g; ridge (Cholesky) accuracy %.2f%%\n", title, curve.Lambda, curve.Step, 100*curve.RidgeAccuracy)
	fmt.Fprintf(w, "%8s %14s %10s\n", "passes", "‖C−C*‖/‖C*‖", "accuracy")
	for i, p := range curve.Points {
		if i == len(curve.Points)-1 || p.Pass&(p.Pass-1) == 0 || p.Pass%(f.every*10) == 0 {
			fmt.Fprintf(w, "%8d %14.3e %9.2f%%\n", p.Pass, p.RelDist, 100*p.Accuracy)
		}
	}
	fmt.Fprintf(w, "(%s)\n", f.out)
	return nil
}
