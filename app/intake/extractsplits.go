package intake

import (
	"context"

	"github.com/flycl/flycl/format/features"
	"github.com/flycl/flycl/vision/dataset"
	"github.com/flycl/flycl/vision/extract"
	"github.com/flycl/flycl/vision/imageio"
)

// An ExtractSplit is one split of a data set that flycl extract writes to
// a feature file (ExtractSplits).
type ExtractSplit struct {
	Split string // the split read ("": a split-less folder's images, whole)
	Calib string // the split an int8 backbone calibrates on ("" with Split "")
	Name  string // the split in messages: train, test, or (all)
	File  string // the feature file's name: train.npz or test.npz
}

// ExtractSplits returns the splits of spec that flycl extract writes: its
// train and test splits (an int8 backbone calibrated on train for both),
// or for a folder without train/ and test/ sub-folders (SplitLess) its
// images whole, to train.npz alone.
func ExtractSplits(spec dataset.Spec) []ExtractSplit {
	if SplitLess(spec) {
		return []ExtractSplit{SplitOf("")}
	}
	return []ExtractSplit{SplitOf("train"), SplitOf("test")}
}

// SplitOf returns the ExtractSplit of a data set's split: an int8
// backbone calibrates on train; split "" is a split-less folder's images,
// whole (calibrated on them), written to train.npz.
func SplitOf(split string) ExtractSplit {
	if split == "" {
		return ExtractSplit{Split: "", Calib: "", Name: "(all)", File: "train.npz"}
	}
	return ExtractSplit{Split: split, Calib: "train", Name: split, File: split + ".npz"}
}

// Extracted are the features of one split (ExtractFeatures).
type Extracted struct {
	*features.Set
	Cached    bool   // read from the extractor's cache, at CachePath
	CachePath string // the split's file in the extractor's cache
}

// ExtractFeatures opens split sp of spec (OpenSplit) with its images
// decoded by dec, and extracts their features (or reads them from the
// cache) through the extractor that extractor returns: called once the
// split is open, with the images the data set leaves out (WebP, which
// flycl cannot decode as PIL does; dataset.Skipped). The set records the
// extractor's pipeline, the identity a model file checks features
// against.
func ExtractFeatures(ctx context.Context, spec dataset.Spec, sp ExtractSplit, dec imageio.Decoder, extractor func(skipped []string) (*extract.Extractor, error)) (*Extracted, error) {
	ds, key, err := OpenSplit(spec, sp.Split)
	if err != nil {
		return nil, err
	}
	ds = dataset.WithDecoder(ds, dec)
	ex, err := extractor(dataset.Skipped(ds))
	if err != nil {
		return nil, err
	}
	s, cached, err := ex.Dataset(ctx, ds, key)
	if err != nil {
		return nil, err
	}
	s.Pipeline = ex.Pipeline().Text()
	return &Extracted{Set: s, Cached: cached, CachePath: ex.CachePath(key)}, nil
}
