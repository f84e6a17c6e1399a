package modelfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/flycl/flycl/internal/onejson"
)

// Pipeline describes how an image becomes the model's feature vector: the
// backbone and the transform before it. It is plain data, so that this
// package depends on no backbone or image code; see
// github.com/flycl/flycl/app/deploy (Extractor.Pipeline) for building one from
// a backbone.
type Pipeline struct {
	// Backbone is the spec the backbone was opened with (for example
	// "squeezenet" or "vit:/models/vit_b16.safetensors"): where to find it
	// again. The hash, not the spec, decides whether it is the same.
	Backbone string `json:"backbone"`
	// Name is the backbone's name (backbone.Model.Name).
	Name string `json:"name"`
	// WeightsHash identifies the weights (backbone.Model.Hash, a SHA-256
	// of every tensor's name, shape and values).
	WeightsHash string `json:"weights_hash"`
	// Output is the backbone output used as the feature ("features").
	Output string `json:"output"`
	// Dim is the feature dimension (the model's d).
	Dim int `json:"dim"`
	// Transform is the preprocessing of every image.
	Transform Transform `json:"transform"`
	// Precision is the backbone's arithmetic: "" (fp32) or "int8"
	// (backbone.Precision); Calibration holds a static int8 graph's
	// activation ranges as text (backbone.Calibration.Text), so the same
	// graph is rebuilt without the training data.
	Precision   string `json:"precision,omitempty"`
	Calibration string `json:"calibration,omitempty"`
}

// Transform is an evaluation transform (transform.Preset as data).
type Transform struct {
	Preset string     `json:"preset"` // preset name
	Resize int        `json:"resize"` // shorter side
	Filter string     `json:"filter"` // resampling filter
	Crop   int        `json:"crop"`   // centre crop side
	Mean   [3]float32 `json:"mean"`
	Std    [3]float32 `json:"std"`
}

func (p *Pipeline) validate() error {
	t := p.Transform
	switch {
	case p.WeightsHash == "":
		return fmt.Errorf("no weights hash")
	case p.Dim < 0:
		return fmt.Errorf("negative dimension %d", p.Dim)
	case t.Resize <= 0 || t.Crop <= 0 || t.Resize > 1<<16 || t.Crop > 1<<16:
		return fmt.Errorf("transform sizes resize=%d crop=%d", t.Resize, t.Crop)
	case p.Precision != "" && p.Precision != "fp32" && p.Precision != "int8":
		return fmt.Errorf("precision %q", p.Precision)
	case p.Calibration != "" && p.Precision != "int8":
		return fmt.Errorf("calibration with precision %q", p.Precision)
	}
	for i := range 3 {
		if math.IsNaN(float64(t.Mean[i])) || math.IsInf(float64(t.Mean[i]), 0) || !(t.Std[i] > 0) || math.IsInf(float64(t.Std[i]), 0) {
			return fmt.Errorf("transform mean %v std %v", t.Mean, t.Std)
		}
	}
	return nil
}

// Check reports whether other (the pipeline a caller is about to use)
// makes the same features as p: same weights, precision, output,
// dimension, transform and, for a static int8 graph, calibration. The
// error says what differs.
func (p *Pipeline) Check(other *Pipeline) error {
	switch {
	case p.WeightsHash != other.WeightsHash:
		return fmt.Errorf("backbone %s (weights %.12s) is not the model's %s (weights %.12s): a model only works with the backbone it learned with",
			other.Backbone, other.WeightsHash, p.Backbone, p.WeightsHash)
	case precisionOf(p) != precisionOf(other):
		return fmt.Errorf("backbone precision %s, the model learned with %s", precisionOf(other), precisionOf(p))
	case p.Output != other.Output:
		return fmt.Errorf("backbone output %q, the model learned from %q", other.Output, p.Output)
	case p.Dim != other.Dim:
		return fmt.Errorf("backbone gives %d-dimensional features, the model learned from %d", other.Dim, p.Dim)
	case p.Transform != other.Transform:
		return fmt.Errorf("transform %+v, the model learned with %+v", other.Transform, p.Transform)
	case !sameCalibration(p.Calibration, other.Calibration):
		return fmt.Errorf("int8 calibration %.40q..., the model learned with %.40q... (another calibration makes another int8 graph)", other.Calibration, p.Calibration)
	}
	return nil
}

// precisionOf is p's precision, fp32 for "" (both spellings are valid).
func precisionOf(p *Pipeline) string {
	if p.Precision == "" {
		return "fp32"
	}
	return p.Precision
}

// sameCalibration compares two calibrations (backbone.Calibration.Text:
// min/max pairs) by their float32 values, so that two spellings of the
// same numbers agree.
func sameCalibration(a, b string) bool {
	if a == b {
		return true
	}
	fa, fb := strings.Fields(a), strings.Fields(b)
	if len(fa) != len(fb) {
		return false
	}
	for i := range fa {
		x, err1 := strconv.ParseFloat(fa[i], 32)
		y, err2 := strconv.ParseFloat(fb[i], 32)
		if err1 != nil || err2 != nil || float32(x) != float32(y) {
			return false
		}
	}
	return true
}

// Text returns the pipeline as JSON: the identity a feature file records
// (features.Set.Pipeline) so that its features can be checked against a
// model's (ParsePipeline reads it back).
func (p *Pipeline) Text() string {
	b, err := json.Marshal(p)
	if err != nil {
		panic("modelfile: marshal a pipeline: " + err.Error()) // plain data: cannot fail
	}
	return string(b)
}

// ParsePipeline reads a pipeline written by Text and checks it as a
// model file's (a weights hash, sane transform sizes, finite mean and a
// positive std, a known precision). Unknown fields are refused: an
// identity this build cannot compare whole is not taken for a match.
func ParsePipeline(text string) (*Pipeline, error) {
	dec := json.NewDecoder(bytes.NewReader([]byte(text)))
	dec.DisallowUnknownFields()
	var p Pipeline
	if err := onejson.Decode(dec, &p); errors.Is(err, onejson.ErrTrailing) {
		return nil, fmt.Errorf("pipeline identity: more than one JSON value")
	} else if err != nil {
		return nil, fmt.Errorf("pipeline identity: %w", err)
	}
	if err := p.validate(); err != nil {
		return nil, fmt.Errorf("pipeline identity: %w", err)
	}
	return &p, nil
}
