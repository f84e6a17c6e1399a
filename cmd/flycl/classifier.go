package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/flycl/flycl/backbone"
	"github.com/flycl/flycl/deploy"
	"github.com/flycl/flycl/reject"
	"github.com/flycl/flycl/server"
	"github.com/flycl/flycl/watch"
)

// imageClassifier is a model file opened to classify images (the frames of
// flycl watch, the snapshots of flycl frigate): its predictor and rejection,
// the backbone its pipeline names (or backboneSpec, another copy of the same
// weights) on ONNX Runtime, and the preset its images are prepared with.
type imageClassifier struct {
	*watch.ModelClassifier
	Extractor *deploy.Extractor
	Backbone  string // the backbone's name
	close     func() error
}

func (c *imageClassifier) Close() error { return c.close() }

// openImageClassifier opens the model file at path for classifying images
// (what: "frames", "snapshots", in its errors), with --unknown's value, the
// backbone override and the ONNX Runtime threads of the command's flags.
func openImageClassifier(cmd *cobra.Command, path, backboneSpec, unknown string, threads int, what string) (*imageClassifier, error) {
	mf, err := loadFile(path)
	if err != nil {
		return nil, err
	}
	p := mf.Snapshot.Predictor()
	if len(p.Classes()) == 0 {
		return nil, fmt.Errorf("%s has no classes yet: teach it with flycl learn", path)
	}
	if mf.Pipeline == nil {
		return nil, fmt.Errorf("%s learned from feature vectors: it has no backbone to classify %s with", path, what)
	}
	rej, err := reject.ParseRule(unknown, p.Rejection())
	if err != nil {
		return nil, fmt.Errorf("--unknown: %w", err)
	}
	lib, err := ortLibrary(cmd.Flags())
	if err != nil {
		return nil, err
	}
	if err := backbone.Init(lib); err != nil {
		return nil, err
	}
	spec := backboneSpec
	if spec == "" {
		spec = mf.Pipeline.Backbone
	}
	bm, err := openBackbone(spec)
	if err != nil {
		return nil, fmt.Errorf("open the model's backbone (give --backbone for another copy of the same weights): %w", err)
	}
	de, err := deploy.ForModel(mf.Pipeline, bm, spec)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	ex, err := server.NewPipelineExtractorWith(de.Backbone, de.Output, de.Preset, backbone.SessionOptions{Threads: threads})
	if err != nil {
		return nil, err
	}
	return &imageClassifier{
		ModelClassifier: &watch.ModelClassifier{Extractor: ex, Predictor: p, Rejection: rej},
		Extractor:       de,
		Backbone:        bm.Name,
		close:           ex.Close,
	}, nil
}
