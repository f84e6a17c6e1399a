package deploy

import (
	"bytes"
	"context"
	"slices"
	"testing"
	"time"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/format/modelfile"
)

// TestFromFile: a model decoded from bytes keeps its ID, creation time,
// pipeline, classes and scores, and its rejection's calibration; a
// model's identity is set once (SetIdentity leaves an ID alone).
func TestFromFile(t *testing.T) {
	ctx := context.Background()
	m, err := New(flycl.Config{M: 64, P: 2, K: 16, LambdaScale: flycl.LambdaRelative}, 4, nil,
		&modelfile.Pipeline{Backbone: "b", Name: "b", WeightsHash: "h", Output: "features", Dim: 4,
			Transform: modelfile.Transform{Preset: "p", Resize: 8, Crop: 8, Filter: "bilinear", Mean: [3]float32{0.5, 0.5, 0.5}, Std: [3]float32{1, 1, 1}}})
	if err != nil {
		t.Fatal(err)
	}
	id, created := modelfile.NewModelID(), time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)
	m.SetIdentity(id, created)
	m.SetIdentity(modelfile.NewModelID(), created.Add(time.Hour))
	if m.ID() != id || !m.Created.Equal(created) {
		t.Fatalf("SetIdentity replaced an identity: %v %v", m.ID(), m.Created)
	}
	x := []float32{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 1, 0.1, 0, 0, 0, 1, 0.1, 0, 0, 0, 1, 0.1}
	if _, err := m.Learn(ctx, x, []string{"a", "b", "c", "a", "b", "c"}, nil, LearnOptions{}); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := modelfile.Encode(&b, m.File()); err != nil {
		t.Fatal(err)
	}
	f, err := modelfile.Decode(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	got, err := FromFile(f)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID() != id || !got.Created.Equal(created) || got.Pipeline == nil || got.Pipeline.Backbone != "b" ||
		!slices.Equal(got.Model.Classes().Names(), m.Model.Classes().Names()) || got.Model.Version() != m.Model.Version() || got.Model.Rejection() != m.Model.Rejection() {
		t.Errorf("FromFile: id %v created %v pipeline %+v classes %q version %d rejection %+v",
			got.ID(), got.Created, got.Pipeline, got.Model.Classes().Names(), got.Model.Version(), got.Model.Rejection())
	}
	want, _ := m.Model.Predictor().Scores(ctx, x)
	have, _ := got.Model.Predictor().Scores(ctx, x)
	if !slices.Equal(want, have) {
		t.Errorf("scores %v, want %v", have, want)
	}
	// it learns on as the original does
	more := []float32{0, 0, 0, 1, 0.2, 0, 0, 1}
	for _, mm := range []*Model{m, got} {
		if _, err := mm.Learn(ctx, more, []string{"d", "d"}, nil, LearnOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	want, _ = m.Model.Predictor().Scores(ctx, x)
	have, _ = got.Model.Predictor().Scores(ctx, x)
	if !slices.Equal(want, have) {
		t.Errorf("after a learn: scores %v, want %v", have, want)
	}
}
