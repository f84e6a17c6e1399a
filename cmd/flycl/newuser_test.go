package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/flycl/flycl/app/export"
	"github.com/flycl/flycl/app/server/api"
	"github.com/flycl/flycl/app/watch"
	"github.com/flycl/flycl/cmd/internal/cli"
	"github.com/flycl/flycl/format/modelfile"
	"github.com/flycl/flycl/format/onnx"
	"github.com/flycl/flycl/internal/testimages"
	"github.com/flycl/flycl/vision/extract"
	"github.com/flycl/flycl/vision/imageio"
)

// shapeClasses are the drawn classes of the new-user test.
var shapeClasses = []string{"discs", "stripes", "checks"}

// drawnAs is the pattern drawn in place of a photo class of ../shared
// when it is not there (cifarImages, watchPhotos).
var drawnAs = testimages.ForClass

// shapePicture draws one size×size picture of pattern (testimages.Draw).
func shapePicture(pattern string, size int, r *rand.Rand) image.Image {
	img, err := testimages.Draw(pattern, size, r)
	if err != nil {
		panic(err)
	}
	return img
}

// encodePicture encodes img as PNG, or JPEG at quality 90.
func encodePicture(t testing.TB, img image.Image, ext string) []byte {
	t.Helper()
	b, err := testimages.Encode(img, ext)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// shapeImages writes n pictures of each of shapeClasses into
// root/<class>/ (the layout a user teaches from), as JPEG or PNG, and
// returns their paths, class by class.
func shapeImages(t testing.TB, root string, n int, seed uint64, ext string) []string {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 13))
	var out []string
	for _, class := range shapeClasses {
		dir := filepath.Join(root, class)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for i := range n {
			p := filepath.Join(dir, fmt.Sprintf("%s%d.%s", class, i, ext))
			if err := os.WriteFile(p, encodePicture(t, shapePicture(class, 96, r), ext), 0o644); err != nil {
				t.Fatal(err)
			}
			out = append(out, p)
		}
	}
	return out
}

// TestNewUserImagePath walks the image deploy path where a new user stands:
// no ../shared, no models folder (FLYCL_MODELS unset, a working folder of
// its own), only the MobileNetV2 weights built into the binary and
// pictures the test draws. It learns from a folder of JPEGs, predicts
// held-out PNGs (each named as its folder), serves the model and asks it
// about the same pictures (the served answers are predict's), watches a
// video ffmpeg makes of them (every frame's answer is the class shown,
// and the events reach a webhook in order), and exports the model to
// ONNX and runs the export in Node's ONNX Runtime on flycl's own
// preprocessing of the pictures (Node's best class is predict's, its
// scores predict's within a float32 bound). It needs ONNX Runtime, and
// skips each part whose outside tool (ffmpeg, Node's ONNX Runtime) is
// missing, saying so.
func TestNewUserImagePath(t *testing.T) {
	lib, err := filepath.Abs(ortLib(t))
	if err != nil {
		t.Fatal(err)
	}
	bin := buildFlycl(t)              // before the Chdir: it builds this folder
	if os.Getenv("NODE_PATH") == "" { // nodeORT's default, relative to this folder
		nm, err := filepath.Abs("../../.cache/onnxruntime/node_modules")
		if err != nil {
			t.Fatal(err)
		}
		t.Setenv("NODE_PATH", nm)
	}
	t.Setenv(cli.EnvModels, "")
	os.Unsetenv(cli.EnvModels)
	t.Chdir(t.TempDir()) // no ../shared/models beside the working folder
	if d := cli.ModelsDir(); d != "" {
		t.Fatalf("a models folder resolved: %q", d)
	}
	train, held := t.TempDir(), t.TempDir()
	shapeImages(t, train, 4, 1, "jpg")
	test := shapeImages(t, held, 2, 2, "png")
	model := filepath.Join(t.TempDir(), "cam.flycl")

	// learn from the folder: the built-in MobileNetV2
	out, err := runCLI(t, "learn", "--model", model, "--data", "folder:"+train, "--ort-lib", lib, "--cache", "", "--quiet", "--m", "2000", "--p", "50", "--k", "600", "--lambdas", "1,10,100,1000")
	if err != nil || !strings.Contains(out, "classes added (3): checks, discs, stripes") {
		t.Fatalf("learn: %v\n%s", err, out)
	}
	f, err := modelfile.Load(model)
	if err != nil {
		t.Fatal(err)
	}
	if p := f.Pipeline; p == nil || p.Backbone != "mobilenetv2" {
		t.Fatalf("model pipeline %+v, want the built-in mobilenetv2", p)
	}

	// predict: every held-out picture named as its folder
	out, err = runCLI(t, append([]string{"predict", "--model", model, "--ort-lib", lib, "--quiet", "--format", "json", "--top", "3"}, test...)...)
	if err != nil {
		t.Fatalf("predict: %v\n%s", err, out)
	}
	var pred struct {
		Predictions []prediction `json:"predictions"`
	}
	if err := json.Unmarshal([]byte(out), &pred); err != nil || len(pred.Predictions) != len(test) {
		t.Fatalf("predict output (%v):\n%s", err, out)
	}
	for i, p := range pred.Predictions {
		if want := filepath.Base(filepath.Dir(test[i])); len(p.Top) == 0 || p.Top[0].Name != want || p.Input != test[i] {
			t.Fatalf("%s: predicted %+v, want %s", test[i], p.Top, want)
		}
	}

	t.Run("serve", func(t *testing.T) {
		cmd, url, log := startServe(t, bin, "--model", model, "--ort-lib", lib)
		defer func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() }()
		req := api.Request{Top: 3}
		for _, p := range test {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			req.Images = append(req.Images, api.Images(b)...)
		}
		pr, err := api.NewClient(url, "").Predict(context.Background(), req)
		if err != nil || len(pr.Predictions) != len(test) {
			t.Fatalf("served predict: %v %+v\n%s", err, pr, log)
		}
		for i, p := range pr.Predictions {
			// the same pipeline on the same picture: equal up to the float32
			// rounding of ONNX Runtime batches of different sizes
			want := pred.Predictions[i].Top[0]
			if p.Class != want.Name || math.Abs(float64(p.Top[0].Score)-float64(want.Score)) > 1e-4 {
				t.Errorf("%s: served %s %.6f, predict %s %.6f", test[i], p.Class, p.Top[0].Score, want.Name, want.Score)
			}
		}
	})

	t.Run("watch", func(t *testing.T) {
		ff, err := exec.LookPath("ffmpeg")
		if err != nil {
			t.Skipf("ffmpeg not installed (apt-get install ffmpeg): %v", err)
		}
		// frames: each class's first held-out picture, 3 frames each
		sequence := []string{"stripes", "discs", "checks", "stripes"}
		var want []string
		seq := t.TempDir()
		for _, c := range sequence {
			src := filepath.Join(held, c, c+"0.png")
			for range 3 {
				b, err := os.ReadFile(src)
				if err != nil {
					t.Fatal(err)
				}
				os.WriteFile(filepath.Join(seq, fmt.Sprintf("%03d.png", len(want))), b, 0o644)
				want = append(want, c)
			}
		}
		video := filepath.Join(t.TempDir(), "clip.avi")
		if b, err := exec.Command(ff, "-hide_banner", "-loglevel", "error", "-framerate", "4", "-i", filepath.Join(seq, "%03d.png"),
			"-vf", "scale=160:160", "-c:v", "mjpeg", "-q:v", "2", video).CombinedOutput(); err != nil {
			t.Fatalf("make the video: %v: %s", err, b)
		}
		var mu sync.Mutex
		var posted []string
		hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var ev watch.Event
			if err := json.NewDecoder(r.Body).Decode(&ev); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			mu.Lock()
			posted = append(posted, ev.Class)
			mu.Unlock()
		}))
		defer hook.Close()
		out, err := runCLI(t, "watch", "--model", model, "--ort-lib", lib, "--source", video, "--fps", "0", "--unknown", "off",
			"--debounce", "2", "--top", "1", "--webhook", hook.URL)
		if err != nil {
			t.Fatalf("watch: %v\n%s", err, out)
		}
		var answers, events []string
		sc := bufio.NewScanner(strings.NewReader(out))
		for sc.Scan() {
			var l struct{ Type, Answer, Class string }
			if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
				t.Fatalf("watch line %q: %v", sc.Text(), err)
			}
			switch l.Type {
			case "frame":
				answers = append(answers, l.Answer)
			case "event":
				events = append(events, l.Class)
			}
		}
		mu.Lock()
		defer mu.Unlock()
		if !slices.Equal(answers, want) || !slices.Equal(events, sequence) || !slices.Equal(posted, sequence) {
			t.Fatalf("video: answers %v\nwant %v\nevents %v, posted %v, want %v", answers, want, events, posted, sequence)
		}
	})

	t.Run("export", func(t *testing.T) {
		r := nodeORT(t)
		onnxFile := filepath.Join(t.TempDir(), "cam.onnx")
		if out, err := runCLI(t, "export", "--model", model, "--out", onnxFile); err != nil {
			t.Fatalf("export: %v\n%s", err, out)
		}
		graph, err := os.ReadFile(onnxFile)
		if err != nil {
			t.Fatal(err)
		}
		meta, _ := onnx.Metadata(graph)
		var names []string
		if err := json.Unmarshal([]byte(meta[export.MetaClasses]), &names); err != nil || !slices.Equal(names, f.Snapshot.Predictor().Classes().Names()) {
			t.Fatalf("metadata classes %q (%v), want %q", meta[export.MetaClasses], err, f.Snapshot.Predictor().Classes().Names())
		}
		// flycl's preprocessing of the pictures, as the exported graph's
		// users are told to do it
		bm, err := cli.OpenBackbone(f.Pipeline.Backbone) // the built-in weights
		if err != nil {
			t.Fatal(err)
		}
		e, err := extract.ForModel(f.Pipeline, bm, f.Pipeline.Backbone)
		if err != nil {
			t.Fatal(err)
		}
		var x []float32
		for _, p := range test {
			img, err := imageio.Decoder{}.DecodeFile(p)
			if err != nil {
				t.Fatal(err)
			}
			x = append(x, e.Preset.Tensor(img, nil)...)
		}
		size := e.Backbone.Size
		res, err := r.Run(context.Background(), graph, e.Backbone.Input, x, []int{len(test), 3, size, size}, 0)
		if err != nil {
			t.Fatal(err)
		}
		sc := res.Outputs[export.ScoresOutput]
		if sc == nil || len(sc.Float) != len(test)*len(names) {
			t.Fatalf("Node's scores: %+v, want %d×%d", sc, len(test), len(names))
		}
		for i, p := range pred.Predictions {
			row := sc.Float[i*len(names) : (i+1)*len(names)]
			best := names[slices.Index(row, slices.Max(row))]
			// the same graph and ONNX Runtime version as flycl's backbone;
			// the head in float32: scores of magnitude ~1 agree to well
			// within 1e-3 (TestExportImagesNode derives the exact bound)
			var maxDiff float64
			for _, top := range p.Top {
				maxDiff = max(maxDiff, math.Abs(float64(row[slices.Index(names, top.Name)])-float64(top.Score)))
			}
			if best != p.Top[0].Name || maxDiff > 1e-3*max(1, math.Abs(float64(p.Top[0].Score))) {
				t.Errorf("%s: Node says %s (scores %v), flycl predict %+v (largest difference %.3g)", test[i], best, row, p.Top, maxDiff)
			}
		}
	})
}
