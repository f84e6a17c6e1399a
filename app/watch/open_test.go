package watch_test

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/deploy"
	"github.com/flycl/flycl/app/locate"
	"github.com/flycl/flycl/app/store"
	"github.com/flycl/flycl/app/watch"
	"github.com/flycl/flycl/format/modelfile"
	"github.com/flycl/flycl/vision/backbone"
	"github.com/flycl/flycl/vision/backbone/zoo"
	"github.com/flycl/flycl/vision/extract"
)

// TestOpenFile: OpenFile reads the model file at path (a missing file is
// refused naming it), refuses a model
// learned from feature vectors before any backbone is opened, loads ONNX
// Runtime through the resolver it is given (its --ort-lib flag is the
// library tried) when no Open is given, and opens the backbone with
// ModelOptions.Open when one is (a backbone that is not the model's is
// then refused naming the file).
func TestOpenFile(t *testing.T) {
	bb, err := extract.OpenBackboneFS("squeezenet", zoo.FS(), "built-in")
	if err != nil {
		t.Fatal(err)
	}
	e, err := extract.NewExtractor(bb, "squeezenet", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	other := *e.Pipeline()
	other.WeightsHash = strings.Repeat("0", 64)
	const d = 512 // SqueezeNet's features
	dir := t.TempDir()
	save := func(name string, p *modelfile.Pipeline) string {
		m, err := deploy.New(flycl.Config{M: 64, P: 4, K: 16, Seed: 1}, d, nil, p)
		if err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewPCG(1, 2))
		x := make([]float32, 4*d)
		for i := range x {
			x[i] = float32(r.NormFloat64())
		}
		if _, err := m.Learn(context.Background(), x, []string{"a", "b", "a", "b"}, nil, deploy.LearnOptions{}); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, name)
		if err := store.Save(context.Background(), path, m); err != nil {
			t.Fatal(err)
		}
		return path
	}
	features, own, notOwn := save("features.flycl", nil), save("own.flycl", e.Pipeline()), save("other.flycl", &other)
	noORT := locate.Resolver{Flags: map[string]string{locate.FlagORTLib: filepath.Join(dir, "no-libonnxruntime.so")}}
	counted := func(n *int) watch.ModelOptions {
		return watch.ModelOptions{What: "frames", Unknown: "auto", Open: func(extract.BackboneSpec) (*backbone.Model, error) { *n++; return bb, nil }}
	}
	for _, c := range []struct {
		name   string
		path   string
		o      func(*int) watch.ModelOptions
		r      locate.Resolver
		err    string
		opened int
	}{
		{"missing", filepath.Join(dir, "none.flycl"), counted, locate.Resolver{}, filepath.Join(dir, "none.flycl"), 0},
		{"features", features, counted, locate.Resolver{}, features + " learned from feature vectors: it has no backbone to classify frames with", 0},
		{"ONNX Runtime through the resolver", own, func(*int) watch.ModelOptions { return watch.ModelOptions{What: "frames", Unknown: "auto"} }, noORT, "no-libonnxruntime.so", 0},
		{"not the model's backbone", notOwn, counted, noORT, notOwn + ": backbone squeezenet", 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			opened := 0
			f, err := watch.OpenFile(context.Background(), c.path, c.o(&opened), c.r, nil)
			if err == nil {
				f.Close()
			}
			if err == nil || !strings.Contains(err.Error(), c.err) || opened != c.opened {
				t.Fatalf("error %v (%d backbones opened), want one naming %q (%d opened)", err, opened, c.err, c.opened)
			}
		})
	}
}
