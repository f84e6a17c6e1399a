package watch_test

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/deploy"
	"github.com/flycl/flycl/app/watch"
	"github.com/flycl/flycl/format/modelfile"
	"github.com/flycl/flycl/vision/backbone"
	"github.com/flycl/flycl/vision/backbone/zoo"
	"github.com/flycl/flycl/vision/extract"
)

// TestNewModelClassifierRefusals: a model that cannot classify images is
// refused before any backbone is opened (no classes; no backbone recorded;
// a rejection that does not parse), and a backbone that is not the
// model's is refused by the model's pipeline, naming the model file and
// the field (intake.ResolveExtractor). The built-in SqueezeNet is opened,
// never compiled: no ONNX Runtime.
func TestNewModelClassifierRefusals(t *testing.T) {
	bb, err := extract.OpenBackboneFS("squeezenet", zoo.FS(), "built-in")
	if err != nil {
		t.Fatal(err)
	}
	e, err := extract.NewExtractor(bb, "squeezenet", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	own := e.Pipeline()
	other := *own // another backbone's weights
	other.WeightsHash = strings.Repeat("0", 64)
	const d = 16
	cfg := flycl.Config{M: 64, P: 4, K: 16, Seed: 1}
	empty, err := deploy.New(cfg, d, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	learned, err := deploy.New(cfg, d, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	x := make([]float32, 4*d)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	if _, err := learned.Learn(context.Background(), x, []string{"a", "b", "a", "b"}, nil, deploy.LearnOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name     string
		p        *flycl.Predictor
		pipeline *modelfile.Pipeline
		unknown  string
		err      string
		opened   int
	}{
		{"no classes", empty.Model.Snapshot().Predictor(), own, "auto", "cam.flycl has no classes yet", 0},
		{"no backbone recorded", learned.Model.Snapshot().Predictor(), nil, "auto", "cam.flycl learned from feature vectors: it has no backbone to classify frames with", 0},
		{"bad rejection", learned.Model.Snapshot().Predictor(), own, "often", "--unknown", 0},
		{"not the model's backbone", learned.Model.Snapshot().Predictor(), &other, "off", "cam.flycl: backbone squeezenet: backbone squeezenet (weights " + bb.Hash[:12] + ") is not the model's", 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			opened := 0
			_, _, err := watch.NewModelClassifier(context.Background(), c.p, c.pipeline, watch.ModelOptions{Name: "cam.flycl", What: "frames", Unknown: c.unknown,
				Open: func(extract.BackboneSpec) (*backbone.Model, error) { opened++; return bb, nil }})
			if err == nil || !strings.Contains(err.Error(), c.err) || opened != c.opened {
				t.Fatalf("error %v (%d backbones opened), want one naming %q (%d opened)", err, opened, c.err, c.opened)
			}
		})
	}
}
