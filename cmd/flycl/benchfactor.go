package main

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/internal/procmem"
	"github.com/flycl/flycl/ridge"
)

// benchLearnUpdateCmd measures a small learn on the path that updates the
// Cholesky factor by the learn's rank-n term against the path that
// refactors G + λI, on the same learns in one run (solve only: no file is
// written).
func benchLearnUpdateCmd() *cobra.Command {
	var m, d, n, classes, learns, limit int
	var policy flycl.LambdaPolicy
	c := &cobra.Command{
		Use:   "learn-update [--m 10000] [--d 512] [--n 20] [--learns 10] [--lambda-policy gcv|keep]",
		Short: "Time of a small learn: rank-n update of the Cholesky factor vs refactoring (solve only)",
		Long: `Teaches a model --learns learns of --n synthetic feature vectors (--classes new
classes each) twice, first refactoring G + λI on every learn, then updating the
factor by each learn's rank-n term where the learn's λ equals the factor's and
n is at most the crossover (ridge.UpdateLimit). It prints every learn's time
on both paths with its stages, the median of learns 2.. (the first learn of a
model always factors), their ratio and each path's peak resident memory. The
learns are flycl.Model.LearnTask (or, with --lambda-policy keep, LearnTaskWithLambda
at the first learn's λ): no model file is written, so the times are the
learn's alone, without a save.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			for _, f := range []struct {
				name string
				v    int
			}{{"m", m}, {"d", d}, {"n", n}, {"classes", classes}, {"learns", learns}} {
				if f.v < 1 {
					return fmt.Errorf("--%s %d: must be at least 1", f.name, f.v)
				}
			}
			if classes > n {
				return fmt.Errorf("--classes %d: more than the --n %d samples", classes, n)
			}
			cfg := flycl.DefaultConfig()
			cfg.M, cfg.P, cfg.K = m, min(cfg.P, d), min(cfg.K, m)
			r := rand.New(rand.NewPCG(1, 2))
			xs := make([][]float32, learns)
			ys := make([][]int, learns)
			for l := range xs {
				centres := make([]float32, classes*d)
				for i := range centres {
					centres[i] = float32(r.NormFloat64())
				}
				xs[l], ys[l] = make([]float32, n*d), make([]int, n)
				for i := 0; i < n; i++ {
					cl := i % classes
					ys[l][i] = l*classes + cl
					for j := 0; j < d; j++ {
						xs[l][i*d+j] = centres[cl*d+j] + 0.5*float32(r.NormFloat64())
					}
				}
			}
			fmt.Printf("learn-update: m=%d d=%d, %d samples × %d new classes per learn, %d learns, λ policy %s; update limit n ≤ %d; GOMAXPROCS=%d\n",
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
				model.SetUpdateLimit(limit)
				runtime.GC()
				debug.FreeOSMemory()
				procmem.ResetPeak()
				var res result
				for l := range xs {
					t := time.Now()
					var rec flycl.TaskRecord
					if lam := model.KeptLambda(policy); lam > 0 {
						rec, err = model.LearnTaskWithLambda(cmd.Context(), xs[l], ys[l], lam)
					} else {
						rec, err = model.LearnTask(cmd.Context(), xs[l], ys[l])
					}
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
					fmt.Printf("%-9s %5d %9.4f %-9s λ=%-8g gram %.4f gcv %.4f factor %.4f solve %.4f\n", name, l+1, wall.Seconds(), how, rec.Lambda,
						st.Gram.Seconds(), st.GCV.Seconds(), st.Factor.Seconds(), st.Solve.Seconds())
				}
				res.peak = procmem.Peak()
				return res, nil
			}
			fmt.Printf("%-9s %5s %9s %-9s\n", "path", "learn", "wall_s", "factor")
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
			fmt.Printf("p50 of learns 2..%d: refactor %.4f s, update %.4f s, refactor/update %.1f×; peak RSS refactor %.0f MiB, update %.0f MiB (G = %.0f MiB)\n",
				learns, a.Seconds(), b.Seconds(), a.Seconds()/b.Seconds(), float64(ref.peak)/(1<<20), float64(upd.peak)/(1<<20), float64(m)*float64(m)*4/(1<<20))
			return nil
		},
	}
	fs := c.Flags()
	fs.IntVar(&m, "m", 10000, "expansion dimension")
	fs.IntVar(&d, "d", 512, "feature dimension")
	fs.IntVar(&n, "n", 20, "samples per learn")
	fs.IntVar(&classes, "classes", 2, "new classes per learn")
	fs.IntVar(&learns, "learns", 10, "learns, one after another")
	fs.IntVar(&limit, "update-limit", -1, "largest learn that updates the factor on the update path (-1: the default crossover ridge.UpdateLimit(m); larger values measure the crossover)")
	fs.TextVar(&policy, "lambda-policy", flycl.LambdaGCV, "gcv: λ by GCV on each learn; keep: the first learn's λ for all")
	return c
}
