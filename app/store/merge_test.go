package store

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/deploy"
	"github.com/flycl/flycl/format/modelfile"
)

// TestMerge: merged statistics teach the stored model the task as one
// durable change that the history records as a merge; the model scores
// as one that learned the samples themselves (tolerance: G summed in
// float64 here, in float32 there, over a few O(10) products; 1e-3 of the
// largest score).
func TestMerge(t *testing.T) {
	ctx := context.Background()
	x := []float32{1, 2, 3, 3, 2, 1, 1.5, 2, 2.5, 2.5, 2, 1.5}
	labels := []int{0, 1, 0, 1}
	names := []string{"a", "b", "a", "b"}
	worker, err := flycl.New(cfg, 3)
	if err != nil {
		t.Fatal(err)
	}
	ts, err := worker.TaskStats(ctx, x, labels)
	if err != nil {
		t.Fatal(err)
	}
	keys := make([]string, len(labels))
	for i := range keys {
		keys[i] = fmt.Sprintf("t#%d", i)
	}
	f, err := modelfile.NewStatsFile(worker, nil, ts, []string{"a", "b"}, keys, modelfile.Shard{Index: 0, Count: 1, Source: "t"})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "m.flycl")
	st := create(t, path, true)
	v := st.model.Model.Version()
	rec, err := st.Merge(ctx, f, 0)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Samples != len(labels) || st.model.Model.Version() != v+1 {
		t.Errorf("record of %d samples, version %d after %d", rec.Samples, st.model.Model.Version(), v)
	}
	st.Close()
	st = create(t, path, true)
	defer st.Close()
	hist, err := st.History()
	if err != nil || len(hist) == 0 || hist[len(hist)-1].Op != "merge" {
		t.Fatalf("history %v, %v: want a merge last", hist, err)
	}
	truth, err := deploy.New(cfg, 3, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := truth.Learn(ctx, x, names, nil, deploy.LearnOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := st.model.Model.Predictor().Scores(ctx, x)
	if err != nil {
		t.Fatal(err)
	}
	want, err := truth.Model.Predictor().Scores(ctx, x)
	if err != nil {
		t.Fatal(err)
	}
	diff, scale := 0.0, 0.0
	for i := range want {
		diff = math.Max(diff, math.Abs(float64(got[i]-want[i])))
		scale = math.Max(scale, math.Abs(float64(want[i])))
	}
	if diff > 1e-3*scale {
		t.Errorf("scores differ by %g (largest %g) from a model that learned the samples", diff, scale)
	}
	// a merge that fails changes nothing
	v = st.model.Model.Version()
	if _, err := st.Merge(ctx, f, math.NaN()); err == nil {
		t.Error("λ NaN: no error")
	}
	if st.model.Model.Version() != v {
		t.Errorf("a refused merge moved the version to %d from %d", st.model.Model.Version(), v)
	}
}
