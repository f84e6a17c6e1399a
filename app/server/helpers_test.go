package server

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"io"
	"math/rand/v2"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/flycl/flycl/app/deploy"
	"github.com/flycl/flycl/app/store"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/vision/imageio"
)

// testDim is the feature dimension of the test models: gridExtractor's
// 2×2 grid of mean R, G, B.
const testDim = 12

// gridExtractor is a backbone stand-in for tests that need no ONNX
// Runtime: the mean colour of each quarter of the image.
type gridExtractor struct{}

func (gridExtractor) Dim() int     { return testDim }
func (gridExtractor) Name() string { return "grid-mean" }
func (gridExtractor) Features(ctx context.Context, imgs []*imageio.RGB) ([]float32, error) {
	out := make([]float32, 0, len(imgs)*testDim)
	for _, im := range imgs {
		var sum [12]float64
		var cnt [4]float64
		for y := range im.H {
			for x := range im.W {
				q := 2*(2*y/im.H) + 2*x/im.W
				r, g, b := im.At(x, y)
				sum[3*q] += float64(r)
				sum[3*q+1] += float64(g)
				sum[3*q+2] += float64(b)
				cnt[q]++
			}
		}
		for i, v := range sum {
			out = append(out, float32(v/max(cnt[i/3], 1)/255))
		}
	}
	return out, nil
}

// pngOf encodes a w×h image of colour c with a little deterministic noise.
func pngOf(t testing.TB, w, h int, c color.RGBA, seed uint64) []byte {
	t.Helper()
	im := image.NewRGBA(image.Rect(0, 0, w, h))
	r := rand.New(rand.NewPCG(seed, 7))
	for y := range h {
		for x := range w {
			j := func(v uint8) uint8 { return uint8(min(255, max(0, int(v)+r.IntN(31)-15))) }
			im.Set(x, y, color.RGBA{j(c.R), j(c.G), j(c.B), 255})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, im); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// testConfig is a small Fly-CL configuration for d = testDim.
func testConfig() flycl.Config {
	return flycl.Config{M: 300, P: 6, K: 60, Seed: 3, Lambdas: []float64{1e-3, 1e-2, 1e-1, 1, 10}}
}

// newFileBackend opens (creating) a model file in dir.
func newFileBackend(t testing.TB, path string) *FileBackend {
	t.Helper()
	b, err := OpenFile(path, func() (*flycl.Model, error) { return flycl.New(testConfig(), testDim) })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// savedModel reads the model file at path as a reader does (no lock),
// for a test to check what was saved while its writer still runs.
func savedModel(t testing.TB, path string) *deploy.Model {
	t.Helper()
	m, err := store.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// testServer runs a server on a FileBackend in t.TempDir() with the grid
// extractor; edit changes the configuration first.
func testServer(t testing.TB, edit func(*Config)) (*Server, *httptest.Server, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "m.flycl")
	cfg := Config{Backend: newFileBackend(t, path), Extractor: gridExtractor{}}
	if edit != nil {
		edit(&cfg)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(func() { hs.Close(); s.Close() })
	return s, hs, path
}

// clusters draws n feature vectors around the centre of class c (well
// separated: centres are 4 apart, noise has standard deviation 0.3).
func clusters(r *rand.Rand, classes []int, n int) ([][]float32, []int) {
	var x [][]float32
	var y []int
	for i := range n {
		c := classes[i%len(classes)]
		v := make([]float32, testDim)
		for j := range v {
			v[j] = float32(r.NormFloat64() * 0.3)
		}
		v[c%testDim] += 4
		x = append(x, v)
		y = append(y, c)
	}
	return x, y
}

func className(c int) string {
	return []string{"alpha", "beta", "gamma", "delta", "epsilon", "zeta"}[c]
}

// do sends a request and decodes the JSON answer into out (when not nil).
func do(t testing.TB, method, url, ctype string, body []byte, token string, out any) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if out != nil && resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: decode %s: %v", method, url, b, err)
		}
	}
	return resp.StatusCode, resp.Header, b
}

func jsonBody(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// multipartBody builds a form with image files and plain fields.
func multipartBody(t testing.TB, images [][]byte, fields map[string]string) (string, []byte) {
	t.Helper()
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	for i, im := range images {
		p, err := w.CreateFormFile("image", "img"+string(rune('a'+i))+".png")
		if err != nil {
			t.Fatal(err)
		}
		p.Write(im)
	}
	for k, v := range fields {
		w.WriteField(k, v)
	}
	w.Close()
	return w.FormDataContentType(), b.Bytes()
}

// learnFeatures teaches the server x with labels y (class names).
func learnFeatures(t testing.TB, url, token string, x [][]float32, y []int) LearnResponse {
	t.Helper()
	names := make([]string, len(y))
	for i, c := range y {
		names[i] = className(c)
	}
	var lr LearnResponse
	code, _, b := do(t, "POST", url+"/v1/learn", "application/json", jsonBody(t, Request{Features: x, Labels: names}), token, &lr)
	if code != http.StatusOK {
		t.Fatalf("learn: %d %s", code, b)
	}
	return lr
}

// model returns the backend's model, for tests that inspect it between
// changes (the backend itself reaches it only inside store.Store.View,
// Hold and Update).
func (b *FileBackend) model() *deploy.Model {
	var m *deploy.Model
	b.st.Hold(func(dm *deploy.Model) error { m = dm; return nil })
	return m
}
