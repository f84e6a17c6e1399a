package intake

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flycl/flycl/format/modelfile"
	"github.com/flycl/flycl/internal/testimages"
	"github.com/flycl/flycl/vision/backbone"
	"github.com/flycl/flycl/vision/backbone/zoo"
	"github.com/flycl/flycl/vision/dataset"
	"github.com/flycl/flycl/vision/extract"
	"github.com/flycl/flycl/vision/transform"
)

// TestCheckPrecision: the model's recorded precision wins (none recorded
// is fp32); an explicit precision passes only when it is that one.
func TestCheckPrecision(t *testing.T) {
	int8 := &modelfile.Pipeline{Precision: "int8"}
	fp32 := &modelfile.Pipeline{}
	for _, c := range []struct {
		p    *modelfile.Pipeline
		want backbone.Precision
		ok   bool
	}{
		{nil, "", true},
		{nil, backbone.FP32, true},
		{nil, backbone.INT8, false},
		{fp32, "", true},
		{fp32, backbone.FP32, true},
		{fp32, backbone.INT8, false},
		{int8, "", true},
		{int8, backbone.INT8, true},
		{int8, backbone.FP32, false},
	} {
		err := CheckPrecision(c.p, c.want)
		if (err == nil) != c.ok || (err != nil && !errors.Is(err, ErrPrecision)) {
			t.Errorf("CheckPrecision(%v, %q) = %v, want ok=%v (ErrPrecision when refused)", c.p, c.want, err, c.ok)
		}
	}
}

// sharedSqueezeNet opens the shared SqueezeNet weights, or without
// ../shared the same weights built into flycl (no ONNX Runtime needed to
// open, name outputs or compare pipelines).
func sharedSqueezeNet(t *testing.T) *backbone.Model {
	t.Helper()
	dir := filepath.Join("..", "..", "..", "shared", "models")
	var m *backbone.Model
	var err error
	if _, serr := os.Stat(dir); serr != nil {
		m, err = extract.OpenBackboneFS("squeezenet", zoo.FS(), "built-in")
	} else {
		m, err = extract.OpenBackbone("squeezenet", dir)
	}
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestResolveExtractor checks the deployment rules of ResolveExtractor
// case by case against what each rule says: which spec is opened, what a
// trained model's pipeline fixes (output, transform, precision), what a
// new model takes from the options, and which sentinel a refusal wraps.
func TestResolveExtractor(t *testing.T) {
	m := sharedSqueezeNet(t)
	base, err := extract.NewExtractor(m, "squeezenet:/w", "features", nil)
	if err != nil {
		t.Fatal(err)
	}
	model := base.Pipeline() // a model learned with features of the backbone's preset
	logits := *model         // ... with its logits
	logits.Output, logits.Dim = "logits", 1000
	noOutput := *model // ... with an output the backbone lacks
	noOutput.Output = "pool"
	int8 := *model // ... with int8 features
	int8.Precision = "int8"
	otherWeights := *model // ... with another backbone's weights
	otherWeights.WeightsHash = strings.Repeat("0", 64)
	otherDim := *model // ... with features of another dimension
	otherDim.Dim = 7
	other, err := transform.LookupPreset("imagenet-nonorm")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name     string
		o        ExtractorOptions
		wantSpec string // the spec opened and recorded
		output   string // the extractor's output
		preset   string // the extractor's preset name
		err      error  // sentinel of a refusal
		refused  bool   // refused without a sentinel
		field    string // what the refusal names
		pending  bool   // waits for its calibration on the first learn
	}{
		{name: "new model: the default backbone", o: ExtractorOptions{Default: "squeezenet"},
			wantSpec: "squeezenet", output: "features", preset: m.Preset.Name},
		{name: "new model: the spec asked for wins over the default", o: ExtractorOptions{Spec: "squeezenet:/x", Default: "mobilenetv2"},
			wantSpec: "squeezenet:/x", output: "features", preset: m.Preset.Name},
		{name: "untrained model: its pipeline's spec, the options' output and preset", o: ExtractorOptions{Default: "mobilenetv2", Model: model, Output: "logits", Preset: &other},
			wantSpec: "squeezenet:/w", output: "logits", preset: other.Name},
		{name: "trained model: its spec, output and transform", o: ExtractorOptions{Default: "mobilenetv2", Model: &logits, Trained: true, Output: "features"},
			wantSpec: "squeezenet:/w", output: "logits", preset: m.Preset.Name},
		{name: "trained model: another copy of its weights", o: ExtractorOptions{Spec: "squeezenet:/copy", Model: model, Trained: true},
			wantSpec: "squeezenet:/copy", output: "features", preset: m.Preset.Name},
		{name: "trained model: its own precision asked for", o: ExtractorOptions{Model: model, Trained: true, Precision: backbone.FP32},
			wantSpec: "squeezenet:/w", output: "features", preset: m.Preset.Name},
		{name: "trained fp32 model: int8 refused", o: ExtractorOptions{Model: model, Trained: true, Precision: backbone.INT8}, err: ErrPrecision},
		{name: "trained int8 model: fp32 refused", o: ExtractorOptions{Model: &int8, Trained: true, Precision: backbone.FP32}, err: ErrPrecision},
		{name: "trained model: another preset refused", o: ExtractorOptions{Model: model, Trained: true, Preset: &other}, refused: true},
		{name: "trained model without a pipeline takes no images", o: ExtractorOptions{Default: "squeezenet", Trained: true}, err: ErrNoPipeline},
		{name: "new int8 model without calibration images", o: ExtractorOptions{Default: "squeezenet", Precision: backbone.INT8}, err: ErrNoCalibration},
		{name: "unknown precision", o: ExtractorOptions{Default: "squeezenet", Precision: "int4"}, refused: true},
		{name: "unknown output", o: ExtractorOptions{Default: "squeezenet", Output: "nope"}, refused: true},
		{name: "trained model, --backbone of other weights: refused naming the weights", o: ExtractorOptions{Spec: "squeezenet:/other", Model: &otherWeights, Trained: true},
			refused: true, field: "(weights " + m.Hash[:12] + ") is not the model's"},
		{name: "trained model, its own spec: features of another dimension refused naming it", o: ExtractorOptions{Model: &otherDim, Trained: true},
			refused: true, field: "backbone gives 512-dimensional features, the model learned from 7"},
		{name: "trained model, its output missing from the backbone: refused naming it", o: ExtractorOptions{Model: &noOutput, Trained: true},
			refused: true, field: `"pool"`},
		{name: "new int8 model without images: calibrated on its first learn", o: ExtractorOptions{Default: "squeezenet", Precision: backbone.INT8, CalibrateOnLearn: true},
			wantSpec: "squeezenet", output: "features", preset: m.Preset.Name, pending: true},
		{name: "new int8 model calibrated on its first learn: calibration options accepted", o: ExtractorOptions{Spec: "squeezenet:/x", Precision: backbone.INT8, CalibrateOnLearn: true, CalibGiven: true},
			wantSpec: "squeezenet:/x", output: "features", preset: m.Preset.Name, pending: true},
		{name: "new fp32 model: calibration options refused", o: ExtractorOptions{Default: "squeezenet", CalibGiven: true}, err: ErrCalibUnused},
		{name: "trained fp32 model: calibration options refused", o: ExtractorOptions{Model: model, Trained: true, CalibGiven: true}, err: ErrCalibUnused},
	} {
		t.Run(c.name, func(t *testing.T) {
			var opened []string
			c.o.Open = func(spec extract.BackboneSpec) (*backbone.Model, error) {
				opened = append(opened, spec.String())
				return m, nil
			}
			e, err := ResolveExtractor(context.Background(), c.o)
			switch {
			case c.err != nil || c.refused:
				if err == nil {
					t.Fatalf("accepted: %+v", e.Pipeline())
				}
				if c.err != nil && !errors.Is(err, c.err) {
					t.Fatalf("error %v, want %v", err, c.err)
				}
				if !strings.Contains(err.Error(), c.field) {
					t.Fatalf("error %q does not name %q", err, c.field)
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			if len(opened) != 1 || opened[0] != c.wantSpec || e.Spec != c.wantSpec {
				t.Errorf("opened %q, recorded %q; want %q once", opened, e.Spec, c.wantSpec)
			}
			if e.Output != c.output || e.Preset.Name != c.preset || e.Backbone.Precision != backbone.FP32 {
				t.Errorf("output %s, preset %s, precision %s; want %s, %s, fp32", e.Output, e.Preset.Name, e.Backbone.Precision, c.output, c.preset)
			}
			if e.Calibrated() == c.pending || (c.pending && e.Name() != m.Name+" (int8)") {
				t.Errorf("calibrated %v, name %q; want waiting for the first learn: %v", e.Calibrated(), e.Name(), c.pending)
			}
			if c.o.Trained {
				if err := c.o.Model.Check(e.Pipeline()); err != nil {
					t.Errorf("a trained model's extractor differs from its pipeline: %v", err)
				}
			}
		})
	}
}

// TestResolveExtractorInt8: a new model's int8 backbone is calibrated on
// the images CalibImages opens, and its pipeline rebuilds the same graph
// for the trained model (ForModel), where fp32 is then refused.
func TestResolveExtractorInt8(t *testing.T) {
	m := sharedSqueezeNet(t)
	lib := os.Getenv("FLYCL_ORT_LIB")
	if lib == "" {
		lib = "../../.cache/onnxruntime/node_modules/onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime.so.1"
	}
	if err := backbone.Init(lib); err != nil {
		t.Skip(err)
	}
	photos, err := filepath.Glob(filepath.Join("..", "..", "..", "shared", "data", "imagenet-sample-500", "*.JPEG"))
	if err != nil || len(photos) < 2 { // without ../shared: two drawn pictures
		dir := t.TempDir()
		if _, err := testimages.WriteFolder(dir, []string{testimages.ForClass["ship"], testimages.ForClass["frog"]}, 1, 32, "jpg", rand.New(rand.NewPCG(1, 0))); err != nil {
			t.Fatal(err)
		}
		photos, _ = filepath.Glob(filepath.Join(dir, "*", "*.jpg"))
	}
	open := func(extract.BackboneSpec) (*backbone.Model, error) { return m, nil }
	calls := 0
	e, err := ResolveExtractor(context.Background(), ExtractorOptions{Default: "squeezenet", Open: open, Precision: backbone.INT8,
		Calib:       extract.CalibOptions{N: 2, Method: backbone.CalibMinMax, Threads: 1},
		CalibImages: func() (dataset.Dataset, error) { calls++; return dataset.Files{Paths: photos[:2]}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	p := e.Pipeline()
	if calls != 1 || e.Backbone.Precision != backbone.INT8 || p.Precision != "int8" || p.Calibration == "" {
		t.Fatalf("calibration images opened %d times; pipeline %+v", calls, p)
	}
	again, err := ResolveExtractor(context.Background(), ExtractorOptions{Open: open, Model: p, Trained: true})
	if err != nil {
		t.Fatal(err)
	}
	if again.Backbone.Hash != e.Backbone.Hash {
		t.Errorf("the trained model rebuilt graph %.12s, calibrated %.12s", again.Backbone.Hash, e.Backbone.Hash)
	}
	if _, err := ResolveExtractor(context.Background(), ExtractorOptions{Open: open, Model: p, Trained: true, Precision: backbone.FP32}); !errors.Is(err, ErrPrecision) {
		t.Errorf("fp32 for the int8 model: %v, want ErrPrecision", err)
	}
}
