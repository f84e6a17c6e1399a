package extract

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/png"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flycl/flycl/format/features"
	"github.com/flycl/flycl/vision/backbone"
	"github.com/flycl/flycl/vision/dataset"
)

// squeezeNetFolder opens the shared SqueezeNet and a folder data set of n
// random images (writeImages), and the folder, for the tests that run the backbone; it
// skips without the shared weights or ONNX Runtime.
func squeezeNetFolder(t *testing.T, n int) (*backbone.Model, dataset.Dataset, string) {
	t.Helper()
	m, err := OpenBackbone("squeezenet", filepath.Join("..", "..", "..", "shared", "models"))
	if err != nil {
		t.Skipf("shared SqueezeNet not available: %v", err)
	}
	if err := backbone.Init(testLibrary()); err != nil {
		t.Skipf("%v", err)
	}
	root := t.TempDir()
	writeImages(t, root, n)
	ds, err := dataset.Open("folder:"+root, "train")
	if err != nil {
		t.Fatal(err)
	}
	return m, ds, root
}

func writeImages(t *testing.T, root string, n int) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < n; i++ {
		img := image.NewNRGBA(image.Rect(0, 0, 40+i, 30))
		for j := range img.Pix {
			img.Pix[j] = uint8(r.IntN(256))
			if j%4 == 3 {
				img.Pix[j] = 255
			}
		}
		var b bytes.Buffer
		png.Encode(&b, img)
		dir := filepath.Join(root, "train", []string{"a", "b"}[i%2])
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, string(rune('a'+i))+".png"), b.Bytes(), 0o644)
	}
}

// TestCacheAndResume: features equal a direct run of the session; a second
// run comes from the cache; a run cancelled after its first chunk resumes
// from it and gives the same features.
func TestCacheAndResume(t *testing.T) {
	m, ds, root := squeezeNetFolder(t, 7)
	// reference: preprocess and run directly
	sess, err := m.NewSession(0)
	if err != nil {
		t.Fatal(err)
	}
	per := 3 * 224 * 224
	x := make([]float32, ds.Len()*per)
	for i := 0; i < ds.Len(); i++ {
		img, _ := ds.Image(i)
		m.Preset.Tensor(img, x[i*per:(i+1)*per])
	}
	ref, err := sess.Run(x, ds.Len())
	sess.Close()
	if err != nil {
		t.Fatal(err)
	}

	cache := filepath.Join(t.TempDir(), "cache")
	job := func() *Job {
		return &Job{Data: ds, DataKey: dataKey(t, "folder:"+root, "train"), Model: m, Preset: m.Preset,
			CacheDir: cache, BatchSize: 2, Chunk: 4}
	}
	// interrupted after the first chunk
	ctx, cancel := context.WithCancel(context.Background())
	j := job()
	j.Progress = func(done, total int, rate float64) {
		if done >= 4 {
			cancel()
		}
	}
	if _, _, err := Run(ctx, j); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled run: %v", err)
	}
	if _, err := os.Stat(j.chunkPath(0)); err != nil {
		t.Fatal("first chunk not saved")
	}
	j = job()
	var progressed []int
	j.Progress = func(done, total int, rate float64) { progressed = append(progressed, done) }
	s, cached, err := Run(context.Background(), j)
	if err != nil || cached {
		t.Fatalf("resumed run: %v cached=%v", err, cached)
	}
	if len(progressed) == 0 || progressed[0] <= 4 {
		t.Errorf("resumed run redid the first chunk: progress %v", progressed)
	}
	var worst float32
	for i, v := range ref[0] {
		worst = max(worst, v-s.X[i], s.X[i]-v)
	}
	if worst > 1e-5 {
		t.Errorf("features differ from a direct run by %g", worst)
	}
	if !slices.Equal(s.Labels, []int{0, 0, 0, 0, 1, 1, 1}) || s.ClassNames[1] != "b" || s.ExtractSeconds <= 0 {
		t.Errorf("labels %v classes %v", s.Labels, s.ClassNames)
	}
	again, cached, err := Run(context.Background(), job())
	if err != nil || !cached || !slices.Equal(again.X, s.X) {
		t.Fatalf("second run: cached=%v err=%v", cached, err)
	}
	if parts, _ := filepath.Glob(filepath.Join(cache, "*.part*")); len(parts) != 0 {
		t.Errorf("chunk files left: %v", parts)
	}
	// a different preset is a different cache entry
	j = job()
	j.Preset.Resize = 240
	if j.Key() == job().Key() {
		t.Error("cache key ignores the transform")
	}
}

func TestOpenBackboneErrors(t *testing.T) {
	// Each error names the spec once: callers (flycl learn, extract, serve)
	// add hints, not the spec again.
	for _, spec := range []string{"alexnet", "squeezenet:/nonexistent", "resnet50", "vit:/nonexistent@x"} {
		_, err := OpenBackbone(spec, "")
		if err == nil {
			t.Errorf("%s: no error", spec)
			continue
		}
		if msg := err.Error(); !strings.HasPrefix(msg, "backbone "+spec+": ") || strings.Count(msg, "backbone "+spec) != 1 {
			t.Errorf("%s: error %q should start with %q and name the spec once", spec, msg, "backbone "+spec+": ")
		}
	}
}

func dataKey(t *testing.T, spec, split string) string {
	t.Helper()
	s, err := dataset.ParseSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	k, err := s.Key(split)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestCacheFollowsContent: a cached extraction is found again for the same
// images, and replacing one image of the folder is a miss (issue 11 §2). No
// ONNX Runtime is needed: a hit never starts a session, and a miss is seen
// as an attempt to run the (empty) model.
func TestCacheFollowsContent(t *testing.T) {
	root, cache := t.TempDir(), t.TempDir()
	writeImages(t, root, 5)
	m := &backbone.Model{Name: "fake", Hash: "0", Outputs: []string{"f"}, Dims: []int{3}}
	job := func() *Job {
		ds, err := dataset.Open("folder:"+root, "train")
		if err != nil {
			t.Fatal(err)
		}
		return &Job{Data: ds, DataKey: dataKey(t, "folder:"+root, "train"), Model: m, CacheDir: cache}
	}
	j := job()
	// what an earlier extraction of these images left in the cache
	s := &features.Set{N: 5, D: 3, X: make([]float32, 15), Labels: []int{0, 0, 0, 1, 1}}
	for i := range s.X {
		s.X[i] = float32(i)
	}
	if err := os.MkdirAll(j.CacheDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := features.Save(j.CachePath(), s); err != nil {
		t.Fatal(err)
	}
	got, cached, err := Run(context.Background(), job())
	if err != nil || !cached || !slices.Equal(got.X, s.X) {
		t.Fatalf("same images: cached=%v err=%v", cached, err)
	}
	// replace one image (a new file, as a copy or a re-download makes it)
	p := filepath.Join(root, "train", "a", "c.png")
	old, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	tmp := p + ".new"
	changed := append([]byte(nil), old...)
	changed[len(changed)/2] ^= 1
	if err := os.WriteFile(tmp, changed, 0o644); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(p)
	os.Chtimes(tmp, st.ModTime().Add(time.Second), st.ModTime().Add(time.Second))
	if err := os.Rename(tmp, p); err != nil {
		t.Fatal(err)
	}
	if _, cached, _ := Run(context.Background(), job()); cached {
		t.Fatal("a replaced image still hits the cache")
	}
}
