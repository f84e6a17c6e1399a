package inbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"time"
	"unicode/utf8"

	"github.com/flycl/flycl/internal/onejson"
)

// sidecarFormat names the sidecar's format and version.
const sidecarFormat = "flycl-inbox/1"

// Limits of a sidecar: what Open accepts from the folder.
const (
	maxSidecarBytes = 64 << 10
	maxTop          = 1000
	maxDim          = 1 << 20
	maxNameBytes    = 1024
	// MaxImageBytes bounds a stored image file (a thumbnail of at most
	// MaxSide² pixels is far smaller).
	maxImageBytes = 16 << 20
)

// Score is one class and its score.
type Score struct {
	Class string  `json:"class"`
	Score float32 `json:"score"`
}

// Item describes a kept input.
type Item struct {
	ID   string    `json:"id"`
	Time time.Time `json:"time"`
	// ModelVersion is the version of the model that predicted it.
	ModelVersion uint64 `json:"model_version"`
	// Guess is the model's best class (also when it answered unknown).
	Guess   string `json:"guess"`
	Unknown bool   `json:"unknown"`
	// Probability is the calibrated probability of Guess (absent when
	// the model had none).
	Probability *float64 `json:"probability,omitempty"`
	// Top are the best classes and their scores, best first.
	Top []Score `json:"top"`
	// Why says why it was kept.
	Why Reason `json:"why"`
	// Camera and Zone say where a frame of a video stream came from
	// (absent for a served prediction; Zone for a whole frame).
	Camera string `json:"camera,omitempty"`
	Zone   string `json:"zone,omitempty"`
	// Dim is the length of the feature vector.
	Dim int `json:"d"`
	// Image is true when the input was an image (kept downscaled);
	// Width and Height are the stored image's.
	Image  bool `json:"image"`
	Width  int  `json:"width,omitempty"`
	Height int  `json:"height,omitempty"`
	// Bytes is the disk space of the item's files.
	Bytes int64 `json:"bytes"`
}

// sidecar is item.json.
type sidecar struct {
	Format string `json:"format"`
	Item
	ImageBytes    int64  `json:"image_bytes,omitempty"`
	ImageCRC      uint32 `json:"image_crc32c,omitempty"`
	FeaturesCRC   uint32 `json:"features_crc32c"`
	FeaturesBytes int64  `json:"features_bytes"`
}

// SidecarError is a sidecar that Open refused.
type SidecarError struct {
	Path string
	Err  error
}

func (e *SidecarError) Error() string { return fmt.Sprintf("inbox: %s: %v", e.Path, e.Err) }
func (e *SidecarError) Unwrap() error { return e.Err }

// parseSidecar reads and checks a sidecar: its fields, not its files. id
// is the name of its folder, which the sidecar must repeat.
func parseSidecar(r io.Reader, id string) (*sidecar, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxSidecarBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxSidecarBytes {
		return nil, fmt.Errorf("larger than %d bytes", maxSidecarBytes)
	}
	var s sidecar
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := onejson.Decode(dec, &s); errors.Is(err, onejson.ErrTrailing) {
		return nil, fmt.Errorf("data after the sidecar's JSON object")
	} else if err != nil {
		return nil, fmt.Errorf("not a sidecar: %v", err)
	}
	if err := s.check(id); err != nil {
		return nil, err
	}
	return &s, nil
}

// check checks a sidecar's fields.
func (s *sidecar) check(id string) error {
	switch {
	case s.Format != sidecarFormat:
		return fmt.Errorf("format %q, want %q", s.Format, sidecarFormat)
	case s.ID != id:
		return fmt.Errorf("id %q in the folder %q", s.ID, id)
	case s.Time.IsZero():
		return fmt.Errorf("no time")
	case s.Dim < 1 || s.Dim > maxDim:
		return fmt.Errorf("d %d is not in [1, %d]", s.Dim, maxDim)
	case s.FeaturesBytes != 4*int64(s.Dim):
		return fmt.Errorf("features_bytes %d for d=%d (want %d)", s.FeaturesBytes, s.Dim, 4*s.Dim)
	case len(s.Top) > maxTop:
		return fmt.Errorf("%d top classes (at most %d)", len(s.Top), maxTop)
	case !validName(s.Guess):
		return fmt.Errorf("guess is not a class name")
	case s.Probability != nil && !(*s.Probability >= 0 && *s.Probability <= 1):
		return fmt.Errorf("probability %g is not in [0, 1]", *s.Probability)
	case !s.Why.valid():
		return fmt.Errorf("why %q: want one of %v", s.Why, reasons)
	case s.Image && (s.ImageBytes < 1 || s.ImageBytes > maxImageBytes):
		return fmt.Errorf("image_bytes %d is not in [1, %d]", s.ImageBytes, maxImageBytes)
	case s.Image && (s.Width < 1 || s.Height < 1 || s.Width > maxImageSide || s.Height > maxImageSide):
		return fmt.Errorf("image size %d×%d is not in [1, %d]", s.Width, s.Height, maxImageSide)
	case !s.Image && (s.ImageBytes != 0 || s.ImageCRC != 0 || s.Width != 0 || s.Height != 0):
		return fmt.Errorf("image fields without an image")
	case len(s.Camera) > maxNameBytes || !utf8.ValidString(s.Camera):
		return fmt.Errorf("camera is not a name")
	case len(s.Zone) > maxNameBytes || !utf8.ValidString(s.Zone):
		return fmt.Errorf("zone is not a name")
	case s.Bytes < 0:
		return fmt.Errorf("bytes %d is negative", s.Bytes)
	}
	for i, t := range s.Top {
		if !validName(t.Class) {
			return fmt.Errorf("top[%d]: not a class name", i)
		}
		if math.IsNaN(float64(t.Score)) || math.IsInf(float64(t.Score), 0) {
			return fmt.Errorf("top[%d]: score is not finite", i)
		}
	}
	return nil
}

// maxImageSide bounds a stored image's sides (MaxSide is at most this).
const maxImageSide = 4096

func validName(s string) bool { return s != "" && len(s) <= maxNameBytes && utf8.ValidString(s) }

// Reason says why an input was kept.
type Reason string

const (
	// Unknown: the model rejected it as none of its classes.
	Unknown Reason = "unknown"
	// LowProbability: its calibrated probability was below
	// Policy.Probability.
	LowProbability Reason = "low-probability"
	// LowMargin: the model has no calibrated probabilities, and its two
	// best scores were closer than Policy.Margin.
	LowMargin Reason = "low-margin"
	// Change: a video stream's answer changed (flycl watch keeps the
	// frame that confirmed a new state: whether it was right is worth a
	// look).
	Change Reason = "change"
	// Sample: a confident answer kept as a sample (flycl frigate keeps
	// one in every few, so that the labels also cover what the model
	// already answers).
	Sample Reason = "sample"
)

var reasons = []Reason{Unknown, LowProbability, LowMargin, Change, Sample}

func (r Reason) valid() bool {
	for _, v := range reasons {
		if r == v {
			return true
		}
	}
	return false
}
