package main

import (
	"context"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/flycl/flycl/app/server/api"
	"github.com/flycl/flycl/app/store"
)

// TestServeModelPipeline: serve rebuilds the backbone output and transform
// a model file records, as predict does, so a model learned with a preset
// other than the backbone's own (--preset flycl-in on SqueezeNet, whose
// own is imagenet) is served, not refused, and classifies its training
// images as predict does.
func TestServeModelPipeline(t *testing.T) {
	lib, sq := squeezeNet(t)
	bin := buildFlycl(t)
	dir := cifarImages(t, []string{"airplane", "ship"}, 4)
	model := filepath.Join(t.TempDir(), "cam.flycl")
	if out, err := runCLI(t, "learn", "--model", model, "--ort-lib", lib, "--cache", "", "--quiet", "--data", "folder:"+dir,
		"--backbone", "squeezenet:"+sq, "--preset", "flycl-in", "--m", "2000", "--p", "50", "--k", "600", "--lambdas", "1,10,100,1000"); err != nil {
		t.Fatalf("learn: %v\n%s", err, out)
	}
	imgs, _ := filepath.Glob(filepath.Join(dir, "*", "*.jpg"))
	out, err := runCLI(t, append([]string{"predict", "--model", model, "--ort-lib", lib, "--format", "csv", "--top", "1"}, imgs...)...)
	if err != nil {
		t.Fatal(err)
	}
	cmd, url, log := startServe(t, bin, "--model", model, "--ort-lib", lib)
	defer func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() }()
	var req api.Request
	for _, p := range imgs {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		req.Images = append(req.Images, api.Images(b)...)
	}
	req.Top = 1
	pr, err := api.NewClient(url, "").Predict(context.Background(), req)
	if err != nil || len(pr.Predictions) != len(imgs) {
		t.Fatalf("predict: %v %+v\n%s", err, pr, log)
	}
	// predict's CSV rows, in the order of imgs: input,truth,rank,label,name,score.
	rows := strings.Split(strings.TrimSpace(out), "\n")[1:]
	if len(rows) != len(imgs) {
		t.Fatalf("predict gave %d rows for %d images", len(rows), len(imgs))
	}
	for i, p := range imgs {
		f := strings.Split(rows[i], ",")
		score, err := strconv.ParseFloat(f[5], 64)
		if err != nil || f[0] != p {
			t.Fatalf("predict row %q for %s", rows[i], p)
		}
		// The same pipeline on the same image: equal up to float32
		// rounding of ONNX Runtime batches of different sizes.
		got := pr.Predictions[i].Top[0]
		if got.Class != f[4] || math.Abs(float64(got.Score)-score) > 1e-4 || got.Class != filepath.Base(filepath.Dir(p)) {
			t.Errorf("%s: served %s %.6f, predict %s %.6f", p, got.Class, got.Score, f[4], score)
		}
	}
}

// TestServeInt8NewModel: serve --precision int8 creates a new model whose
// int8 SqueezeNet is calibrated on the images of the first learn, as
// flycl learn --precision int8 calibrates on the folder it learns: the
// same images in the same order give the identical pipeline (calibration
// included); the file restarts as an int8 server (the graph rebuilt from
// the recorded calibration), whose predictions equal flycl predict's on
// the file; --precision fp32 on that model is refused.
func TestServeInt8NewModel(t *testing.T) {
	lib, sq := squeezeNet(t)
	bin := buildFlycl(t)
	dir := cifarImages(t, []string{"airplane", "ship"}, 4)
	tmp := t.TempDir()
	model, ref := filepath.Join(tmp, "cam.flycl"), filepath.Join(tmp, "ref.flycl")
	cfg := []string{"--m", "2000", "--p", "50", "--k", "600", "--lambdas", "1,10,100,1000", "--ort-lib", lib}
	imgs, _ := filepath.Glob(filepath.Join(dir, "*", "*.jpg")) // the folder data set's order: class, then file
	var req api.Request
	for _, p := range imgs {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		req.Images = append(req.Images, api.Images(b)...)
		req.Labels = append(req.Labels, filepath.Base(filepath.Dir(p)))
	}
	ctx := context.Background()
	cmd, url, log := startServe(t, bin, append([]string{"--model", model, "--backbone", "squeezenet:" + sq, "--precision", "int8", "--calib", "4"}, cfg...)...)
	lr, err := api.NewClient(url, "").Learn(ctx, req)
	cmd.Process.Signal(syscall.SIGTERM)
	cmd.Wait()
	if err != nil || lr.Version != 1 || lr.Classes != 2 {
		t.Fatalf("learn: %v %+v\n%s", err, lr, log)
	}
	if _, err := runCLI(t, append([]string{"learn", "--model", ref, "--data", "folder:" + dir, "--backbone", "squeezenet:" + sq,
		"--precision", "int8", "--calib", "4", "--cache", "", "--quiet"}, cfg...)...); err != nil {
		t.Fatal(err)
	}
	got, err := store.LoadFile(model)
	if err != nil {
		t.Fatal(err)
	}
	want, err := store.LoadFile(ref)
	if err != nil {
		t.Fatal(err)
	}
	if got.Pipeline == nil || got.Pipeline.Precision != "int8" || got.Pipeline.Calibration == "" || *got.Pipeline != *want.Pipeline {
		t.Fatalf("served model's pipeline %+v, flycl learn's %+v", got.Pipeline, want.Pipeline)
	}

	out, err := runCLI(t, append([]string{"predict", "--model", model, "--ort-lib", lib, "--format", "csv", "--top", "1"}, imgs...)...)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := runCLI(t, "predict", "--model", model, "--ort-lib", lib, "--precision", "fp32", imgs[0]); err == nil {
		t.Error("predict --precision fp32 of an int8 model: accepted")
	}
	cmd, url, log = startServe(t, bin, "--model", model, "--ort-lib", lib)
	defer func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() }()
	pr, err := api.NewClient(url, "").Predict(ctx, api.Request{Images: req.Images, Top: 1})
	if err != nil {
		t.Fatalf("predict: %v\n%s", err, log)
	}
	rows := strings.Split(strings.TrimSpace(out), "\n")[1:]
	if len(rows) != len(imgs) || len(pr.Predictions) != len(imgs) {
		t.Fatalf("predict gave %d rows, serve %d, for %d images\n%s", len(rows), len(pr.Predictions), len(imgs), log)
	}
	for i, p := range imgs {
		f := strings.Split(rows[i], ",")
		score, err := strconv.ParseFloat(f[5], 64)
		if err != nil || f[0] != p {
			t.Fatalf("predict row %q for %s", rows[i], p)
		}
		// the same int8 pipeline on the same image: equal up to float32
		// rounding of ONNX Runtime batches of different sizes
		g := pr.Predictions[i].Top[0]
		if g.Class != f[4] || math.Abs(float64(g.Score)-score) > 1e-4 {
			t.Errorf("%s: served %s %.6f, predict %s %.6f", p, g.Class, g.Score, f[4], score)
		}
	}
	// (one writer at a time: the first server stops before the second)
	cmd.Process.Signal(syscall.SIGTERM)
	cmd.Wait()
	bad := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--model", model, "--ort-lib", lib, "--precision", "fp32")
	if b, err := bad.CombinedOutput(); err == nil || !strings.Contains(string(b), "learned with int8") {
		t.Errorf("serve --precision fp32 of an int8 model: %v\n%s", err, b)
	}
}
