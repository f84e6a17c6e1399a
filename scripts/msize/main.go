// Command msize is the Go half of scripts/m-size-table: it splits a
// feature file into the tasks of the class-incremental protocol, and it
// times single-row predicts of a model file through flycl.Predictor.
//
//	msize split TRAIN.npz SEED TASKS OUTDIR
//	msize predict MODEL TEST.npz N
//
// split orders the classes of TRAIN.npz by the Fly-CL reference code's
// convention for SEED (protocol.OrderFlyCL, as `flycl-lab run --order flycl`)
// and writes OUTDIR/task1.npz ... OUTDIR/taskTASKS.npz, each with the
// samples of that task's classes (labels and class names unchanged), for
// one `flycl learn` per task, and prints the feature dimension d.
//
// predict loads MODEL (modelfile.Load, as flycl predict and flycl serve
// do), then scores N single rows of TEST.npz one call at a time with
// Predictor.Scores (features → class scores: W·x, top-k, C·h), rows
// spread over the file (row i·7919 mod N), after 50
// unmeasured warm-up calls, and prints one line:
//
//	load_s=… p50_us=… p90_us=… p99_us=… top1=…
//
// top1 is the accuracy of those N predicts (a check that the model is the
// one that was learned).
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/flycl/flycl/format/features"
	"github.com/flycl/flycl/format/modelfile"
	"github.com/flycl/flycl/lab/protocol"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "msize:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		return errors.New("usage: msize split TRAIN.npz SEED TASKS OUTDIR | msize predict MODEL TEST.npz N")
	}
	switch args[0] {
	case "split":
		if len(args) != 5 {
			return errors.New("usage: msize split TRAIN.npz SEED TASKS OUTDIR")
		}
		seed, err := strconv.ParseInt(args[2], 10, 64)
		if err != nil {
			return fmt.Errorf("split: seed %q: %w", args[2], err)
		}
		tasks, err := strconv.Atoi(args[3])
		if err != nil {
			return fmt.Errorf("split: tasks %q: %w", args[3], err)
		}
		return split(args[1], seed, tasks, args[4])
	case "predict":
		if len(args) != 4 {
			return errors.New("usage: msize predict MODEL TEST.npz N")
		}
		n, err := strconv.Atoi(args[3])
		if err != nil || n <= 0 {
			return fmt.Errorf("predict: N %q is not a positive integer", args[3])
		}
		return predict(args[1], args[2], n)
	}
	return fmt.Errorf("unknown command %q", args[0])
}

func split(path string, seed int64, tasks int, dir string) error {
	s, err := features.Load(path)
	if err != nil {
		return err
	}
	c := slices.Max(s.Labels) + 1
	order, err := protocol.ClassOrder(protocol.OrderFlyCL, c, seed)
	if err != nil {
		return err
	}
	groups, err := protocol.EqualTasks(order, tasks)
	if err != nil {
		return err
	}
	for t, classes := range groups {
		out := &features.Set{D: s.D, ClassNames: s.ClassNames, Pipeline: s.Pipeline}
		for i, l := range s.Labels {
			if slices.Contains(classes, l) {
				out.X = append(out.X, s.Row(i)...)
				out.Labels = append(out.Labels, l)
				out.N++
			}
		}
		if err := features.Save(filepath.Join(dir, fmt.Sprintf("task%d.npz", t+1)), out); err != nil {
			return err
		}
	}
	fmt.Println(s.D)
	return nil
}

func predict(modelPath, testPath string, n int) error {
	t0 := time.Now()
	f, err := modelfile.Load(modelPath)
	if err != nil {
		return err
	}
	p := f.Snapshot.Predictor()
	load := time.Since(t0)
	test, err := features.Load(testPath)
	if err != nil {
		return err
	}
	if test.D != p.InputDim() {
		return fmt.Errorf("predict: %s has %d-d features, the model takes %d", testPath, test.D, p.InputDim())
	}
	// The model numbers classes in the order it learned them; match by name.
	names := p.Classes().Names()
	if len(test.ClassNames) == 0 {
		return fmt.Errorf("predict: %s has no class_names to match the model's classes with", testPath)
	}
	ctx := context.Background()
	const warm = 50
	lat := make([]time.Duration, 0, n)
	correct := 0
	for i := range warm + n {
		row := i * 7919 % test.N // spread over the classes
		t := time.Now()
		sc, err := p.Scores(ctx, test.Row(row))
		d := time.Since(t)
		if err != nil {
			return err
		}
		if i < warm {
			continue
		}
		lat = append(lat, d)
		best := 0
		for j := range sc {
			if sc[j] > sc[best] {
				best = j
			}
		}
		if names[best] == test.ClassNames[test.Labels[row]] {
			correct++
		}
	}
	slices.Sort(lat)
	q := func(f float64) float64 { return float64(lat[int(f*float64(len(lat)-1))].Nanoseconds()) / 1e3 }
	fmt.Printf("load_s=%.3f p50_us=%.1f p90_us=%.1f p99_us=%.1f top1=%.4f\n",
		load.Seconds(), q(0.5), q(0.9), q(0.99), float64(correct)/float64(n))
	return nil
}
