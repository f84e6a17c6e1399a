package flycl

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/flycl/flycl/linalg"
	"github.com/flycl/flycl/projection"
)

// encoder computes codes, the one way every path does (learning, the
// statistics of a shard, scoring): the features times the input scale,
// times Wᵀ, then top-k.
type encoder struct {
	w       *projection.Matrix
	cfg     Config  // M, K, TopK
	inScale float64 // the power of two inputs are multiplied by (0: none, as 1)
	// sparse resolves projection.Auto to the sparse gather: a model in the
	// dual form expands a few samples at a time, for which the gather costs
	// less than building W densely (m×d float32: 51 MB at m = 10000,
	// d = 1280, and a second on a small machine) and keeps that out of memory
	sparse bool
}

// encoder returns the model's encoder.
func (m *Model) encoder() encoder {
	return encoder{w: m.w, cfg: m.cfg, inScale: m.inScale, sparse: m.dual != nil}
}

// scale returns x multiplied by the input scale (x itself when the scale
// is 1).
func (e encoder) scale(x []float32) []float32 {
	if e.inScale == 0 || e.inScale == 1 {
		return x
	}
	out := make([]float32, len(x))
	f := float32(e.inScale)
	for i, v := range x {
		out[i] = v * f
	}
	return out
}

// encode writes the n×m codes of the n×d features x into h (len n·m),
// applying W by method; with rowExact every code is a function of its
// sample alone, to the bit (projection.Matrix.ApplyRows). It returns the
// time of the projection and of top-k, and ctx's error, if any, once
// they are done.
func (e encoder) encode(ctx context.Context, method projection.Method, rowExact bool, x []float32, n int, h []float32) (Stages, error) {
	var st Stages
	t0 := time.Now()
	apply := e.w.Apply
	if rowExact {
		apply = e.w.ApplyRows
	}
	if e.sparse && method == projection.Auto {
		method = projection.Sparse
	}
	if err := apply(ctx, method, e.scale(x), n, h); err != nil {
		return st, fmt.Errorf("flycl: %w", err)
	}
	t1 := time.Now()
	projection.TopK(h, n, e.cfg.M, e.cfg.K, e.cfg.TopK)
	st.Projection, st.TopK = t1.Sub(t0), time.Since(t1)
	return st, ctx.Err()
}

// rows returns the number of d-dimensional rows of x.
func rows(x []float32, d int) (int, error) {
	if len(x)%d != 0 {
		return 0, fmt.Errorf("%w: feature matrix has %d values, not a multiple of the input dimension %d", ErrBadInput, len(x), d)
	}
	return len(x) / d, nil
}

// predictChunk bounds the memory of scoring: codes are computed for at
// most this many samples at a time.
const predictChunk = 1024

// scorer is the one scoring kernel of Predictor.Scores: codes of at most
// predictChunk samples at a time (their buffers reused through codes),
// times Cᵀ, checked to be finite.
type scorer struct {
	enc  encoder
	d    int
	coef []float32 // nc × m
	nc   int
	// rowExact makes a sample's scores depend on that sample alone, to
	// the bit: W applied and the scores summed row by row
	// (projection.Matrix.ApplyRows, linalg.SdotRows) instead of by BLAS
	// gemm, whose rounding depends on the other rows of the call.
	rowExact bool
	codes    *sync.Pool
	name     func(c int) string // class index → quoted name, for errors
	// unit holds the rows of S scaled to unit length (nc × m; a zero
	// row for a class of zero sum, marked false in hasSum), for the
	// cosines of scoresCosines (nil: none)
	unit   []float32
	hasSum []bool
}

// scores returns the n×nc class scores of the n×d features x.
func (s scorer) scores(ctx context.Context, x []float32) ([]float32, error) {
	out, _, err := s.scoresCosines(ctx, x, false)
	return out, err
}

// scoresCosines returns the n×nc class scores of the n×d features x and,
// with cosines, the cosine of every sample's code h to the nearest class
// sum, max over classes c of S_c·h/(‖S_c‖‖h‖) (0 when h is zero or no
// class has a sum; see reject.ClassCosine).
func (s scorer) scoresCosines(ctx context.Context, x []float32, cosines bool) ([]float32, []float64, error) {
	if s.coef == nil {
		return nil, nil, ErrNotTrained
	}
	n, err := rows(x, s.d)
	if err != nil {
		return nil, nil, err
	}
	m, nc := s.enc.cfg.M, s.nc
	out := make([]float32, n*nc)
	var cos []float64
	var dots []float32
	if cosines {
		if s.unit == nil {
			return nil, nil, fmt.Errorf("flycl: no class sums to compute cosines with")
		}
		cos = make([]float64, n)
		dots = make([]float32, min(n, predictChunk)*nc)
	}
	for lo := 0; lo < n; lo += predictChunk {
		hi := min(n, lo+predictChunk)
		h, _ := s.codes.Get().([]float32)
		if cap(h) < (hi-lo)*m {
			h = make([]float32, (hi-lo)*m)
		}
		h = h[:(hi-lo)*m]
		if _, err := s.enc.encode(ctx, s.enc.cfg.Projection, s.rowExact, x[lo*s.d:hi*s.d], hi-lo, h); err != nil {
			return nil, nil, err
		}
		o := out[lo*nc : hi*nc]
		if s.rowExact {
			linalg.SdotRows(hi-lo, nc, m, h, m, s.coef, m, o, nc)
		} else {
			scoreRows(h, hi-lo, m, s.coef, nc, o)
		}
		if cosines {
			dt := dots[:(hi-lo)*nc]
			if s.rowExact {
				linalg.SdotRows(hi-lo, nc, m, h, m, s.unit, m, dt, nc)
			} else {
				scoreRows(h, hi-lo, m, s.unit, nc, dt)
			}
			for i := range hi - lo {
				hn := 0.0
				for _, v := range h[i*m : (i+1)*m] {
					hn += float64(v) * float64(v)
				}
				best := math.Inf(-1)
				for c, ok := range s.hasSum {
					if ok {
						best = max(best, float64(dt[i*nc+c]))
					}
				}
				if hn > 0 && !math.IsInf(best, -1) {
					cos[lo+i] = best / math.Sqrt(hn)
				}
			}
		}
		s.codes.Put(h[:cap(h)])
		if err := checkScores(o, nc, lo, s.name); err != nil {
			return nil, nil, err
		}
	}
	return out, cos, nil
}

// scoreRows computes out (n×nc) = h (n×m) Cᵀ, C being nc×m.
func scoreRows(h []float32, n, m int, coef []float32, nc int, out []float32) {
	linalg.Sgemm(false, true, n, nc, m, 1, h, m, coef, m, 0, out, nc)
}

// checkScores returns an error naming the first score of out (rows of nc
// class scores, the first being sample first) that is not finite: the
// features were too large for the float32 expansion (about 3e38 overflows
// it), and such a score ranks nothing.
func checkScores(out []float32, nc, first int, name func(c int) string) error {
	if i := firstNonFinite(out); i >= 0 {
		return fmt.Errorf("%w: the score of sample %d for class %s is %v, not a finite number: the features are too large for this model's float32 arithmetic (scale them down)",
			ErrTooLarge, first+i/nc, name(i%nc), out[i])
	}
	return nil
}
