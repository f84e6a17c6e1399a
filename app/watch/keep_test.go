package watch

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/deploy"
)

// ParseRejection's keep:SHARE on a learned model: at the share the model
// calibrated to it is the model's own threshold; a smaller share takes a
// higher threshold, and the share of the pooled learned samples it keeps
// (counted one by one) is at least the share asked less one sample;
// auto, off and a number are reject.ParseRule's.
func TestParseRejectionKeep(t *testing.T) {
	m, err := deploy.New(flycl.Config{M: 64, P: 3, K: 16, Seed: 1}, 3, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 4))
	var x []float32
	var y []string
	for i := range 40 {
		c := i % 2
		x = append(x, float32(c)+0.3*float32(r.NormFloat64()), 0.3*float32(r.NormFloat64()), 1)
		y = append(y, []string{"cat", "dog"}[c])
	}
	if _, err := m.Learn(context.Background(), x, y, nil, deploy.LearnOptions{}); err != nil {
		t.Fatal(err)
	}
	sn := m.Model.Snapshot()
	cal, pool := sn.Predictor().Rejection(), sn.State().CalibrationPool
	if !cal.Enabled() {
		t.Fatal("no calibrated rejection")
	}
	own, err := ParseRejection("keep:0.95", cal, pool)
	if err != nil || own.Threshold != cal.Threshold {
		t.Fatalf("keep:0.95: %v %v, want the model's threshold %g", own, err, cal.Threshold)
	}
	half, err := ParseRejection("keep:50%", cal, pool)
	if err != nil || !(half.Threshold > cal.Threshold) {
		t.Fatalf("keep:50%%: %v %v, want a threshold above %g", half, err, cal.Threshold)
	}
	typ, _ := cal.Typicality(pool)
	var vals []float64
	for i := 0; i < len(pool); i += 2 {
		vals = append(vals, (float64(pool[i])-cal.TopMean)/cal.TopStd+(float64(pool[i+1])-cal.CosMean)/cal.CosStd)
	}
	kept := 0
	for _, v := range vals {
		if v >= half.Threshold {
			kept++
		}
	}
	if n := typ.Samples(); n != len(vals) || float64(kept) < 0.5*float64(n)-1 {
		t.Errorf("keep:50%% keeps %d of %d pooled samples", kept, n)
	}
	if got, err := ParseRejection("auto", cal, pool); err != nil || got != cal {
		t.Errorf("auto: %v %v", got, err)
	}
	if got, err := ParseRejection("-1.5", cal, pool); err != nil || got.Threshold != -1.5 || got.Keep != 0 {
		t.Errorf("-1.5: %v %v", got, err)
	}
	for _, bad := range []string{"keep:2", "keep:", "often"} {
		if _, err := ParseRejection(bad, cal, pool); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if _, err := ParseRejection("keep:0.9", cal, nil); err == nil {
		t.Errorf("keep without a pool accepted")
	}
}
