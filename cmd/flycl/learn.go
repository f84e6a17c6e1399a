package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"time"

	"github.com/flycl/flycl/internal/flagbind"

	"github.com/spf13/cobra"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/deploy"
	"github.com/flycl/flycl/app/store"
	"github.com/flycl/flycl/format/modelfile"
	"github.com/flycl/flycl/reject"
	"github.com/flycl/flycl/ridge"
)

// learnOptions are flycl learn's flags.
type learnOptions struct {
	in                 inputFlags
	mf                 modelFlags
	model, wFile       string
	opt                deploy.LearnOptions
	wait               waitFlag
	keep               float64
	openScore          string
	journal, noJournal bool
}

// AddFlags adds learn's flags to c.
func (o *learnOptions) AddFlags(c *cobra.Command) {
	o.in.register(c, "train")
	c.Flags().BoolVar(&o.in.skipBad, "skip-bad", false, "learn the images that can be read and list those that cannot (default: refuse, naming every one)")
	o.mf.register(c.Flags())
	c.Flags().StringVar(&o.model, "model", "", "model file (created when absent)")
	o.wait.register(c)
	c.Flags().BoolVar(&o.journal, "journal", true, "keep a journal beside the model (FILE.journal) holding the features of its learns, for flycl undo, flycl history and forget without the data (the default; its history is bounded as serve's is)")
	c.Flags().BoolVar(&o.noJournal, "no-journal", false, "start no journal for a model that has none (flycl undo then cannot take its learns back; a model with a journal keeps adding to it)")
	c.Flags().StringVar(&o.wFile, "w", "", "create the model with this projection W (.npz from flycl export-w or another implementation)")
	c.Flags().BoolVar(&o.opt.Online, "online", false, "learn in mini-batches (re-solving after each)")
	c.Flags().IntVar(&o.opt.Batch, "online-batch", deploy.DefaultOnlineBatch, "mini-batch size with --online")
	c.Flags().Float64Var(&o.opt.Lambda, "lambda", 0, "fixed λ (0: GCV on the task, or on each mini-batch with --online)")
	c.Flags().Float64Var(&o.keep, "unknown-keep", reject.DefaultKeep, "share of the learned samples' leave-one-out scores the \"unknown\" threshold keeps (the model keeps it for later learns; docs/UNKNOWN.md)")
	c.Flags().StringVar(&o.openScore, "unknown-score", "", "the open-set score the \"unknown\" threshold applies to from this learn on: top, margin, energy or top+cosine (default: the model's, or top+cosine for a new model; docs/UNKNOWN.md)")
	c.Flags().TextVar(&o.opt.LambdaPolicy, "lambda-policy", flycl.LambdaGCV, "without --lambda: "+flycl.LambdaPolicyHelp)
}

func learnCmd() *cobra.Command {
	var o learnOptions
	c := &cobra.Command{
		Use:   "learn --model FILE (--data KIND:PATH [--backbone B] | --features F.npz)",
		Short: "Teach a model file new classes (or more samples of known ones); creates it when absent",
		Long: `Learns the classes in the input as one task (λ by GCV on it, as in the paper),
or with --online in mini-batches. Samples of classes the model knows already add to
their statistics. The model file is created when absent (with --m --p --k --lambdas
...), and saved atomically: a failure, or a backbone, dimension or W that does not
match the model, leaves the file untouched.

Class names come from the data set (folder names) or the feature file's
class_names (or --class-names).`,
		Example: `  flycl learn --model cam.flycl --data folder:photos --backbone squeezenet
  flycl learn --model cam.flycl --data folder:more-photos            # the model's backbone
  flycl learn --model f.flycl --features train.npz --m 2000 --k 600 --lambdas 1,10,100`,
		RunE: o.run,
	}
	o.AddFlags(c)
	c.MarkFlagsMutuallyExclusive("journal", "no-journal")
	perInputDefaults(c)
	return c
}

// run opens the model file (store.Open), loads the input and teaches it
// (store.Store.LearnNew: the model created when absent,
// configflag.Flags.NewModelAhead, its W generated while the images are
// extracted: store.Store.Extracting), and prints what the learn did.
func (o *learnOptions) run(cmd *cobra.Command, args []string) error {
	if o.model == "" {
		return fmt.Errorf("give --model FILE")
	}
	if !o.opt.Online && cmd.Flags().Changed("online-batch") {
		return fmt.Errorf("--online-batch needs --online")
	}
	if o.opt.Online && o.opt.Batch < 1 {
		return flycl.Input(fmt.Errorf("--online-batch %d: a mini-batch holds at least 1 sample", o.opt.Batch))
	}
	if l := o.opt.Lambda; !(l >= 0) || l > math.MaxFloat32 {
		return flycl.Input(fmt.Errorf("--lambda %g: λ must be positive and finite, at most %g (or 0: GCV)", l, math.MaxFloat32))
	}
	// One writer at a time: the lock is held from the read of the model
	// to its save (store.Open).
	st, err := openModel(cmd, o.model, o.wait, args, &o.mf, o.journal && !o.noJournal)
	if err != nil {
		return err
	}
	defer st.Close()
	n := store.NewModel{W: o.wFile, Make: o.mf.bound().NewModelAhead, Start: o.mf.bound().StartNewModel}
	defer n.Stop()
	if err := st.CheckNew(n); err != nil {
		return learnFlagNames(err)
	}
	var mp *modelfile.Pipeline
	learned := false // the model exists and has classes
	st.View(func(m *deploy.Model) error {
		if m != nil {
			mp, learned = m.Pipeline, m.Model.Classes().Len() > 0
		}
		return nil
	})
	if len(args) > 0 {
		return fmt.Errorf("learn takes no image arguments (images need labels: --data folder:DIR reads DIR/<class>/<image>)")
	}
	s, err := o.in.load(cmd, mp, learned, nil, true, func(d int) { st.Extracting(cmd.Context(), &n, d) })
	if err != nil {
		return err
	}
	r := store.Recalibration{Keep: o.keep, KeepGiven: cmd.Flags().Changed("unknown-keep"),
		Score: o.openScore, ScoreGiven: cmd.Flags().Changed("unknown-score")}
	l, err := st.LearnNew(cmd.Context(), store.LearnData{X: s.x, D: s.d, Names: s.names, Pipeline: s.pipeline, Source: s.desc}, n, o.opt, r.Prepare())
	if err = warnNotRecorded(learnFlagNames(err)); err != nil {
		return err
	}
	printLearn(os.Stdout, l.LearnResult, s.desc, l.Learn, l.Save)
	fi, err := os.Stat(o.model)
	if err != nil {
		return fmt.Errorf("learn: saved %s but cannot stat it: %w", o.model, err)
	}
	return st.View(func(m *deploy.Model) error {
		fmt.Printf("model %s: version %d, %d classes, %d samples, %s\n", o.model, m.Model.Version(), m.Model.Classes().Len(), m.Model.Samples(), size(fi.Size()))
		return nil
	})
}

// learnFlagNames makes a *store.OptionError in err name flags (the flag
// tags of store.NewModel and store.Recalibration).
func learnFlagNames(err error) error {
	return namedByFlags(err, flagbind.Names(store.NewModel{}, store.Recalibration{}))
}

func printLearn(w io.Writer, r *deploy.LearnResult, desc string, learn, save time.Duration) {
	fmt.Fprintf(w, "learned %d samples from %s in %d step(s)\n", r.Samples, desc, len(r.Steps))
	if len(r.Added) > 0 {
		fmt.Fprintf(w, "classes added (%d): %s\n", len(r.Added), strings.Join(r.Added, ", "))
	}
	if len(r.Known) > 0 {
		fmt.Fprintf(w, "classes extended (%d): %s\n", len(r.Known), strings.Join(r.Known, ", "))
	}
	last := r.Steps[len(r.Steps)-1]
	how := "GCV"
	switch {
	case last.GCV == nil:
		how = "fixed"
	case last.Limit == ridge.LimitInterpolating:
		how = "GCV over every λ > 0: the interpolating limit, GCV still falling at the floor of its search"
	case last.Limit == ridge.LimitConstant:
		how = "GCV over every λ > 0: the constant limit, GCV still falling at the ceiling of its search"
	case last.Continuous:
		how = "GCV over every λ > 0"
	}
	if r.LambdaRequested > 0 && r.Lambda != r.LambdaRequested {
		how = fmt.Sprintf("fixed, requested %g", r.LambdaRequested)
	}
	fmt.Fprintf(w, "lambda %g (%s)\n", r.Lambda, how)
	fmt.Fprintln(w, r.Rejection) // the rejection state in one line (reject.Rule.String)
	// a raised λ (requested, or chosen by GCV): deploy.LambdaWarnings
	for _, s := range r.Warnings {
		fmt.Fprintf(w, "warning: %s\n", s)
	}
	st := r.Stages
	fmt.Fprintf(w, "time: projection %.3fs, top-k %.3fs, gram %.3fs, gcv %.3fs, factor %.3fs, solve %.3fs; learn %.3fs, save %.3fs\n",
		st.Projection.Seconds(), st.TopK.Seconds(), st.Gram.Seconds(), st.GCV.Seconds(), st.Factor.Seconds(), st.Solve.Seconds(),
		learn.Seconds(), save.Seconds())
}

func size(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
