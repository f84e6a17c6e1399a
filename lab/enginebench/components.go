package enginebench

import (
	"context"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/flycl/flycl/internal/parallel"
	"github.com/flycl/flycl/linalg"
	"github.com/flycl/flycl/projection"
	"github.com/flycl/flycl/ridge"
)

// Component is one row of the paper's table "Time savings for
// post-extracting components": a vanilla implementation of a step and the
// one Fly-CL uses, with their flop counts and measured times (median of
// the runs).
type Component struct {
	Name                   string
	Vanilla, Optimized     string
	VanillaFlops, OptFlops float64
	VanillaTime, OptTime   time.Duration
	Note                   string // extra measurement, e.g. a third variant
}

// ComponentSettings are the sizes of the components benchmark.
type ComponentSettings struct {
	Scale      Scale
	M, P, K    int
	Lambdas    []float64 // grid for ridge selection
	Folds      int       // k of the explicit k-fold cross-validation
	Runs       int       // repetitions of each fast measurement (median)
	TestPerCls int       // test samples per class for the similarity step
}

// Components times, at one task of the scale (n = SamplesPerTask codes of
// ClassesPerTask classes), each component of Fly-CL's post-extraction work
// against its vanilla form, side by side in one process:
//
//   - projection: a dense Gaussian W (m×d) by sgemm vs the sparse W (p
//     non-zeros per row) as Fly-CL applies it (densified, one sgemm); the
//     sparse gather is reported as a note;
//   - ridge selection: explicit k-fold cross-validation over the grid (one
//     m×m Gram per fold, one Cholesky per fold and λ) vs GCV (ridge.GCV);
//   - prototype calculation: C = (G + λI)⁻¹ S by LU vs by Cholesky;
//   - similarity: scores of the test codes against every class of the
//     stream (Tasks × ClassesPerTask), dense sgemm vs the top-k-sparse codes
//     (k non-zeros per row).
func Components(ctx context.Context, cs ComponentSettings, log io.Writer) ([]Component, error) {
	sc := cs.Scale
	n, d, m, p, k := sc.SamplesPerTask, sc.Dim, cs.M, cs.P, cs.K
	runs := max(cs.Runs, 1)
	x, y := task(sc, 0, 1)
	nc := sc.ClassesPerTask
	for i := range y {
		y[i] %= nc
	}
	timeIt := func(f func() error) (time.Duration, error) {
		var ds []time.Duration
		for r := 0; r < runs; r++ {
			if err := ctx.Err(); err != nil {
				return 0, err
			}
			t := time.Now()
			if err := f(); err != nil {
				return 0, err
			}
			ds = append(ds, time.Since(t))
		}
		return median(ds), nil
	}
	var out []Component

	// 1. Projection.
	fmt.Fprintln(log, "components: projection")
	wSparse, err := projection.Generate(m, d, p, 1)
	if err != nil {
		return nil, err
	}
	wDense, err := projection.Generate(m, d, d, 1)
	if err != nil {
		return nil, err
	}
	h := make([]float32, n*m)
	tv, err := timeIt(func() error { return wDense.Apply(ctx, projection.Dense, x, n, h) })
	if err != nil {
		return nil, err
	}
	to, err := timeIt(func() error { return wSparse.Apply(ctx, wSparse.Resolve(projection.Auto), x, n, h) })
	if err != nil {
		return nil, err
	}
	tg, err := timeIt(func() error { return wSparse.Apply(ctx, projection.Sparse, x, n, h) })
	if err != nil {
		return nil, err
	}
	// Flops as executed: the sparse W applied densely costs what the dense
	// W costs; the gather would do 2·n·m·p but is slower per flop.
	applied := wSparse.Resolve(projection.Auto)
	optFlops := 2 * float64(n*m*p)
	if applied == projection.Dense {
		optFlops = 2 * float64(n*m*d)
	}
	out = append(out, Component{
		Name: "random projection", Vanilla: "dense Gaussian W, sgemm", Optimized: fmt.Sprintf("sparse W (p=%d) applied %s", p, applied),
		VanillaFlops: 2 * float64(n*m*d), OptFlops: optFlops, VanillaTime: tv, OptTime: to,
		Note: fmt.Sprintf("sparse gather (%.2f GFLOP) %.3fs", 2*float64(n*m*p)/1e9, tg.Seconds()),
	})
	projection.TopK(h, n, m, k, projection.Signed) // the codes of the task, for what follows

	// 2. Ridge selection.
	fmt.Fprintf(log, "components: ridge selection (%d-fold CV over %d values: %d factorisations of %d×%d)\n", cs.Folds, len(cs.Lambdas), cs.Folds*len(cs.Lambdas), m, m)
	var cvBest int
	tv, err = timeIt1(ctx, func() error {
		cvBest, err = kFoldCV(ctx, h, n, m, y, nc, cs.Lambdas, cs.Folds)
		return err
	})
	if err != nil {
		return nil, err
	}
	var gcvBest int
	var ws ridge.Workspace
	to, err = timeIt(func() error {
		s, err := ws.GCV(ctx, h, n, m, y, nc, cs.Lambdas, ridge.GCVAuto)
		gcvBest = ridge.BestLambda(s)
		return err
	})
	if err != nil {
		return nil, err
	}
	nf := float64(n)
	ntr := nf * float64(cs.Folds-1) / float64(cs.Folds)
	gl := float64(len(cs.Lambdas))
	mf := float64(m)
	out = append(out, Component{
		Name: "ridge selection", Vanilla: fmt.Sprintf("%d-fold CV (m×m Cholesky per fold and λ)", cs.Folds), Optimized: "GCV (" + ridge.GCVAuto.Resolve(n, m, len(cs.Lambdas)).String() + ")",
		VanillaFlops: float64(cs.Folds) * (mf*mf*ntr + gl*(mf*mf*mf/3+4*mf*mf*float64(nc)+2*(nf-ntr)*mf*float64(nc))),
		OptFlops:     nf*nf*mf + gl*(2*nf*nf*nf/3+4*nf*nf*float64(nc)),
		VanillaTime:  tv, OptTime: to,
		Note: fmt.Sprintf("λ chosen: CV %g, GCV %g", cs.Lambdas[cvBest], cs.Lambdas[gcvBest]),
	})

	// 3. Prototype calculation: C = (G + λI)⁻¹ S.
	fmt.Fprintln(log, "components: prototype calculation (LU vs Cholesky)")
	g := make([]float32, m*m)
	linalg.SsyrkLower(true, m, n, 1, h, m, 0, g, m)
	mirrorUpper(g, m)
	lambda := cs.Lambdas[gcvBest]
	for i := 0; i < m; i++ {
		g[i*m+i] += float32(lambda)
	}
	s := make([]float32, nc*m)
	for i, l := range y {
		row := s[l*m : (l+1)*m]
		for j, v := range h[i*m : (i+1)*m] {
			row[j] += v
		}
	}
	a := make([]float32, m*m)
	c := make([]float32, nc*m)
	ipiv := make([]int32, m)
	tv, err = timeIt(func() error {
		copy(a, g)
		copy(c, s)
		if err := linalg.Sgetrf(m, a, m, ipiv); err != nil {
			return err
		}
		linalg.Sgetrs(m, nc, a, m, ipiv, c, m)
		return nil
	})
	if err != nil {
		return nil, err
	}
	cLU := append([]float32(nil), c...)
	to, err = timeIt(func() error {
		copy(a, g)
		copy(c, s)
		if err := linalg.Spotrf(m, a, m); err != nil {
			return err
		}
		linalg.Spotrs(m, nc, a, m, c, m)
		return nil
	})
	if err != nil {
		return nil, err
	}
	var num, den float64
	for i, v := range c {
		e := float64(v) - float64(cLU[i])
		num += e * e
		den += float64(v) * float64(v)
	}
	out = append(out, Component{
		Name: "prototype calculation", Vanilla: "LU (sgetrf + sgetrs)", Optimized: "Cholesky (spotrf + spotrs)",
		VanillaFlops: 2*mf*mf*mf/3 + 4*mf*mf*float64(nc), OptFlops: mf*mf*mf/3 + 4*mf*mf*float64(nc),
		VanillaTime: tv, OptTime: to, Note: fmt.Sprintf("‖C_LU − C_chol‖/‖C‖ = %.1e", math.Sqrt(num/den)),
	})
	a, g = nil, nil

	// 4. Similarity comparison over all classes of the stream.
	ncAll := sc.Tasks * sc.ClassesPerTask
	nt := cs.TestPerCls * ncAll
	fmt.Fprintf(log, "components: similarity (%d test codes × %d classes)\n", nt, ncAll)
	codes := make([]float32, nt*m)
	for i := 0; i < nt; i++ {
		copy(codes[i*m:(i+1)*m], h[(i%n)*m:(i%n+1)*m])
	}
	call := make([]float32, ncAll*m)
	for i := range call {
		call[i] = float32(math.Sin(float64(i)))
	}
	ct := make([]float32, m*ncAll) // m × classes, for the sparse axpys
	for cl := 0; cl < ncAll; cl++ {
		for j := 0; j < m; j++ {
			ct[j*ncAll+cl] = call[cl*m+j]
		}
	}
	scores := make([]float32, nt*ncAll)
	tv, err = timeIt(func() error {
		linalg.Sgemm(false, true, nt, ncAll, m, 1, codes, m, call, m, 0, scores, ncAll)
		return nil
	})
	if err != nil {
		return nil, err
	}
	dense := append([]float32(nil), scores...)
	// The sparse form: the top-k codes as (index, value) lists, built once
	// (top-k produces them; here they are gathered from the dense codes).
	idx := make([]int32, 0, nt*k)
	val := make([]float32, 0, nt*k)
	rowStart := make([]int, nt+1)
	for i := 0; i < nt; i++ {
		for j, v := range codes[i*m : (i+1)*m] {
			if v != 0 {
				idx, val = append(idx, int32(j)), append(val, v)
			}
		}
		rowStart[i+1] = len(idx)
	}
	to, err = timeIt(func() error {
		parallel.For(nt, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				out := scores[i*ncAll : (i+1)*ncAll]
				clear(out)
				for q := rowStart[i]; q < rowStart[i+1]; q++ {
					v, col := val[q], ct[int(idx[q])*ncAll:int(idx[q]+1)*ncAll]
					for cl, w := range col {
						out[cl] += v * w
					}
				}
			}
		})
		return nil
	})
	if err != nil {
		return nil, err
	}
	var worst float64
	for i, v := range scores {
		worst = math.Max(worst, math.Abs(float64(v)-float64(dense[i]))/(1+math.Abs(float64(dense[i]))))
	}
	out = append(out, Component{
		Name: "similarity comparison", Vanilla: "dense codes, sgemm", Optimized: fmt.Sprintf("top-k sparse codes (k=%d), gather", k),
		VanillaFlops: 2 * float64(nt) * mf * float64(ncAll), OptFlops: 2 * float64(nt) * float64(k) * float64(ncAll),
		VanillaTime: tv, OptTime: to, Note: fmt.Sprintf("max score difference %.1e (relative)", worst),
	})
	return out, nil
}

func timeIt1(ctx context.Context, f func() error) (time.Duration, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	t := time.Now()
	err := f()
	return time.Since(t), err
}

// kFoldCV returns the index of the grid value with the least mean squared
// error of one-hot targets over folds consecutive validation folds, each
// fitted by an explicit m×m Cholesky solve on the other folds.
func kFoldCV(ctx context.Context, h []float32, n, m int, y []int, nc int, grid []float64, folds int) (int, error) {
	if folds < 2 || folds > n {
		return 0, fmt.Errorf("enginebench: folds must be in [2, n=%d], got %d", n, folds)
	}
	mse := make([]float64, len(grid))
	g := make([]float32, m*m)
	var diag []float32
	c := make([]float32, nc*m)
	for f := 0; f < folds; f++ {
		lo, hi := f*n/folds, (f+1)*n/folds
		tr := append(append([]float32(nil), h[:lo*m]...), h[hi*m:]...)
		ytr := append(append([]int(nil), y[:lo]...), y[hi:]...)
		ntr := len(ytr)
		linalg.SsyrkLower(true, m, ntr, 1, tr, m, 0, g, m)
		diag = diag[:0]
		for i := 0; i < m; i++ {
			diag = append(diag, g[i*m+i])
		}
		s := make([]float32, nc*m)
		for i, l := range ytr {
			row := s[l*m : (l+1)*m]
			for j, v := range tr[i*m : (i+1)*m] {
				row[j] += v
			}
		}
		nv := hi - lo
		pred := make([]float32, nv*nc)
		for gi, lambda := range grid {
			if err := ctx.Err(); err != nil {
				return 0, err
			}
			for i := 0; i < m; i++ { // G + λI in the upper triangle
				for j := i + 1; j < m; j++ {
					g[i*m+j] = g[j*m+i]
				}
				g[i*m+i] = diag[i] + float32(lambda)
			}
			if err := linalg.Spotrf(m, g, m); err != nil {
				mse[gi] = math.Inf(1)
				continue
			}
			copy(c, s)
			linalg.Spotrs(m, nc, g, m, c, m)
			linalg.Sgemm(false, true, nv, nc, m, 1, h[lo*m:hi*m], m, c, m, 0, pred, nc)
			for i := 0; i < nv; i++ {
				for cl := 0; cl < nc; cl++ {
					t := 0.0
					if y[lo+i] == cl {
						t = 1
					}
					e := float64(pred[i*nc+cl]) - t
					mse[gi] += e * e
				}
			}
		}
	}
	best := 0
	for i, v := range mse {
		if v < mse[best] {
			best = i
		}
	}
	return best, nil
}

// ReportComponents writes the components as a Markdown table: flop counts,
// the speed-up they predict, measured seconds and the measured speed-up.
func ReportComponents(w io.Writer, cs ComponentSettings, comps []Component) {
	fmt.Fprintf(w, "components at scale %s: one task of %d samples × d=%d, %d classes; m=%d p=%d k=%d; grid %v; %s, %d threads\n\n",
		cs.Scale.Name, cs.Scale.SamplesPerTask, cs.Scale.Dim, cs.Scale.ClassesPerTask, cs.M, cs.P, cs.K, cs.Lambdas, linalg.Backend(), linalg.Threads())
	fmt.Fprintln(w, "| component | vanilla | Fly-CL | GFLOP vanilla | GFLOP Fly-CL | speed-up (theory) | vanilla (s) | Fly-CL (s) | speed-up (measured) | note |")
	fmt.Fprintln(w, "|---|---|---|---:|---:|---:|---:|---:|---:|---|")
	for _, c := range comps {
		fmt.Fprintf(w, "| %s | %s | %s | %.2f | %.2f | %.1f× | %.3f | %.3f | **%.1f×** | %s |\n", c.Name, c.Vanilla, c.Optimized,
			c.VanillaFlops/1e9, c.OptFlops/1e9, c.VanillaFlops/c.OptFlops, c.VanillaTime.Seconds(), c.OptTime.Seconds(),
			c.VanillaTime.Seconds()/c.OptTime.Seconds(), c.Note)
	}
}
