package main

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/flycl/flycl/app/deploy"
	"github.com/flycl/flycl/app/store"
	"github.com/flycl/flycl/format/modelfile"
)

// parseShard parses "i/N" (0 <= i < N).
func parseShard(s string) (int, int, error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n <= 0 || i < 0 || i >= n {
		return 0, 0, fmt.Errorf("--shard %q: want i/N with 0 <= i < N (for example 0/4)", s)
	}
	return i, n, nil
}

// statsOptions are flycl stats' flags.
type statsOptions struct {
	in                       inputFlags
	mf                       modelFlags
	model, wFile, shard, out string
}

// AddFlags adds stats' flags to c.
func (o *statsOptions) AddFlags(c *cobra.Command) {
	o.in.register(c, "train")
	o.mf.register(c.Flags())
	c.Flags().StringVar(&o.model, "model", "", "take the configuration, W and backbone from this model file")
	c.Flags().StringVar(&o.wFile, "w", "", "projection W (.npz) instead of generating it from --w-seed")
	c.Flags().StringVar(&o.shard, "shard", "0/1", "which shard: i/N")
	c.Flags().StringVar(&o.out, "out", "", "statistics file to write")
}

func statsCmd() *cobra.Command {
	var o statsOptions
	c := &cobra.Command{
		Use:   "stats (--data SPEC | --features F.npz) --shard i/N --out part-i.stats [--model M.flycl | --m --p --k --w-seed --topk]",
		Short: "Compute the statistics of one shard of a task (for flycl merge, on any number of machines)",
		Long: `Computes, for shard i of N of the input (rows [i·n/N, (i+1)·n/N)), the exact
statistics Fly-CL learns from: G = Σ hᵀh (lower triangle) and S = Σ hᵀy in float64,
per-class counts and names, the sample identities, the configuration, W's
fingerprint and the backbone identity. Shards computed anywhere add up exactly:
"flycl merge part-*.stats --model M.flycl" learns the task from them.

The expansion is the model's (--model, which must exist) or given by the Fly-CL
flags (--m --p --k --w-seed --topk, or --w); every shard must use the same.
With --data and a backbone only the shard's images are extracted.`,
		Example: `  flycl stats --features train.npz --shard 0/2 --out part-0.stats --m 2000 --k 600
  flycl stats --data mnist --shard 3/7 --out part-3.stats
  flycl stats --data folder:photos --backbone squeezenet --shard 1/4 --out p1.stats --model cam.flycl`,
		Args: cobra.NoArgs,
		RunE: o.run,
	}
	o.AddFlags(c)
	return c
}

// run computes the statistics of one shard of the input (deploy.Model.ShardStats)
// for the model file's or the flags' expansion, and saves them.
func (o *statsOptions) run(cmd *cobra.Command, args []string) error {
	if o.out == "" {
		return fmt.Errorf("give --out FILE")
	}
	i, n, err := parseShard(o.shard)
	if err != nil {
		return err
	}
	var m *deploy.Model
	if o.model != "" {
		if m, err = store.Load(o.model); err != nil {
			return err
		}
		if err := o.mf.bound().AgreeModel(m.Model.Config()); err != nil {
			return err
		}
	}
	var mp *modelfile.Pipeline
	trained := false
	if m != nil {
		mp, trained = m.Pipeline, m.Model.Classes().Len() > 0
	}
	input, err := o.in.open(cmd, mp, trained, nil, true, true)
	if err != nil {
		return err
	}
	s, _, err := o.in.samples(cmd, input, mp, trained, i, n)
	if err != nil {
		return err
	}
	if m == nil {
		if m, err = o.mf.bound().NewModel(s.D, o.wFile, s.Pipeline); err != nil {
			return err
		}
	}
	t0 := time.Now()
	f, err := m.ShardStats(cmd.Context(), input, s, i, n)
	if err != nil {
		if o.model != "" {
			err = fmt.Errorf("%s: %w", o.model, err)
		}
		return err
	}
	if err := modelfile.SaveStats(o.out, f); err != nil {
		return err
	}
	fi, err := os.Stat(o.out)
	if err != nil {
		return fmt.Errorf("stats: saved %s but cannot stat it: %w", o.out, err)
	}
	fmt.Printf("statistics of shard %d/%d: %d samples, %d classes (%s), m=%d, %.2fs; %s, %s\n",
		i, n, f.Stats.N, len(f.Names), strings.Join(f.Names, ", "), f.Stats.M, time.Since(t0).Seconds(), o.out, size(fi.Size()))
	return nil
}

// mergeOptions are flycl merge's flags.
type mergeOptions struct {
	mf                modelFlags
	model, wFile, out string
	lambda            float64
	wait              waitFlag
	partial           bool
}

// AddFlags adds merge's flags to c.
func (o *mergeOptions) AddFlags(c *cobra.Command) {
	o.mf.register(c.Flags())
	c.Flags().StringVar(&o.model, "model", "", "model file to teach the task (created when absent)")
	c.Flags().StringVar(&o.wFile, "w", "", "projection W (.npz) when creating a model from statistics with an explicit W")
	c.Flags().StringVar(&o.out, "out", "", "write the merged statistics to this file instead")
	c.Flags().Float64Var(&o.lambda, "lambda", 0, "fixed λ (0: GCV on the merged statistics)")
	c.Flags().BoolVar(&o.partial, "partial", false, "merge a set that is not one whole split of one source (shards missing, or of different sources or shard counts)")
	o.wait.register(c)
}

func mergeCmd() *cobra.Command {
	var o mergeOptions
	c := &cobra.Command{
		Use:   "merge PART.stats... (--model M.flycl | --out MERGED.stats) [--partial]",
		Short: "Add up shard statistics and teach the task to a model (λ by GCV on the merged statistics)",
		Long: `Merges the statistics files of the shards of one task (flycl stats) and, with
--model, teaches the model the task: classes are matched by name, λ is chosen by GCV
computed exactly from the merged statistics (the primal form from G and S alone; or
on everything the model has learned with --gcv-scope all), and the classifier is
re-solved. The model file is created when absent (from the statistics'
configuration; --lambdas gives its grid) and saved atomically.

Parts with a different configuration, W or backbone, the same shard twice or
overlapping samples are refused. So is a set that is not one whole split of one
source: a shard missing (0/3 and 2/3 without 1/3), shards of two feature files or
data sets, or one source split two ways (0/3 with 1/2); the error names what is
missing or different. --partial merges such a set anyway, when that is what you
mean. The merge sums in float64 in a fixed binary tree over the shards, so the
result does not depend on the order of the files, nor on how merges are nested
when each intermediate file holds an aligned run of 2^l shards (0-1, 2-3, 0-3,
...): it is bit for bit what flycl-beam computes over the same shards. Across
different numbers of shards it agrees up to float64 rounding (below one float32
rounding of the model's G).

With --out the merged statistics are written instead. Merges can be nested: a
merged file records the shards it holds, so the intermediate merges need
--partial and the last one checks the whole set.`,
		Example: `  flycl merge part-*.stats --model m.flycl
  flycl merge part-0.stats part-1.stats --out half.stats --partial   # 2 of 4 shards
  flycl merge half.stats part-2.stats part-3.stats --model m.flycl`,
		Args: cobra.MinimumNArgs(1),
		RunE: o.run,
	}
	o.AddFlags(c)
	return c
}

// run merges the statistics files (modelfile.MergeFiles) and writes them,
// or teaches them to the model file (store.Store.Merge; created when
// absent: configflag.Flags.NewFromStats), and prints what it learned.
func (o *mergeOptions) run(cmd *cobra.Command, args []string) error {
	if (o.model == "") == (o.out == "") {
		return fmt.Errorf("give --model FILE (learn the task) or --out FILE (write the merged statistics)")
	}
	merged, incomplete, err := modelfile.MergeFiles(args...)
	if err != nil {
		return err
	}
	if incomplete != nil {
		if !o.partial {
			return fmt.Errorf("merge: %w (give --partial to merge them anyway)", incomplete)
		}
		fmt.Fprintf(os.Stderr, "warning: %v (merged anyway: --partial)\n", incomplete)
	}
	if o.out != "" {
		if err := modelfile.SaveStats(o.out, merged); err != nil {
			return err
		}
		fmt.Printf("merged %d files: %d samples, %d classes -> %s\n", len(args), merged.Stats.N, len(merged.Names), o.out)
		return nil
	}
	st, err := openModel(cmd, o.model, o.wait, args, &o.mf, true)
	if err != nil {
		return err
	}
	defer st.Close()
	if !st.Exists() { // else its configuration agrees with the flags (openModel: AgreeModel)
		m, err := o.mf.bound().NewFromStats(merged, o.wFile)
		if errors.Is(err, deploy.ErrNeedW) {
			return fmt.Errorf("%w: give it with --w to create %s", err, o.model)
		}
		if err != nil {
			return err
		}
		if err := st.Create(m); err != nil {
			return err
		}
	}
	t0 := time.Now()
	rec, err := st.Merge(cmd.Context(), merged, o.lambda)
	if err = warnNotRecorded(err); err != nil {
		return err
	}
	fmt.Printf("learned %d samples of %d classes from %d statistics files in %.2fs\n", merged.Stats.N, len(merged.Names), len(args), time.Since(t0).Seconds())
	if rec.GCV != nil {
		// The λ values scored: with --lambda-scale relative these are
		// the grid's multipliers times the statistics' scale, not
		// Config().Lambdas.
		grid := rec.Grid
		var b strings.Builder
		for gi, v := range rec.GCV {
			fmt.Fprintf(&b, " %g:%.6g", grid[gi], v)
		}
		fmt.Printf("GCV (%s):%s\n", rec.GCVScope, b.String())
	}
	fmt.Printf("lambda %g", rec.Lambda)
	if rec.RaisedFrom != 0 {
		fmt.Printf(" (raised from %g for a positive-definite factor)", rec.RaisedFrom)
	}
	fmt.Println()
	return st.View(func(m *deploy.Model) error {
		fmt.Printf("model %s: version %d, %d classes, %d samples\n", o.model, m.Model.Version(), m.Model.Classes().Len(), m.Model.Samples())
		return nil
	})
}
