package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/flycl/flycl/app/watch"
	"github.com/flycl/flycl/vision/backbone"
	"github.com/flycl/flycl/vision/extract"
)

// imageClassifier is a model file opened to classify images (the frames of
// flycl watch, the snapshots of flycl frigate): watch.NewModelClassifier's
// classifier and the extractor it runs.
type imageClassifier struct {
	*watch.ModelClassifier
	Extractor *extract.Extractor
}

func (c *imageClassifier) Close() error { return c.Extractor.Close() }

// openImageClassifier opens the model file at path for classifying images
// (what: "frames", "snapshots", in its errors), with --unknown's value, the
// backbone override and the ONNX Runtime threads of the command's flags.
func openImageClassifier(cmd *cobra.Command, path, backboneSpec, unknown string, threads int, what string) (*imageClassifier, error) {
	mf, err := loadFile(path)
	if err != nil {
		return nil, err
	}
	mc, ex, err := watch.NewModelClassifier(cmd.Context(), mf.Snapshot.Predictor(), mf.Pipeline, watch.ModelOptions{Name: path, What: what,
		Backbone: backboneSpec, Unknown: unknown, Threads: threads,
		Open: func(s extract.BackboneSpec) (*backbone.Model, error) {
			lib, err := ortLibrary(cmd.Flags())
			if err != nil {
				return nil, err
			}
			if err := backbone.Init(lib); err != nil {
				return nil, err
			}
			bm, err := openBackboneSpec(s)
			if err != nil {
				return nil, fmt.Errorf("open the model's backbone (give --backbone for another copy of the same weights): %w", err)
			}
			return bm, nil
		}})
	if err != nil {
		return nil, err
	}
	return &imageClassifier{ModelClassifier: mc, Extractor: ex}, nil
}
