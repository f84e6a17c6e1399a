package main

// adapter.go holds every use of the root package (github.com/flycl/flycl)
// and of its rejection API, so that a change of the root's API is bound
// here, in one file. The rest of the package works with deploy.Model,
// store and modelfile, and with the plain types below.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/deploy"
	"github.com/flycl/flycl/format/modelfile"
	"github.com/flycl/flycl/internal/codec"
	"github.com/flycl/flycl/internal/onejson"
	"github.com/flycl/flycl/internal/procmem"
	"github.com/flycl/flycl/reject"
)

// parseConfig reads a flycl.Config from JSON (empty: the defaults, as
// `flycl learn` takes them; a key left out: its default), refusing
// unknown keys. The model checks the values (newModel).
func parseConfig(js string) (flycl.Config, error) {
	var cfg flycl.Config
	if js == "" {
		return cfg, nil
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(js)))
	dec.DisallowUnknownFields()
	if err := onejson.Decode(dec, &cfg); errors.Is(err, onejson.ErrTrailing) {
		return cfg, &statusError{FLYCL_E_CONFIG, errors.New("libflycl: configuration: more than one JSON value")}
	} else if err != nil {
		return cfg, &statusError{FLYCL_E_CONFIG, fmt.Errorf("libflycl: configuration: %w", err)}
	}
	return cfg, nil
}

// newModel makes an untrained deployable model (as `flycl learn` does:
// W from cfg.Seed, rejection calibrated on every learn). A d that is not
// positive is the caller's input (flycl.Config.Validate), an invalid
// configuration FLYCL_E_CONFIG.
func newModel(cfg flycl.Config, d int) (*deploy.Model, error) {
	if err := checkModelSize(cfg, d, procmem.Available()); err != nil {
		return nil, err
	}
	m, err := deploy.New(cfg, d, nil, nil)
	if flycl.IsInput(err) {
		return nil, fmt.Errorf("libflycl: %w", err)
	}
	if err != nil {
		return nil, &statusError{FLYCL_E_CONFIG, fmt.Errorf("libflycl: configuration: %w", err)}
	}
	return m, nil
}

// rootStatus maps the root package's typed errors one to one to status
// codes (0: err is none of them).
func rootStatus(err error) int {
	var ne *flycl.NameError
	switch {
	case errors.As(err, &ne):
		return FLYCL_E_CLASS_NAME
	case errors.Is(err, flycl.ErrUnknownClass):
		return FLYCL_E_UNKNOWN_CLASS
	case errors.Is(err, flycl.ErrTooLarge), errors.As(err, new(*flycl.MemoryError)):
		return FLYCL_E_TOO_LARGE
	case errors.Is(err, flycl.ErrNotTrained):
		return FLYCL_E_NOT_TRAINED
	case flycl.IsInput(err):
		return FLYCL_E_BAD_INPUT
	}
	return 0
}

// inputError marks err as the caller's input (FLYCL_E_BAD_INPUT).
func inputError(err error) error { return flycl.Input(err) }

// modelFacts are what the getters read of a model.
type modelFacts struct {
	d, samples int
	version    uint64
	lambda     float64
	names      []string
	labels     []int
	counts     []int
	config     flycl.Config
	rejection  *reject.Rule
}

func factsOf(m *deploy.Model) modelFacts {
	f := modelFacts{d: m.Model.InputDim(), samples: m.Model.Samples(), version: m.Model.Version(), names: m.Model.Classes().Names(),
		labels: m.Model.Classes().Labels(), counts: m.Model.Classes().Counts(), config: m.Model.Config()}
	if len(f.labels) > 0 {
		f.lambda = m.Model.Lambda()
	}
	if r := m.Model.Rejection(); r != (reject.Rule{}) {
		f.rejection = &r
	}
	return f
}

// predictor is an immutable classifier of a model's current state; its
// methods are safe for concurrent use.
type predictor struct {
	p     *flycl.Predictor
	d, nc int
}

func predictorOf(m *deploy.Model) *predictor {
	p := m.Model.Predictor()
	return &predictor{p: p, d: m.Model.InputDim(), nc: p.Classes().Len()}
}

func (p *predictor) classes() int { return p.nc }

func (p *predictor) checkTrained() error {
	if p.classes() == 0 {
		return flycl.ErrNotTrained
	}
	return nil
}

// scores writes the class scores of x (n×d) into out (n×classes).
func (p *predictor) scores(ctx context.Context, x []float32, out []float32) error {
	if err := p.checkTrained(); err != nil {
		return err
	}
	s, err := p.p.Scores(ctx, x)
	if err != nil {
		return err
	}
	copy(out, s)
	return nil
}

// top writes the k best classes (indices) and scores of every sample.
func (p *predictor) top(ctx context.Context, x []float32, n, k int, cls []int32, sc []float32) error {
	if err := p.checkTrained(); err != nil {
		return err
	}
	s, err := p.p.Scores(ctx, x)
	if err != nil {
		return err
	}
	nc := p.classes()
	index := make(map[int]int, nc)
	for i, l := range p.p.Classes().Labels() {
		index[l] = i
	}
	ranked := p.p.Rank(s, k)
	for i := 0; i < n; i++ {
		for r := 0; r < k; r++ {
			c, v := int32(-1), float32(math.NaN())
			if r < len(ranked[i]) {
				c, v = int32(index[ranked[i][r].Label]), ranked[i][r].Score
			}
			cls[i*k+r] = c
			if sc != nil {
				sc[i*k+r] = v
			}
		}
	}
	return nil
}

// answer gives `flycl predict`'s answer of every sample: the top class,
// whether it is unknown under the rejection named by rej ("" or "auto":
// the model's), the calibrated probability and the margin (NaN when
// there is none).
func (p *predictor) answer(ctx context.Context, x []float32, n int, rej string, cls, unknown []int32, prob, margin []float64) error {
	if err := p.checkTrained(); err != nil {
		return err
	}
	if rej == "" {
		rej = "auto"
	}
	r, err := reject.ParseRule(rej, p.p.Rejection())
	if err != nil {
		return inputError(err)
	}
	s, cos, err := p.p.ScoresCosines(ctx, x)
	if err != nil {
		return err
	}
	nc := p.classes()
	for i := 0; i < n; i++ {
		row := s[i*nc : (i+1)*nc]
		best := 0
		for j, v := range row {
			if v > row[best] {
				best = j
			}
		}
		cls[i] = int32(best)
		if unknown != nil {
			unknown[i] = 0
			if r.Reject(row, cos[i]) {
				unknown[i] = 1
			}
		}
		if prob != nil {
			prob[i] = math.NaN()
			if v, ok := r.Probability(row); ok {
				prob[i] = v
			}
		}
		if margin != nil {
			margin[i] = math.NaN()
			if v, ok := r.Margin(row, cos[i]); ok {
				margin[i] = v
			}
		}
	}
	return nil
}

// checkNames checks the class names of a learn: each can name a class,
// no two the same once normalised (a *flycl.NameError).
func checkNames(names []string) error {
	if len(names) == 0 {
		return inputError(errors.New("libflycl: learn: no class names"))
	}
	return flycl.CheckClassNames(names)
}

// classOf returns the name the model stores for the class called name
// and its count of samples (-1: unknown), or ok false.
func classOf(m *deploy.Model, name string) (canon string, count int, ok bool) {
	l, ok := m.Model.Classes().LabelOf(name)
	if !ok {
		return "", 0, false
	}
	count = -1
	for i, c := range m.Model.Classes().Labels() {
		if c == l {
			count = m.Model.Classes().Counts()[i]
		}
	}
	return m.Model.Classes().Name(l), count, true
}

// fileView is the model as a model file, its statistics read in place
// (valid while the model does not change: under the read lock).
func fileView(m *deploy.Model) *modelfile.File {
	return &modelfile.File{Snapshot: codec.View(m.Model), Pipeline: m.Pipeline, Created: m.Created, ID: m.ID()}
}

// classIndex returns the index of the class called name.
func classIndex(m *deploy.Model, name string) (int, error) {
	l, ok := m.Model.Classes().LabelOf(name)
	if ok {
		for i, c := range m.Model.Classes().Labels() {
			if c == l {
				return i, nil
			}
		}
	}
	return -1, fmt.Errorf("libflycl: %w %q (the model has %q)", flycl.ErrUnknownClass, name, m.Model.Classes().Names())
}

// historyJSON is flycl_model_history_json's JSON.
func historyJSON(m *deploy.Model) (string, error) {
	b, err := json.Marshal(modelfile.Records(m.Model.History()))
	return string(b), err
}

// info is flycl_model_info_json's object.
type info struct {
	D         int                 `json:"d"`
	Config    flycl.Config        `json:"config"`
	Classes   []string            `json:"classes"`
	Labels    []int               `json:"labels"`
	Counts    []int               `json:"counts"`
	Samples   int                 `json:"samples"`
	Lambda    float64             `json:"lambda"`
	Version   uint64              `json:"version"`
	Rejection *reject.Rule        `json:"rejection"`
	Pipeline  *modelfile.Pipeline `json:"pipeline"`
}

func infoJSON(m *deploy.Model) (string, error) {
	f := factsOf(m)
	in := info{D: f.d, Config: f.config, Classes: f.names, Labels: f.labels, Counts: f.counts, Samples: f.samples,
		Lambda: f.lambda, Version: f.version, Rejection: f.rejection, Pipeline: m.Pipeline}
	if in.Classes == nil {
		in.Classes, in.Labels, in.Counts = []string{}, []int{}, []int{}
	}
	b, err := json.Marshal(in)
	return string(b), err
}

// checkModelSize refuses, before anything is allocated, a new model whose
// sizes no process could hold: d beyond what W's int32 column indices
// address, or a model (modelBytes) larger than avail bytes (the memory
// available; 0: unknown, not checked). Go ends the process when an
// allocation fails, so the size is checked here, where the caller still
// gets an error.
func checkModelSize(cfg flycl.Config, d int, avail int64) error {
	if d > math.MaxInt32 {
		return inputError(fmt.Errorf("libflycl: d=%d: the feature dimension is at most %d", d, math.MaxInt32))
	}
	if err := deploy.CheckNewModel(cfg, d, avail); err != nil {
		return &statusError{FLYCL_E_TOO_LARGE, fmt.Errorf("libflycl: %w", err)}
	}
	return nil
}
