package server

import (
	"context"
	"errors"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/deploy"
	"github.com/flycl/flycl/app/intake"
	"github.com/flycl/flycl/vision/backbone"
	"github.com/flycl/flycl/vision/backbone/zoo"
	"github.com/flycl/flycl/vision/extract"
)

// TestResolveExtractor checks the rules a server applies to its model's
// backbone, case by case: a new model records the backbone it is served
// with (fp32), or waits for its int8 calibration on the first learn and
// records nothing yet; a model that learned from feature vectors takes no
// int8 backbone (ErrInt8Learned) nor any other (the backend's refusal, a
// *PipelineError); a model's pipeline fixes its precision (ErrPrecision)
// and refuses calibration options for fp32 features (ErrCalibUnused).
// The built-in SqueezeNet is opened, never compiled: no ONNX Runtime.
func TestResolveExtractor(t *testing.T) {
	bb, err := extract.OpenBackboneFS("squeezenet", zoo.FS(), "built-in")
	if err != nil {
		t.Fatal(err)
	}
	d := bb.Dim()
	open := func(extract.BackboneSpec) (*backbone.Model, error) { return bb, nil }
	// backend opens a new model file of dimension d; learned: it has
	// learned two classes from feature vectors; fixed: its pipeline records
	// the fp32 backbone.
	backend := func(t *testing.T, learned, fixed bool) *FileBackend {
		b, err := OpenFile(filepath.Join(t.TempDir(), "m.flycl"), func() (*flycl.Model, error) { return flycl.New(testConfig(), d) })
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
		if fixed {
			e, err := extract.NewExtractor(bb, "squeezenet", "", nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := b.SetPipeline(e.Pipeline()); err != nil {
				t.Fatal(err)
			}
		}
		if learned {
			r := rand.New(rand.NewPCG(1, 2))
			x := make([]float32, 4*d)
			for i := range x {
				x[i] = float32(r.NormFloat64())
			}
			if _, _, err := b.Learn(context.Background(), x, []string{"a", "b", "a", "b"}, deploy.LearnOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		return b
	}
	for _, c := range []struct {
		name             string
		learned, fixed   bool
		o                intake.ExtractorOptions
		err              error
		refused          bool // by the backend (*PipelineError)
		pending, records bool // waits for calibration; the model records the pipeline
	}{
		{name: "new model, fp32", o: intake.ExtractorOptions{Spec: "squeezenet"}, records: true},
		{name: "new model, int8: calibrated on the first learn", o: intake.ExtractorOptions{Spec: "squeezenet", Precision: backbone.INT8, CalibGiven: true}, pending: true},
		{name: "new model, fp32 with calibration options", o: intake.ExtractorOptions{Spec: "squeezenet", CalibGiven: true}, err: intake.ErrCalibUnused},
		{name: "learned from features, int8", learned: true, o: intake.ExtractorOptions{Spec: "squeezenet", Precision: backbone.INT8}, err: ErrInt8Learned},
		{name: "learned from features, fp32", learned: true, o: intake.ExtractorOptions{Spec: "squeezenet"}, refused: true},
		{name: "model's pipeline, no --backbone", fixed: true, learned: true, o: intake.ExtractorOptions{}, records: true},
		{name: "model's pipeline, int8 asked", fixed: true, o: intake.ExtractorOptions{Precision: backbone.INT8}, err: intake.ErrPrecision},
		{name: "model's fp32 pipeline, calibration options", fixed: true, o: intake.ExtractorOptions{CalibGiven: true}, err: intake.ErrCalibUnused},
	} {
		t.Run(c.name, func(t *testing.T) {
			be := backend(t, c.learned, c.fixed)
			c.o.Open = open
			e, err := ResolveExtractor(context.Background(), be, c.o)
			var pe *PipelineError
			switch {
			case c.err != nil || c.refused:
				if c.err != nil && !errors.Is(err, c.err) || c.refused && !errors.As(err, &pe) {
					t.Fatalf("error %v, want %v (backend's refusal: %v)", err, c.err, c.refused)
				}
				if !c.fixed && be.Pipeline() != nil {
					t.Errorf("a refused backbone was recorded: %+v", be.Pipeline())
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			if e.Calibrated() == c.pending {
				t.Errorf("calibrated %v, want waiting for the first learn %v", e.Calibrated(), c.pending)
			}
			if p := be.Pipeline(); (p != nil) != c.records || p != nil && p.Check(e.Pipeline()) != nil {
				t.Errorf("the model records %+v; the extractor's %+v (want recorded: %v)", p, e.Pipeline(), c.records)
			}
		})
	}
}
