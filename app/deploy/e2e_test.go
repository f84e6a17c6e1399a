package deploy

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"github.com/flycl/flycl/app/intake"
	"io"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/format/features"
	"github.com/flycl/flycl/format/modelfile"
	"github.com/flycl/flycl/internal/testimages"
	"github.com/flycl/flycl/vision/backbone"
	"github.com/flycl/flycl/vision/backbone/zoo"
	"github.com/flycl/flycl/vision/dataset"
	"github.com/flycl/flycl/vision/extract"
)

const shared = "../../../shared"

func testLibrary() string {
	if p := os.Getenv("FLYCL_ORT_LIB"); p != "" {
		return p
	}
	return "../../.cache/onnxruntime/node_modules/onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime.so.1"
}

// cifarFolder copies the first nTrain and nTest JPEGs of some CIFAR-10
// classes from the shared archive into DIR/<split>/<class>/; without
// ../shared, drawnFolder draws them.
func cifarFolder(t testing.TB, classes []string, nTrain, nTest int) string {
	t.Helper()
	f, err := os.Open(filepath.Join(shared, "data", "cifar10-jpeg.tar.gz"))
	if errors.Is(err, fs.ErrNotExist) {
		return drawnFolder(t, classes, nTrain, nTest)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	want := map[string]int{"train": nTrain, "test": nTest}
	got := map[string]int{}
	need := len(classes) * (nTrain + nTest)
	tr := tar.NewReader(zr)
	for need > 0 {
		h, err := tr.Next()
		if err != nil {
			t.Fatalf("archive ended with %d images missing: %v", need, err)
		}
		parts := strings.Split(h.Name, "/")
		if h.Typeflag != tar.TypeReg || len(parts) != 3 || !slices.Contains(classes, parts[1]) || got[parts[0]+parts[1]] >= want[parts[0]] {
			continue
		}
		got[parts[0]+parts[1]]++
		need--
		p := filepath.Join(dir, parts[0], parts[1], parts[2])
		os.MkdirAll(filepath.Dir(p), 0o755)
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(p, b, 0o644)
	}
	return dir
}

// drawnFolder writes nTrain and nTest 32×32 JPEGs (CIFAR's size) of each
// class into DIR/<split>/<class>/, drawn in the class's pattern
// (testimages.ForClass).
func drawnFolder(t testing.TB, classes []string, nTrain, nTest int) string {
	t.Helper()
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(uint64(nTrain), uint64(nTest)))
	for _, split := range []struct {
		name string
		n    int
	}{{"train", nTrain}, {"test", nTest}} {
		for _, c := range classes {
			pattern, ok := testimages.ForClass[c]
			if !ok {
				t.Fatalf("no drawn pattern for class %q (testimages.ForClass)", c)
			}
			os.MkdirAll(filepath.Join(dir, split.name, c), 0o755)
			for i := range split.n {
				img, err := testimages.Draw(pattern, 32, r)
				if err != nil {
					t.Fatal(err)
				}
				b, err := testimages.Encode(img, "jpg")
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, split.name, c, fmt.Sprintf("%d.jpg", i)), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	return dir
}

// squeezeNet opens the shared weights of backbone name, or without
// ../shared the weights built into flycl (vision/backbone/zoo), and ONNX Runtime.
func squeezeNet(t testing.TB, name string) *backbone.Model {
	t.Helper()
	m, err := extract.OpenBackbone(name, filepath.Join(shared, "models"))
	if _, serr := os.Stat(shared); err != nil && errors.Is(serr, fs.ErrNotExist) {
		m, err = extract.OpenBackboneFS(name, zoo.FS(), "built-in")
	}
	if err != nil {
		t.Skipf("%s not available: %v", name, err)
	}
	if err := backbone.Init(testLibrary()); err != nil {
		t.Skipf("ONNX Runtime not available: %v", err)
	}
	return m
}

func subset(t *testing.T, s *features.Set, classes ...string) ([]float32, []string) {
	names, err := intake.Names(s.Labels, s.ClassNames)
	if err != nil {
		t.Fatal(err)
	}
	var x []float32
	var y []string
	for i, n := range names {
		if slices.Contains(classes, n) {
			x = append(x, s.Row(i)...)
			y = append(y, n)
		}
	}
	return x, y
}

func sameBits(a, b []float32) bool {
	return slices.EqualFunc(a, b, func(x, y float32) bool { return math.Float32bits(x) == math.Float32bits(y) })
}

// TestEndToEndRealImages: CIFAR-10 JPEGs through SqueezeNet. Learn two
// tasks, save, reload: identical scores; the reloaded model classifies
// image files (through the pipeline stored in the file) exactly as it
// classifies the data set's features; forgetting a class with its data
// gives the predictions of a model that never saw it; a different
// backbone is refused. Without ../shared: drawn pictures (drawnFolder)
// through the built-in weights.
func TestEndToEndRealImages(t *testing.T) {
	ctx := context.Background()
	bm := squeezeNet(t, "squeezenet")
	dir := cifarFolder(t, []string{"bird", "cat", "ship"}, 8, 4)
	e, err := extract.NewExtractor(bm, "squeezenet", "features", nil)
	if err != nil {
		t.Fatal(err)
	}
	load := func(split string) *features.Set {
		ds, key, err := intake.OpenData(dataset.Spec{Kind: "folder", Path: dir}, split)
		if err != nil {
			t.Fatal(err)
		}
		s, _, err := e.Dataset(ctx, ds, key)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	train, test := load("train"), load("test")
	cfg := flycl.Config{M: 2000, P: 50, K: 600, Seed: 4, Lambdas: []float64{1, 10, 100, 1000, 1e4}}
	model, err := New(cfg, train.D, nil, e.Pipeline())
	if err != nil {
		t.Fatal(err)
	}
	never, _ := New(cfg, train.D, nil, e.Pipeline())
	x1, y1 := subset(t, train, "bird", "cat")
	x2, y2 := subset(t, train, "ship")
	for _, m := range []*Model{model, never} {
		if _, err := m.Learn(ctx, x1, y1, e.Pipeline(), LearnOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	res, err := model.Learn(ctx, x2, y2, e.Pipeline(), LearnOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Added, []string{"ship"}) || model.Model.Version() != 2 {
		t.Fatalf("added %v version %d", res.Added, model.Model.Version())
	}

	back, err := roundTrip(model)
	if err != nil {
		t.Fatal(err)
	}
	want, err := model.Model.Predictor().Scores(ctx, test.X)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := back.Model.Predictor().Scores(ctx, test.X)
	if !sameBits(got, want) {
		t.Fatal("reloaded model scores differ")
	}
	if !slices.Equal(back.Model.Classes().Names(), []string{"bird", "cat", "ship"}) || !slices.Equal(back.Model.Classes().Counts(), []int{8, 8, 8}) {
		t.Fatalf("reloaded classes %v counts %v", back.Model.Classes().Names(), back.Model.Classes().Counts())
	}
	// Image files through the pipeline stored in the file.
	e2, err := extract.ForModel(back.Pipeline, bm, "squeezenet")
	if err != nil {
		t.Fatal(err)
	}
	fromFiles, err := e2.Files(ctx, test.Paths)
	if err != nil {
		t.Fatal(err)
	}
	got, _ = back.Model.Predictor().Scores(ctx, fromFiles.X)
	if !sameBits(got, want) {
		t.Fatal("scores of image files differ from those of the data set")
	}
	testNames, _ := intake.Names(test.Labels, test.ClassNames)
	top, _ := back.Model.Predictor().Top(ctx, test.X, 1)
	hit := 0
	for i, r := range top {
		if r[0].Name == testNames[i] {
			hit++
		}
	}
	t.Logf("accuracy on %d test images: %d/%d", len(top), hit, len(top))

	// Forget ship with its data, on the reloaded model.
	if _, exact, err := back.Forget(ctx, "ship", x2, e.Pipeline()); err != nil || !exact {
		t.Fatalf("forget: exact %v, %v", exact, err)
	}
	pa, err := back.Model.Predictor().Predict(ctx, test.X)
	if err != nil {
		t.Fatal(err)
	}
	pb, _ := never.Model.Predictor().Predict(ctx, test.X)
	if !slices.Equal(pa, pb) || !slices.Equal(back.Model.Classes().Names(), never.Model.Classes().Names()) || back.Model.Lambda() != never.Model.Lambda() {
		t.Fatalf("forgotten model %v λ=%g predicts %v; never-seen %v λ=%g predicts %v",
			back.Model.Classes().Names(), back.Model.Lambda(), pa, never.Model.Classes().Names(), never.Model.Lambda(), pb)
	}

	// Another backbone's features are refused, and so is its extractor.
	mnv2 := squeezeNet(t, "mobilenetv2")
	if _, err := extract.ForModel(back.Pipeline, mnv2, "mobilenetv2"); err == nil || !strings.Contains(err.Error(), "not the model's") {
		t.Fatalf("mobilenetv2 for a squeezenet model: %v", err)
	}
	other, _ := extract.NewExtractor(mnv2, "mobilenetv2", "features", nil)
	if _, err := back.Learn(ctx, make([]float32, back.Model.InputDim()), []string{"x"}, other.Pipeline(), LearnOptions{}); err == nil {
		t.Fatal("learning with another backbone's pipeline: no error")
	}
}

// roundTrip returns m as a model file's bytes give it back (Encode of
// its FileView, Decode, FromFile): what a save and a load do, without
// the store that writes files.
func roundTrip(m *Model) (*Model, error) {
	var b bytes.Buffer
	if err := modelfile.Encode(&b, m.FileView()); err != nil {
		return nil, err
	}
	f, err := modelfile.Decode(&b)
	if err != nil {
		return nil, err
	}
	return FromFile(f)
}
