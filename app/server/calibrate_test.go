package server

import (
	"context"
	"encoding/base64"
	"fmt"
	"image/color"
	"math"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/format/modelfile"
	"github.com/flycl/flycl/vision/imageio"
)

// scaledGrid stands in for an extractor that waits for its calibration: gridExtractor's features divided
// by the largest of them over the calibration images (as an int8
// calibration records activation ranges), not usable before calibration.
type scaledGrid struct {
	scale atomic.Pointer[float32]
	calls atomic.Int32
}

func (g *scaledGrid) Dim() int         { return testDim }
func (g *scaledGrid) Name() string     { return "scaled-grid" }
func (g *scaledGrid) Calibrated() bool { return g.scale.Load() != nil }

func (g *scaledGrid) Features(ctx context.Context, imgs []*imageio.RGB) ([]float32, error) {
	s := g.scale.Load()
	if s == nil {
		return nil, fmt.Errorf("Features before calibration")
	}
	x, err := gridExtractor{}.Features(ctx, imgs)
	for i := range x {
		x[i] /= *s
	}
	return x, err
}

func (g *scaledGrid) Calibrate(ctx context.Context, n int, image func(int) (*imageio.RGB, error)) (*modelfile.Pipeline, error) {
	g.calls.Add(1)
	top := gridMax(ctx, n, image)
	if top.err != nil {
		return nil, top.err
	}
	g.scale.Store(&top.max)
	return scaledPipeline(top.max), nil
}

type gridTop struct {
	max float32
	err error
}

// gridMax is the largest grid feature of n images.
func gridMax(ctx context.Context, n int, image func(int) (*imageio.RGB, error)) gridTop {
	var top float32
	for i := range n {
		im, err := image(i)
		if err != nil {
			return gridTop{err: err}
		}
		x, _ := gridExtractor{}.Features(ctx, []*imageio.RGB{im})
		top = max(top, slices.Max(x))
	}
	return gridTop{max: top}
}

func scaledPipeline(max float32) *modelfile.Pipeline {
	return &modelfile.Pipeline{Backbone: "scaled-grid", Name: "scaled-grid", WeightsHash: "grid", Output: "features", Dim: testDim,
		Transform: modelfile.Transform{Resize: 1, Crop: 1, Std: [3]float32{1, 1, 1}}, Precision: "int8", Calibration: fmt.Sprintf("0 %v", max)}
}

// TestCalibrateOnFirstLearn: a server whose backbone waits for its int8
// calibration (a new model served with --precision int8) refuses predicts
// of images and learns of feature vectors with a 4xx; a first learn whose
// image is corrupt is refused (400) and calibrates nothing; the next
// learn of images calibrates the backbone on exactly its images, once
// (later learns do not), and the model file records the calibrated
// pipeline; predictions equal, bit for bit, the scores of a model that
// the core learned directly from the features calibrated by hand.
func TestCalibrateOnFirstLearn(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.flycl")
	cal := &scaledGrid{}
	s, err := New(Config{Backend: newFileBackend(t, path), Extractor: cal})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	hs := newLoopbackServer(t, s)
	red, blue := color.RGBA{200, 30, 30, 255}, color.RGBA{30, 30, 200, 255}
	imgs := [][]byte{pngOf(t, 16, 16, red, 1), pngOf(t, 16, 16, red, 2), pngOf(t, 16, 16, blue, 3), pngOf(t, 16, 16, blue, 4)}
	names := []string{"red", "red", "blue", "blue"}
	b64 := func(ims [][]byte) []string {
		var out []string
		for _, im := range ims {
			out = append(out, base64.StdEncoding.EncodeToString(im))
		}
		return out
	}
	code, _, b := do(t, "POST", hs+"/v1/predict", "application/json", jsonBody(t, Request{Images: b64(imgs[:1])}), "", nil)
	if code != http.StatusConflict {
		t.Fatalf("predict before calibration: %d %s", code, b)
	}
	code, _, b = do(t, "POST", hs+"/v1/learn", "application/json", jsonBody(t, Request{Features: [][]float32{make([]float32, testDim)}, Label: "x"}), "", nil)
	if code != http.StatusConflict || !strings.Contains(string(b), "learn images first") {
		t.Fatalf("learn of features before calibration: %d %s", code, b)
	}
	truncated := imgs[0][:len(imgs[0])/2] // a readable header, corrupt data
	code, _, b = do(t, "POST", hs+"/v1/learn", "application/json", jsonBody(t, Request{Images: b64([][]byte{imgs[0], truncated}), Labels: []string{"red", "blue"}}), "", nil)
	if code != http.StatusBadRequest || cal.Calibrated() || s.View().Version() != 0 {
		t.Fatalf("first learn with a corrupt image: %d %s (calibrated %v)", code, b, cal.Calibrated())
	}
	var lr LearnResponse
	if code, _, b := do(t, "POST", hs+"/v1/learn", "application/json", jsonBody(t, Request{Images: b64(imgs), Labels: names}), "", &lr); code != 200 || lr.Version != 1 {
		t.Fatalf("first learn of images: %d %s", code, b)
	}
	// the truth: calibration and features computed here, learned by the core
	dec := imageio.Decoder{}
	top := gridMax(context.Background(), len(imgs), func(i int) (*imageio.RGB, error) { return dec.Decode(imgs[i]) })
	if top.err != nil {
		t.Fatal(top.err)
	}
	f, err := modelfile.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if f.Pipeline == nil || *f.Pipeline != *scaledPipeline(top.max) {
		t.Fatalf("model pipeline %+v, want the calibrated %+v", f.Pipeline, scaledPipeline(top.max))
	}
	feats := func(ims [][]byte) []float32 {
		var x []float32
		for _, im := range ims {
			rgb, err := dec.Decode(im)
			if err != nil {
				t.Fatal(err)
			}
			v, _ := gridExtractor{}.Features(context.Background(), []*imageio.RGB{rgb})
			for _, e := range v {
				x = append(x, e/top.max)
			}
		}
		return x
	}
	ref, err := flycl.New(testConfig(), testDim)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ref.Learn(context.Background(), feats(imgs), []int{0, 0, 1, 1}, nil); err != nil { // red 0, blue 1
		t.Fatal(err)
	}
	more := [][]byte{pngOf(t, 16, 16, blue, 5), pngOf(t, 16, 16, red, 6)}
	var pr PredictResponse
	if code, _, b := do(t, "POST", hs+"/v1/predict", "application/json", jsonBody(t, Request{Images: b64(more), Top: 2}), "", &pr); code != 200 {
		t.Fatalf("predict: %d %s", code, b)
	}
	// The core's predictor.
	want, err := ref.Predictor().Scores(context.Background(), feats(more))
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range pr.Predictions {
		if p.Class != []string{"blue", "red"}[i] {
			t.Errorf("image %d predicted %s", i, p.Class)
		}
		for _, sc := range p.Top {
			w := want[i*2+map[string]int{"red": 0, "blue": 1}[sc.Class]]
			if math.Float32bits(sc.Score) != math.Float32bits(w) {
				t.Errorf("image %d, %s: served %v, the core's %v", i, sc.Class, sc.Score, w)
			}
		}
	}
	if code, _, b := do(t, "POST", hs+"/v1/learn", "application/json", jsonBody(t, Request{Images: b64(more), Labels: []string{"blue", "red"}}), "", nil); code != 200 {
		t.Fatalf("second learn: %d %s", code, b)
	}
	learnFeatures(t, hs, "", [][]float32{make([]float32, testDim)}, []int{0}) // features are fine once calibrated
	if n := cal.calls.Load(); n != 1 {                                        // the first learn (the refused one is refused before calibrating)
		t.Fatalf("Calibrate called %d times, want 1", n)
	}
}
