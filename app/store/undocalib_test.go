package store

import (
	"context"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/deploy"
	"github.com/flycl/flycl/format/modelfile"
	"github.com/flycl/flycl/internal/codec"
	"github.com/flycl/flycl/projection"
	"github.com/flycl/flycl/reject"
)

// TestUndoRestoresCalibration: learn A, learn B, undo gives back the
// model after A bit for bit, its calibration included: the rejection
// (score, threshold, share kept, temperature, pool size), the pool of
// leave-one-out scores, and the class scores, answers, "unknown" flags and
// probabilities of test inputs, both right after the undo and in a model
// loaded from the file whose journal holds the undo (the server's path:
// the undo is journalled, not saved whole, and replayed on load); the
// next learn calibrates with the share kept after A again. Bit for bit
// needs statistics float32 holds exactly: W of ±1 entries and integer
// features make every code an integer and every sum in G and S one below
// 2^24, so subtracting B's codes gives G and S back exactly (on other data
// G comes back within float32 rounding: flycl.TestUnlearnEqualsNeverSeen).
// A learn journalled before calibrations were recorded (no Calibration)
// is undone keeping the model's own calibration, as before.
func TestUndoRestoresCalibration(t *testing.T) {
	ctx := context.Background()
	const d = 12
	r := rand.New(rand.NewPCG(3, 4))
	classes := []string{"ant", "bee", "cat", "dog"}
	data := func(n int, cls ...int) ([]float32, []string) {
		x := make([]float32, n*d)
		names := make([]string, n)
		for i := range names {
			c := cls[i%len(cls)]
			names[i] = classes[c]
			for j := 0; j < d; j++ {
				x[i*d+j] = float32(math.Round(r.NormFloat64() * 2))
			}
			x[i*d+c] += 5
		}
		return x, names
	}
	// W with entries ±1: integer features give integer codes (at most
	// 4·|x|max ≈ 4·14 in size), and G's entries stay below 210·56² < 2^24
	g, err := projection.Generate(96, d, 4, 5)
	if err != nil {
		t.Fatal(err)
	}
	vals := make([]float32, len(g.Vals))
	for i, v := range g.Vals {
		vals[i] = float32(math.Copysign(1, float64(v)))
	}
	w, err := projection.New(96, d, 4, g.Cols, vals)
	if err != nil {
		t.Fatal(err)
	}
	cfg := flycl.Config{K: 30, Lambdas: []float64{0.1, 1, 10}}
	m, err := deploy.New(cfg, d, w, nil)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "m.flycl")
	xa, na := data(90, 0, 1, 2)
	xb, nb := data(60, 1, 3) // more of a known class, and a new one
	test, _ := data(200, 0, 1, 2, 3)

	learn := func(x []float32, names []string, opt deploy.LearnOptions) {
		t.Helper()
		before := PriorOf(m)
		if _, err := m.Learn(ctx, x, names, nil, opt); err != nil {
			t.Fatal(err)
		}
		if err := saveModel(m, path); err != nil {
			t.Fatal(err)
		}
		j, _, err := modelfile.OpenJournal(path, m.Checkpoint())
		if err != nil {
			t.Fatal(err)
		}
		defer j.Close()
		if err := j.Append(LearnEntry(m.Model.Version(), before, x, names, d, opt)); err != nil {
			t.Fatal(err)
		}
	}
	learn(xa, na, deploy.LearnOptions{})
	rejA, poolA := m.Model.Rejection(), codec.CalibrationPool(m.Model)
	afterA := m.Model.Clone()
	// the cosines of the codes to the class sums, which a rejection on
	// top+cosine reads (flycl.Predictor.ScoresCosines)
	_, cosA, err := afterA.Predictor().ScoresCosines(ctx, test)
	if err != nil {
		t.Fatal(err)
	}
	scoresA, err := afterA.Predictor().Scores(ctx, test)
	if err != nil {
		t.Fatal(err)
	}
	// the default score, top+cosine, pools (top, cosine) pairs
	if !rejA.Enabled() || rejA.Score != reject.ScoreTopCosine || len(poolA) != 2*90 || !(rejA.Temperature > 0) {
		t.Fatalf("after A: rejection %+v with a pool of %d, want on, top+cosine pairs from 90 samples", rejA, len(poolA))
	}
	if err := m.Model.SetCalibration(&reject.Calibration{Keep: 0.8}); err != nil {
		t.Fatal(err)
	}
	learn(xb, nb, deploy.LearnOptions{})
	if rb := m.Model.Rejection(); rb.Threshold == rejA.Threshold || rb.Temperature == rejA.Temperature || rb.Keep == rejA.Keep {
		t.Fatalf("B did not change the calibration (%+v after A, %+v after B): the test would prove nothing", rejA, rb)
	}

	check := func(what string, got *deploy.Model) {
		t.Helper()
		if rg := got.Model.Rejection(); rg != rejA {
			t.Fatalf("%s: rejection %+v, want %+v (after A)", what, rg, rejA)
		}
		if pg := codec.CalibrationPool(got.Model); !slices.Equal(pg, poolA) {
			t.Fatalf("%s: calibration pool of %d scores differs from that after A (%d)", what, len(pg), len(poolA))
		}
		if !slices.Equal(got.Model.Classes().Names(), afterA.Classes().Names()) || got.Model.Lambda() != afterA.Lambda() {
			t.Fatalf("%s: classes %v λ=%g, want %v λ=%g", what, got.Model.Classes().Names(), got.Model.Lambda(), afterA.Classes().Names(), afterA.Lambda())
		}
		sc, err := got.Model.Predictor().Scores(ctx, test)
		if err != nil {
			t.Fatal(err)
		}
		if !sameBits(sc, scoresA) {
			t.Fatalf("%s: the class scores of the test inputs differ from those after A", what)
		}
		_, cosG, err := got.Model.Predictor().ScoresCosines(ctx, test)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(cosG, cosA) {
			t.Fatalf("%s: the cosines of the test inputs differ from those after A", what)
		}
		nc := afterA.Classes().Len()
		unknown := 0
		for i := 0; i < len(test)/d; i++ {
			ra, rg := scoresA[i*nc:(i+1)*nc], sc[i*nc:(i+1)*nc]
			pa, _ := rejA.Probability(ra)
			pg, _ := got.Model.Rejection().Probability(rg)
			ua, ug := rejA.Reject(ra, cosA[i]), got.Model.Rejection().Reject(rg, cosG[i])
			if slices.Index(ra, slices.Max(ra)) != slices.Index(rg, slices.Max(rg)) || ua != ug || math.Float64bits(pa) != math.Float64bits(pg) {
				t.Fatalf("%s: input %d: unknown=%v probability %v, after A unknown=%v probability %v", what, i, ug, pg, ua, pa)
			}
			if ua {
				unknown++
			}
		}
		if unknown == 0 || unknown == len(test)/d {
			t.Fatalf("%s: %d of %d test inputs unknown: the comparison of the flags proves nothing", what, unknown, len(test)/d)
		}
	}

	hist, err := modelfile.ReadHistory(path, m.ID())
	if err != nil {
		t.Fatal(err)
	}
	e, err := UndoLast(ctx, m, hist)
	if err != nil {
		t.Fatal(err)
	}
	check("after the undo", m)
	// the server journals the undo without saving the model whole: a load
	// replays it on the checkpoint after B
	j, _, err := modelfile.OpenJournal(path, m.Checkpoint())
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Append(e); err != nil {
		t.Fatal(err)
	}
	j.Close()
	back, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if back.Model.Version() != m.Model.Version() {
		t.Fatalf("reloaded at version %d, want %d", back.Model.Version(), m.Model.Version())
	}
	check("reloaded, the undo replayed from the journal", back)
	// the next learn calibrates with the share after A again
	xc, nc := data(30, 0, 2)
	if res, err := back.Learn(ctx, xc, nc, nil, deploy.LearnOptions{}); err != nil || res.Rejection.Keep != rejA.Keep {
		t.Fatalf("a learn after the undo: %+v, %v; want keep %g", res.Rejection, err, rejA.Keep)
	}

	// a learn entry of an older journal has no calibration: the undo keeps
	// the model's own (the rejection after B)
	hist, err = modelfile.ReadHistory(path, m.ID())
	if err != nil {
		t.Fatal(err)
	}
	old, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	lambdaBefore := old.Model.Lambda()
	if _, err := old.Learn(ctx, xb, nb, nil, deploy.LearnOptions{}); err != nil {
		t.Fatal(err)
	}
	legacy := LearnEntry(old.Model.Version(), Prior{Lambda: lambdaBefore}, xb, nb, d, deploy.LearnOptions{})
	legacy.Calibration = nil
	rb := old.Model.Rejection()
	if _, err := UndoLast(ctx, old, append(hist, legacy)); err != nil {
		t.Fatal(err)
	}
	if got := old.Model.Rejection(); got != rb {
		t.Fatalf("undo of a learn without a recorded calibration: %+v, want the model's own %+v", got, rb)
	}
}

// sameBits: a and b hold the same float32 values bit for bit.
func sameBits(a, b []float32) bool {
	return slices.EqualFunc(a, b, func(x, y float32) bool { return math.Float32bits(x) == math.Float32bits(y) })
}
