package analysis

import (
	"context"
	"fmt"
	"math"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/internal/codec"
	"github.com/flycl/flycl/lab/baselines"
	"github.com/flycl/flycl/linalg"
)

// HebbianPoint is the state of the Hebbian learner after Pass passes.
type HebbianPoint struct {
	Pass     int     `json:"pass"`
	RelDist  float64 `json:"rel_dist"` // ‖C − C*‖_F / ‖C*‖_F
	Accuracy float64 `json:"accuracy"` // on the test samples, in [0, 1]
}

// HebbianCurve is the convergence of the Hebbian rule to the ridge
// solution on one task.
type HebbianCurve struct {
	Lambda        float64        `json:"lambda"`         // GCV's λ (shared by both learners)
	Step          float64        `json:"step"`           // η = 1/(λmax(G) + λ)
	RidgeAccuracy float64        `json:"ridge_accuracy"` // Fly-CL's (Cholesky) test accuracy
	Points        []HebbianPoint `json:"points"`
}

// Hebbian teaches Fly-CL (Cholesky solve) and the Hebbian learner the same
// task (x, y: n×d features and labels) and records, every `every` passes
// up to `passes`, the Hebbian classifier's relative distance to Fly-CL's
// C* = (G + λI)⁻¹ S and its accuracy on the test samples (xt, yt).
func Hebbian(ctx context.Context, cfg flycl.Config, d int, x []float32, y []int, xt []float32, yt []int, passes, every int) (HebbianCurve, error) {
	if every < 1 {
		return HebbianCurve{}, fmt.Errorf("analysis: every must be at least 1, got %d", every)
	}
	fly, err := flycl.New(cfg, d)
	if err != nil {
		return HebbianCurve{}, err
	}
	if _, err := fly.Learn(ctx, x, y, nil); err != nil {
		return HebbianCurve{}, err
	}
	cstar := codec.State(fly).Coef
	var out HebbianCurve
	out.Lambda = fly.Lambda()
	if out.RidgeAccuracy, err = codec.BatchPredictor(fly).Accuracy(ctx, xt, yt); err != nil {
		return HebbianCurve{}, err
	}
	heb, err := baselines.NewHebbian(cfg, d, passes)
	if err != nil {
		return HebbianCurve{}, err
	}
	// The test codes are the same for every pass: expand them once.
	codes, err := codec.Expand(ctx, fly, xt)
	if err != nil {
		return HebbianCurve{}, err
	}
	m := fly.Config().M
	nt := len(yt)
	heb.Progress = func(pass int, c []float32) {
		if pass%every != 0 && pass != passes {
			return
		}
		var num, den float64
		for i, v := range c {
			e := float64(v) - float64(cstar[i])
			num += e * e
			den += float64(cstar[i]) * float64(cstar[i])
		}
		labels := heb.Labels()
		nc := len(labels)
		scores := make([]float32, nt*nc)
		linalg.Sgemm(false, true, nt, nc, m, 1, codes, m, c, m, 0, scores, nc)
		right := 0
		for i := 0; i < nt; i++ {
			row := scores[i*nc : (i+1)*nc]
			best := 0
			for j, v := range row {
				if v > row[best] {
					best = j
				}
			}
			if labels[best] == yt[i] {
				right++
			}
		}
		out.Points = append(out.Points, HebbianPoint{Pass: pass, RelDist: math.Sqrt(num / den), Accuracy: float64(right) / float64(len(yt))})
	}
	if err := heb.LearnTask(ctx, x, y); err != nil {
		return HebbianCurve{}, err
	}
	if heb.LastLambda() != out.Lambda {
		return HebbianCurve{}, fmt.Errorf("analysis: Hebbian λ %g differs from Fly-CL's %g", heb.LastLambda(), out.Lambda)
	}
	out.Step = heb.Step()
	return out, nil
}
