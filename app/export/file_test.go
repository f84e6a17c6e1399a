package export_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/flycl/flycl/app/export"
	"github.com/flycl/flycl/format/modelfile"
	"github.com/flycl/flycl/vision/backbone"
	"github.com/flycl/flycl/vision/backbone/zoo"
	"github.com/flycl/flycl/vision/extract"
)

// TestBuildFile checks flycl export's rules case by case: a graph from
// images by default when the model file records a backbone, from features
// otherwise; the backbone options refused for a graph from features; a
// model without a backbone refused a graph from images; the precision
// asked for checked against the model's; the model's pipeline fixing the
// backbone (intake.ResolveExtractor: a backbone whose features have
// another dimension is refused, naming it). The built-in SqueezeNet is
// opened, never run.
func TestBuildFile(t *testing.T) {
	s, _ := tinyCases[0].learn(t) // d = 24
	bb, err := extract.OpenBackboneFS("squeezenet", zoo.FS(), "built-in")
	if err != nil {
		t.Fatal(err)
	}
	e, err := extract.NewExtractor(bb, "squeezenet", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	p := e.Pipeline()
	p.Dim = 24 // the model's, not the backbone's 512
	for _, c := range []struct {
		name     string
		pipeline *modelfile.Pipeline
		o        export.FileOptions
		input    string // the graph's input
		err      string // a refusal naming this
		sentinel error
		opened   int // backbones opened
	}{
		{name: "no backbone: from features by default", o: export.FileOptions{}, input: "features"},
		{name: "no backbone: images refused", o: export.FileOptions{From: "images"}, err: "m.flycl learned from feature vectors without a backbone: export it with --from features"},
		{name: "from features: --precision refused", pipeline: p, o: export.FileOptions{From: "features", Precision: "fp32"}, err: "--precision and --backbone apply to a graph from images"},
		{name: "no backbone: --backbone refused", o: export.FileOptions{Backbone: "squeezenet"}, err: "--precision and --backbone apply to a graph from images"},
		{name: "unknown input", o: export.FileOptions{From: "pixels"}, err: `--from "pixels"`},
		{name: "a backbone: from features when asked", pipeline: p, o: export.FileOptions{From: "features"}, input: "features"},
		{name: "a backbone: images by default, through the model's pipeline", pipeline: p, o: export.FileOptions{},
			err: "backbone gives 512-dimensional features, the model learned from 24", opened: 1},
		{name: "a backbone: another precision refused", pipeline: p, o: export.FileOptions{Precision: "int8"}, err: "--precision", sentinel: export.ErrPrecision},
	} {
		t.Run(c.name, func(t *testing.T) {
			opened := 0
			c.o.Name = "m.flycl"
			c.o.Open = func(extract.BackboneSpec) (*backbone.Model, error) { opened++; return bb, nil }
			g, err := export.BuildFile(context.Background(), &modelfile.File{Snapshot: s, Pipeline: c.pipeline}, c.o)
			if opened != c.opened {
				t.Errorf("opened %d backbones, want %d", opened, c.opened)
			}
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) || c.sentinel != nil && !errors.Is(err, c.sentinel) {
					t.Fatalf("error %v, want one naming %q (%v)", err, c.err, c.sentinel)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if g.Input.Name != c.input {
				t.Errorf("input %s, want %s", g.Input.Name, c.input)
			}
		})
	}
}
