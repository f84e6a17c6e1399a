package main

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/flycl/flycl/app/configflag"
	"github.com/flycl/flycl/app/deploy"
	"github.com/flycl/flycl/cmd/internal/cli"
	"github.com/flycl/flycl/format/features"
	"github.com/flycl/flycl/format/modelfile"
	"github.com/flycl/flycl/lab/experiment"
	"github.com/flycl/flycl/lab/methods"
	"github.com/flycl/flycl/lab/report"
	"github.com/flycl/flycl/vision/dataset"
	"github.com/flycl/flycl/vision/extract"
)

// runFlags are the flags shared by run and sweep.
type runFlags struct {
	data          cli.DataFlags
	ext           cli.ExtractFlags
	methods       string
	seeds         string
	order         string
	tasks         int
	init, inc     int
	trainPerClass int
	out           string
	config        string
	model         cli.ModelFlags
	quiet         bool
	onlineBatch   int
	onlineLambda  float64
	hebbianPasses int
	wFile         string
}

func (f *runFlags) register(c *cobra.Command) {
	fs := c.Flags()
	f.ext.Register(c)
	fs.StringVar(&f.data.Train, "train", "", "training feature file (.npz with features, labels)")
	fs.StringVar(&f.data.Test, "test", "", "test feature file (.npz with features, labels)")
	fs.StringVar(&f.data.Data, "data", "", "data set instead of feature files: any of "+strings.Join(dataset.Kinds, ", ")+" as kind:path, through --backbone (default "+extract.DefaultBackbone+"); without --backbone, mnist[:DIR] and fashion-mnist[:DIR] are learned as raw pixels")
	fs.StringVar(&f.methods, "methods", "flycl", methodsHelp())
	fs.StringVar(&f.seeds, "seeds", "1993", "comma-separated seeds (one run per seed)")
	fs.StringVar(&f.order, "order", "flycl", "class order: flycl (Python random.sample), pilot (numpy permutation), none, or a comma-separated list")
	fs.IntVar(&f.tasks, "tasks", 10, "number of equal tasks")
	fs.IntVar(&f.init, "init", 0, "classes in the first task (with --increment; overrides --tasks)")
	fs.IntVar(&f.inc, "increment", 0, "classes in every later task")
	fs.IntVar(&f.trainPerClass, "train-per-class", 0, "keep only the first N training samples of each class (0: all)")
	fs.StringVar(&f.out, "out", "out/run", "output directory")
	fs.StringVar(&f.config, "config", "", "JSON file of flag values ({\"tasks\": 5, \"seeds\": \"1,2\"}); flags given on the command line win")
	f.model.Register(fs)
	fs.BoolVar(&f.quiet, "quiet", false, "print nothing but errors (no progress, warnings or table; the files are written as usual)")
	fs.StringVar(&f.wFile, "w", "", "use this projection W (.npz from flycl-lab export-w or another implementation: indices/values/shape or a dense W) instead of generating it")
	fs.IntVar(&f.onlineBatch, "online-batch", deploy.DefaultOnlineBatch, "mini-batch size of the flycl-online method")
	fs.Float64Var(&f.onlineLambda, "online-lambda", 0, "fixed λ of flycl-online (0: GCV on every mini-batch)")
	fs.IntVar(&f.hebbianPasses, "hebbian-passes", 100, "Hebbian-rule passes per task of the flycl-hebbian method")
}

// applyConfig sets every flag named in the settings file (JSON, read by
// configflag.ReadSettings) that was not given on the command line.
func applyConfig(fs *pflag.FlagSet, path string) error {
	if path == "" {
		return nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	settings, err := configflag.ReadSettings(b)
	if err != nil {
		return fmt.Errorf("config %s: %w", path, err)
	}
	for _, s := range settings {
		fl := fs.Lookup(s.Name)
		if fl == nil {
			return fmt.Errorf("config %s: unknown setting %q", path, s.Name)
		}
		if fl.Changed {
			continue
		}
		v, err := s.Text()
		if err == nil {
			err = fs.Set(s.Name, v)
		}
		if err != nil {
			return fmt.Errorf("config %s: %s: %w", path, s.Name, err)
		}
	}
	return nil
}

// load returns the train and test features: from feature files, from
// raw pixels, or extracted with --backbone from an image data set.
func (f *runFlags) load(cmd *cobra.Command) (train, test *features.Set, desc string, err error) {
	if f.ext.Backbone == "" && f.data.Data != "" && f.data.Train == "" && f.data.Test == "" {
		// images (not mnist/fashion-mnist pixels) go through the default backbone
		if s, err := f.data.Spec(); err == nil && !s.Grey() {
			f.ext.Backbone = extract.DefaultBackbone
		}
	}
	if f.ext.Backbone == "" {
		for _, name := range []string{"precision", "calib", "calib-method"} {
			if fl := cmd.Flags().Lookup(name); fl != nil && fl.Changed {
				return nil, nil, "", fmt.Errorf("--%s applies to a backbone: give --backbone and --data", name)
			}
		}
		return f.data.Load()
	}
	if f.data.Data == "" {
		return nil, nil, "", fmt.Errorf("--backbone needs --data kind:path")
	}
	spec, err := f.data.Spec()
	if err != nil {
		return nil, nil, "", err
	}
	if train, err = f.ext.Features(cmd, spec, "train", f.quiet); err != nil {
		return nil, nil, "", err
	}
	if test, err = f.ext.Features(cmd, spec, "test", f.quiet); err != nil {
		return nil, nil, "", err
	}
	return train, test, fmt.Sprintf("%s features of %s", f.ext.Backbone, f.data.Data), nil
}

// options checks the flags and resolves the one configuration that every
// method built on Fly-CL uses: the model flags, with m and p taken from
// the W of --w when it is given (and that W itself).
func (f *runFlags) options(fs *pflag.FlagSet) (methods.Options, error) {
	if err := f.settings(fs).Check(); err != nil {
		return methods.Options{}, err
	}
	opts := methods.Options{OnlineBatch: f.onlineBatch, OnlineLambda: f.onlineLambda, HebbianPasses: f.hebbianPasses}
	if err := opts.Check(); err != nil {
		return opts, err
	}
	var err error
	if opts.FlyCL, err = f.model.Config(); err != nil {
		return opts, err
	}
	if f.wFile != "" {
		w, err := modelfile.ImportProjection(f.wFile)
		if err != nil {
			return opts, fmt.Errorf("--w: %w", err)
		}
		return opts, opts.UseW(w, f.wFile)
	}
	return opts, nil
}

// settings are the protocol flags as experiment.ProtocolSettings.
func (f *runFlags) settings(fs *pflag.FlagSet) experiment.ProtocolSettings {
	return experiment.ProtocolSettings{
		Tasks: f.tasks, Init: f.init, Increment: f.inc, TrainPerClass: f.trainPerClass,
		InitGiven: fs.Changed("init"), IncrementGiven: fs.Changed("increment"),
		Seeds: f.seeds, Order: f.order,
	}
}

// runProgress returns the runner's progress callback (nil when quiet).
func runProgress(quiet bool) func(experiment.Event) {
	if quiet {
		return nil
	}
	p := cli.NewProgress(quiet, 1)
	return func(e experiment.Event) {
		acc := "n/a (no test samples yet)"
		if !math.IsNaN(e.Acc) {
			acc = fmt.Sprintf("%.2f%%", 100*e.Acc)
		}
		p.Update(e.Step, e.Steps, fmt.Sprintf("%s seed %d task %d/%d: A_t %s, tau_post %.2fs", e.Method, e.Seed, e.Task, e.Of, acc, e.TauPost))
	}
}

// runOptions are flycl-lab run's flags.
type runOptions struct {
	runFlags
	heatmap bool
}

// AddFlags adds run's flags to c.
func (o *runOptions) AddFlags(c *cobra.Command) {
	o.register(c)
	c.Flags().BoolVar(&o.heatmap, "heatmap", true, "draw the prototype-correlation heat maps (needs Fly-CL among the methods)")
}

func runCmd() *cobra.Command {
	var o runOptions
	c := &cobra.Command{
		Use:   "run",
		Short: "Run the class-incremental protocol for methods × seeds and write tables and plots",
		Long: `Runs the class-incremental protocol on feature files (or a built-in data set)
for every method and seed, and writes to --out:

  result.json  every run: class order, accuracy matrix, times, memory, summary
  result.csv   one row per method, seed and task
  table.md     the paper-style table (mean ± std over seeds)
  curves.png   A_t per task for every method
  heatmap.png  correlation of 10 class prototypes after extraction, after
               projection + top-k and after ridge (Fly-CL, first seed)

A_t is the mean of per-task accuracies, as in the reference code; the pooled
top-1 over all seen test samples is reported alongside.`,
		Example: `  flycl-lab run --data mnist --tasks 5 --seeds 1993,1994,1995 --train-per-class 1000
  flycl-lab run --train cifar100_train.npz --test cifar100_test.npz --tasks 10 --order flycl --seeds 1993`,
		RunE: o.run,
	}
	o.AddFlags(c)
	return c
}

// checker is a library's run description (methods.Experiment,
// sweep.Sweep) that checks itself before any data is read.
type checker interface{ Check() error }

// begin is the start that run and sweep share: the settings file under
// the flags, the methods' options, the library's description of the run
// (made by describe, then checked), the output folder, and the features.
func (f *runFlags) begin(cmd *cobra.Command, describe func(methods.Options) checker) (train, test *features.Set, desc string, err error) {
	if err := applyConfig(cmd.Flags(), f.config); err != nil {
		return nil, nil, "", err
	}
	opts, err := f.options(cmd.Flags())
	if err != nil {
		return nil, nil, "", err
	}
	if err := describe(opts).Check(); err != nil {
		return nil, nil, "", err
	}
	if err := cli.CheckOut(f.out); err != nil {
		return nil, nil, "", err
	}
	return f.load(cmd)
}

// run resolves the flags into a methods.Experiment, checks it, loads the
// features, runs it (methods.Experiment.Run) and writes and prints its
// results.
func (o *runOptions) run(cmd *cobra.Command, args []string) error {
	var e methods.Experiment
	train, test, desc, err := o.begin(cmd, func(opts methods.Options) checker {
		e = methods.Experiment{Methods: o.methods, Options: opts, Protocol: o.settings(cmd.Flags()), Heatmap: o.heatmap}
		return e
	})
	if err != nil {
		return err
	}
	if e.Inputs, err = o.inputs(); err != nil {
		return err
	}
	e.Desc = desc
	if !o.quiet {
		e.Start = func() {
			fmt.Fprintf(os.Stderr, "data: %s: %d train / %d test samples, d=%d, %d classes\n", desc, train.N, test.N, train.D, len(train.Classes()))
		}
	}
	out, err := e.Run(cmd.Context(), train, test, experiment.Hooks{Progress: runProgress(o.quiet), Warn: warner(o.quiet)})
	var de *methods.DimensionError
	if errors.As(err, &de) {
		return o.model.Explain(de.Config, de.Err)
	}
	if err != nil {
		return err
	}
	res := out.Result
	sums, err := report.WriteAll(o.out, res)
	if err != nil {
		return err
	}
	extra := ""
	if protos := out.Prototypes; protos != nil && protos.Stages != nil {
		heat := protos.Stages
		caption := fmt.Sprintf("%s, seed %d, the first %d classes in arrival order; data: %s", protos.Method, protos.Seed, len(heat.Classes), shorten(res.Config.DataName(), 50))
		if err := report.WriteHeatmap(o.out, heat, caption); err != nil {
			return err
		}
		extra = ",heatmap.png,heatmap.json"
	}
	if o.quiet {
		return nil
	}
	report.Table(os.Stdout, res, sums)
	fmt.Fprintf(os.Stderr, "wrote %s/{result.json,result.csv,table.md,curves.png%s} in %.1fs\n", o.out, extra, res.Seconds)
	return nil
}
