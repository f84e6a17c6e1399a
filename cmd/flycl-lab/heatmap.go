package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/flycl/flycl/cmd/internal/cli"
	"github.com/flycl/flycl/lab/analysis"
	"github.com/flycl/flycl/lab/report"
)

// heatmapFlags configure "flycl-lab heatmap".
type heatmapFlags struct {
	data          cli.DataFlags
	classes       int
	trainPerClass int
	center        bool
	model         cli.ModelFlags
	out           string
}

func heatmapCmd() *cobra.Command {
	var f heatmapFlags
	c := &cobra.Command{
		Use:   "heatmap",
		Short: "Prototype correlations at each stage of Fly-CL (the paper's Figure 3) for one task of the first classes",
		Long: `Teaches Fly-CL one task made of the first --classes classes (by label) of the
training features and writes heatmap.png and heatmap.json to --out: the
Pearson correlations between class prototypes (mean vectors) of the features,
of the codes after projection and top-k, and of the ridge outputs, with the
mean |r| off the diagonal of each printed.

--center subtracts the mean feature of those training samples first (the
data the model learns, so nothing from outside the task is used): it shows
how much of the correlation comes from the offset that non-negative (ReLU)
features share.`,
		Example: `  flycl-lab heatmap --train out/features/cifar10-squeezenet/train.npz --lambdas 1e4,1e5,1e6,1e7,1e8,1e9
  flycl-lab heatmap --data mnist --center --lambdas 1e-2,1,100,1e4,1e6`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.run(cmd)
		},
	}
	fs := c.Flags()
	fs.StringVar(&f.data.Train, "train", "", "training feature file (.npz)")
	fs.StringVar(&f.data.Data, "data", "", "built-in data set instead: mnist[:DIR] or fashion-mnist[:DIR] (raw pixels)")
	fs.IntVar(&f.classes, "classes", 10, "number of classes (the smallest labels)")
	fs.IntVar(&f.trainPerClass, "train-per-class", 1000, "use the first N training samples of each class (0: all)")
	fs.BoolVar(&f.center, "center", false, "subtract the mean training feature before learning")
	f.model.Register(fs)
	fs.StringVar(&f.out, "out", "out/heatmap", "output directory")
	return c
}

func (f *heatmapFlags) run(cmd *cobra.Command) error {
	if f.data.Train != "" && f.data.Test == "" {
		f.data.Test = f.data.Train // only the training split is used
	}
	if err := cli.CheckOut(f.out); err != nil {
		return err
	}
	train, _, desc, err := f.data.Load()
	if err != nil {
		return err
	}
	if f.data.Train != "" {
		desc = f.data.Train
	}
	task, err := analysis.SelectTask(train, desc, f.classes, f.trainPerClass)
	if err != nil {
		return err
	}
	classes := task.Classes
	cfg, err := f.model.Config()
	if err != nil {
		return err
	}
	if err := f.model.Validate(cfg, train.D); err != nil {
		return err
	}
	st, lambda, err := analysis.Heatmap(cmd.Context(), cfg, task, f.center)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(f.out, 0o755); err != nil {
		return err
	}
	centred := ""
	if f.center {
		centred = ", centred features"
	}
	caption := fmt.Sprintf("Fly-CL trained on one task of %d classes (≤%d samples each%s), W seed %d; %s", len(classes), f.trainPerClass, centred, cfg.Seed, shorten(desc, 50))
	if f.trainPerClass == 0 {
		caption = fmt.Sprintf("Fly-CL trained on one task of %d classes (all samples%s), W seed %d; %s", len(classes), centred, cfg.Seed, shorten(desc, 50))
	}
	if err := report.WriteHeatmap(f.out, st, caption); err != nil {
		return err
	}
	centered := ""
	if f.center {
		centered = ", centred"
	}
	fmt.Fprintf(cmd.OutOrStdout(), "%s, %d classes × ≤%d samples%s, λ=%g: mean |r| features %.3f, projection+top-k %.3f, ridge %.3f (%s/heatmap.png)\n",
		desc, len(classes), f.trainPerClass, centered, lambda, st.MeanAbsOD[0], st.MeanAbsOD[1], st.MeanAbsOD[2], f.out)
	return nil
}
