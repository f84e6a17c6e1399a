package bench

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"slices"
	"time"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/internal/codec"
	"github.com/flycl/flycl/internal/procmem"
	"github.com/flycl/flycl/ridge"
)

// LearnUpdateOptions are the inputs of LearnUpdate.
type LearnUpdateOptions struct {
	M, D       int // expansion and feature dimension
	N, Classes int // samples and new classes per learn
	Learns     int // learns, one after another
	// Limit is the largest learn that updates the factor on the update
	// path (-1: the default crossover ridge.UpdateLimit(M)).
	Limit  int
	Policy flycl.LambdaPolicy
}

// LearnUpdate times small learns of synthetic feature vectors on the path
// that updates the Cholesky factor by each learn's rank-n term against
// the path that refactors G + λI, on the same learns in one run (solve
// only: flycl.Model.Learn, no file), and prints every learn with its
// stages, the p50 of learns 2.., their ratio and each path's peak RSS.
func LearnUpdate(ctx context.Context, out io.Writer, o LearnUpdateOptions) error {
	if err := (ServeLearnOptions{M: o.M, D: o.D, N: o.N, Classes: o.Classes, Learns: o.Learns}).check(); err != nil {
		return err
	}
	m, d, n, classes, learns, limit, policy := o.M, o.D, o.N, o.Classes, o.Learns, o.Limit, o.Policy
	cfg := flycl.DefaultConfig()
	cfg.M, cfg.P, cfg.K = m, min(cfg.P, d), min(cfg.K, m)
	r := rand.New(rand.NewPCG(1, 2))
	xs := make([][]float32, learns)
	ys := make([][]int, learns)
	for l := range xs {
		xs[l], ys[l] = blobs(r, n, d, classes)
		for i := range ys[l] {
			ys[l][i] += l * classes
		}
	}
	fmt.Fprintf(out, "learn-update: m=%d d=%d, %d samples × %d new classes per learn, %d learns, λ policy %s; update limit n ≤ %d; GOMAXPROCS=%d\n",
		m, d, n, classes, learns, policy, ridge.UpdateLimit(m), runtime.GOMAXPROCS(0))
	type result struct {
		times []time.Duration
		peak  int64
	}
	run := func(name string, limit int) (result, error) {
		model, err := flycl.New(cfg, d)
		if err != nil {
			return result{}, err
		}
		codec.SetUpdateLimit(model, limit)
		runtime.GC()
		debug.FreeOSMemory()
		procmem.ResetPeak()
		var res result
		for l := range xs {
			t := time.Now()
			rec, err := model.Learn(ctx, xs[l], ys[l], &flycl.LearnOptions{Policy: policy})
			if err != nil {
				return result{}, err
			}
			wall := time.Since(t)
			res.times = append(res.times, wall)
			how := "refactor"
			if rec.FactorUpdated {
				how = "update"
			}
			st := rec.Stages
			fmt.Fprintf(out, "%-9s %5d %9.4f %-9s λ=%-8g gram %.4f gcv %.4f factor %.4f solve %.4f\n", name, l+1, wall.Seconds(), how, rec.Lambda,
				st.Gram.Seconds(), st.GCV.Seconds(), st.Factor.Seconds(), st.Solve.Seconds())
		}
		res.peak = procmem.Peak()
		return res, nil
	}
	fmt.Fprintf(out, "%-9s %5s %9s %-9s\n", "path", "learn", "wall_s", "factor")
	ref, err := run("refactor", 0)
	if err != nil {
		return err
	}
	upd, err := run("update", limit)
	if err != nil {
		return err
	}
	p50 := func(ts []time.Duration) time.Duration {
		if len(ts) > 1 {
			ts = ts[1:]
		}
		s := slices.Clone(ts)
		slices.Sort(s)
		return s[len(s)/2]
	}
	a, b := p50(ref.times), p50(upd.times)
	fmt.Fprintf(out, "p50 of learns 2..%d: refactor %.4f s, update %.4f s, refactor/update %.1f×; peak RSS refactor %.0f MiB, update %.0f MiB (G = %.0f MiB)\n",
		learns, a.Seconds(), b.Seconds(), a.Seconds()/b.Seconds(), float64(ref.peak)/(1<<20), float64(upd.peak)/(1<<20), float64(m)*float64(m)*4/(1<<20))
	return nil
}
