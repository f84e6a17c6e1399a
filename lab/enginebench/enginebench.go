package enginebench

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/flycl/flycl/internal/codec"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/internal/procmem"
	"github.com/flycl/flycl/lab/report"
	"github.com/flycl/flycl/linalg"
)

// Scale describes a synthetic class-incremental stream.
type Scale struct {
	Name           string
	Tasks          int
	SamplesPerTask int
	ClassesPerTask int
	Dim            int
}

// Scales are the paper's data-set sizes: CIFAR-100-like, CUB-like, and
// CIFAR-10-like (one 10000-sample task: n = m at the default m).
var Scales = map[string]Scale{
	"cifar100": {"cifar100", 10, 5000, 10, 768},
	"cub":      {"cub", 10, 600, 20, 768},
	"cifar10":  {"cifar10", 5, 10000, 2, 768},
}

// Result is what Run measured.
type Result struct {
	Scale      Scale
	Config     flycl.Config
	Tasks      []flycl.TaskRecord
	TauPost    []time.Duration // per task, end to end of LearnTask
	Floor      time.Duration   // median of FloorRuns measurements
	FloorSyrk  time.Duration
	FloorPotrf time.Duration
	PeakRSS    int64 // bytes, VmHWM after the engine run (before the floor)
	Threads    int
	Backend    string
}

// task draws one task's features: per-class means on the unit sphere
// times 3 plus unit noise, like L2-scale backbone features.
func task(sc Scale, t int, seed uint64) ([]float32, []int) {
	r := rand.New(rand.NewPCG(seed, uint64(t)))
	n, d := sc.SamplesPerTask, sc.Dim
	means := make([]float64, sc.ClassesPerTask*d)
	for i := range means {
		means[i] = r.NormFloat64() * 3 / 27.7 // ||mean|| ≈ 3 at d=768
	}
	x := make([]float32, n*d)
	y := make([]int, n)
	for i := 0; i < n; i++ {
		c := i % sc.ClassesPerTask
		y[i] = t*sc.ClassesPerTask + c
		for j := 0; j < d; j++ {
			x[i*d+j] = float32(means[c*d+j] + r.NormFloat64()/27.7)
		}
	}
	return x, y
}

// Run learns sc.Tasks tasks with cfg, then measures the floor floorRuns
// times on the last task's codes. Progress lines go to log.
func Run(ctx context.Context, sc Scale, cfg flycl.Config, floorRuns int, log io.Writer) (*Result, error) {
	model, err := flycl.New(cfg, sc.Dim)
	if err != nil {
		return nil, err
	}
	res := &Result{Scale: sc, Config: model.Config(), Threads: linalg.Threads(), Backend: linalg.Backend()}
	var last []float32
	for t := 0; t < sc.Tasks; t++ {
		x, y := task(sc, t, 1)
		start := time.Now()
		rec, err := model.Learn(ctx, x, y, nil)
		if err != nil {
			return nil, fmt.Errorf("task %d: %w", t, err)
		}
		tau := time.Since(start)
		res.Tasks = append(res.Tasks, rec)
		res.TauPost = append(res.TauPost, tau)
		fmt.Fprintf(log, "task %2d/%d: tau_post %.3fs (lambda %.0e)\n", t+1, sc.Tasks, tau.Seconds(), rec.Lambda)
		last = x
	}
	res.PeakRSS = procmem.Peak()
	m := res.Config.M
	h, err := codec.Expand(ctx, model, last)
	if err != nil {
		return nil, err
	}
	model = nil
	runtime.GC()
	g := make([]float32, m*m)
	var syrks, potrfs, floors []time.Duration
	for i := 0; i < floorRuns; i++ {
		t0 := time.Now()
		linalg.SsyrkLower(true, m, sc.SamplesPerTask, 1, h, m, 0, g, m)
		t1 := time.Now()
		// The codes of one task have rank <= n < m: make the matrix
		// positive definite the way the solve does, with λ on the diagonal.
		for j := 0; j < m; j++ {
			g[j*m+j] += 1e6
		}
		mirrorUpper(g, m)
		t2 := time.Now()
		if err := linalg.Spotrf(m, g, m); err != nil {
			return nil, err
		}
		t3 := time.Now()
		syrks, potrfs = append(syrks, t1.Sub(t0)), append(potrfs, t3.Sub(t2))
		floors = append(floors, t1.Sub(t0)+t3.Sub(t2))
	}
	res.Floor, res.FloorSyrk, res.FloorPotrf = median(floors), median(syrks), median(potrfs)
	return res, nil
}

func mirrorUpper(a []float32, m int) {
	for i := 0; i < m; i++ {
		for j := i + 1; j < m; j++ {
			a[i*m+j] = a[j*m+i]
		}
	}
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

// Report writes the result as a Markdown table.
func (r *Result) Report(w io.Writer) {
	sec := func(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) }
	gcv := r.Config.GCV.Resolve(r.Scale.SamplesPerTask, r.Config.M, len(r.Config.Lambdas))
	fmt.Fprintf(w, "scale %s: %d tasks × %d samples × d=%d, %d classes/task; m=%d p=%d k=%d; %d-value grid, GCV %s; %s, %d threads\n\n",
		r.Scale.Name, r.Scale.Tasks, r.Scale.SamplesPerTask, r.Scale.Dim, r.Scale.ClassesPerTask,
		r.Config.M, r.Config.P, r.Config.K, len(r.Config.Lambdas), gcv, r.Backend, r.Threads)
	stages := flycl.AllStages()
	fmt.Fprint(w, "| task |")
	for _, st := range stages {
		fmt.Fprintf(w, " %s |", report.StageLabel(st))
	}
	fmt.Fprintln(w, " tau_post (s) | tau_post / floor |")
	fmt.Fprintln(w, "|---:|"+strings.Repeat("---:|", len(stages)+2))
	row := func(label string, s flycl.Stages, tau time.Duration, ratio string) {
		fmt.Fprintf(w, "| %s |", label)
		for _, st := range stages {
			fmt.Fprintf(w, " %s |", sec(s.Get(st)))
		}
		fmt.Fprintf(w, " %s | %s |\n", sec(tau), ratio)
	}
	var sum flycl.Stages
	var tot time.Duration
	for i, rec := range r.Tasks {
		sum.Add(rec.Stages)
		tot += r.TauPost[i]
		row(fmt.Sprint(i+1), rec.Stages, r.TauPost[i], fmt.Sprintf("%.2f", float64(r.TauPost[i])/float64(r.Floor)))
	}
	n := time.Duration(len(r.Tasks))
	row("mean", sum.Scale(1/float64(len(r.Tasks))), tot/n, fmt.Sprintf("**%.2f**", float64(tot/n)/float64(r.Floor)))
	fmt.Fprintln(w)
	fmt.Fprintf(w, "BLAS floor per task (median): ssyrk %ss + spotrf %ss = %ss\n", sec(r.FloorSyrk), sec(r.FloorPotrf), sec(r.Floor))
	fmt.Fprintf(w, "peak RSS of the engine run: %.2f GB\n", float64(r.PeakRSS)/1e9)
}
