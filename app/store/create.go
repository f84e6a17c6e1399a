package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/flycl/flycl/app/deploy"
	"github.com/flycl/flycl/format/modelfile"
	"github.com/flycl/flycl/internal/fielderr"
	"github.com/flycl/flycl/reject"
)

// ErrCreateOnly is wrapped by the error of an option that applies only
// when a model is created, given for a model file that exists.
var ErrCreateOnly = errors.New("applies when a model is created")

// OptionError is a refused option of a learn (NewModel's W,
// Recalibration's Keep or Score), naming the field; Name, when not nil,
// names it in the message (a command's flag: "--w"), else the field's
// name is used. It is the one field error type of the module
// (internal/fielderr); Err is ErrCreateOnly, or what is wrong with the
// value.
type OptionError = fielderr.Error

// optionErr is field's option refused: "NAME VALUE: ERR" (VALUE when not
// nil), or for ErrCreateOnly "NAME applies when a model is created; PATH
// exists".
func optionErr(field string, v any, path string, err error) *OptionError {
	return &OptionError{Field: field, Value: v, Err: err, Message: func(e *OptionError) string {
		n := e.NameOf(e.Field)
		if errors.Is(e.Err, ErrCreateOnly) {
			return fmt.Sprintf("%s %s; %s exists", n, e.Err, path)
		}
		if e.Value != nil {
			n = fmt.Sprintf("%s %v", n, e.Value)
		}
		return fmt.Sprintf("%s: %s", n, e.Err)
	}}
}

// NewModel is the model a learn creates when the model file does not
// exist yet: Make returns it for the learned data's dimension and pipeline
// and W, a projection file, taking the W generated ahead when it is the
// model's (configflag.Flags.NewModelAhead). W applies to a new model
// alone.
type NewModel struct {
	W    string `flag:"w"`
	Make func(ctx context.Context, d int, w string, p *modelfile.Pipeline, ahead *deploy.Ahead) (*deploy.Model, error)
	// Start, when not nil, starts generating the W of the model Make
	// creates for d-dimensional features of images
	// (configflag.Flags.StartNewModel): Store.Extracting calls it.
	Start func(ctx context.Context, d int) *deploy.Ahead
	// ahead is the W Start started, for Make.
	ahead *deploy.Ahead
}

// Stop stops the generation of a W started ahead (Store.Extracting) that
// LearnNew did not take (the learn was refused, or failed before): call
// it once the learn is done. A W taken, or none started: nothing.
func (n *NewModel) Stop() {
	n.ahead.Stop()
	n.ahead = nil
}

// Extracting is to be called when the features of images of dimension d
// are about to be extracted for LearnNew (intake.LoadNotes.Extracting):
// when the model file does not exist yet and n gives no W file, it starts
// the new model's W (n.Start), which LearnNew gives n.Make. A model's W is
// most of what creating it costs, and W depends only on its configuration
// and d: it is then made while the photos are extracted, and a model from
// a few photos is learned soon after their extraction ends. An existing
// model, or a W file: nothing.
func (s *Store) Extracting(ctx context.Context, n *NewModel, d int) {
	if s.model != nil || s.exists || n.W != "" || n.Start == nil || n.ahead != nil {
		return
	}
	n.ahead = n.Start(ctx, d)
}

// CheckNew checks n against the store before the data is read: W given
// for a model file that exists is an *OptionError wrapping ErrCreateOnly.
func (s *Store) CheckNew(n NewModel) error {
	if s.model != nil && n.W != "" {
		return optionErr("W", nil, s.path, ErrCreateOnly)
	}
	return nil
}

// LearnNew creates the model when the file does not exist yet (n.Make for
// d's dimension and pipeline, with the W Extracting started, then Create)
// and teaches it d (Learn). n is checked first (CheckNew).
func (s *Store) LearnNew(ctx context.Context, d LearnData, n NewModel, opt deploy.LearnOptions, prepare func(*deploy.Model) error) (*Learned, error) {
	if err := s.CheckNew(n); err != nil {
		return nil, err
	}
	if s.model == nil {
		m, err := n.Make(ctx, d.D, n.W, d.Pipeline, n.ahead)
		if err != nil {
			return nil, err
		}
		if err := s.Create(m); err != nil {
			return nil, err
		}
	}
	return s.Learn(ctx, d, opt, prepare)
}

// Recalibration is the change of the model's "unknown" calibration a learn
// asks for: the Keep share and open-set Score given (KeepGiven,
// ScoreGiven), the model's for the other (its Keep when it has one, else
// Keep as given: reject.DefaultKeep by default).
type Recalibration struct {
	Keep       float64 `flag:"unknown-keep"`
	KeepGiven  bool
	Score      string `flag:"unknown-score"`
	ScoreGiven bool
}

// Prepare returns the change as Learn's prepare (nil when neither is
// given). Its errors are *OptionError naming Keep (a share not in (0, 1],
// or one the model refuses: deploy.Model.SetCalibration) or Score (not a
// reject.Score).
func (r Recalibration) Prepare() func(*deploy.Model) error {
	if !r.KeepGiven && !r.ScoreGiven {
		return nil
	}
	return func(m *deploy.Model) error {
		if !(r.Keep > 0 && r.Keep <= 1) {
			return optionErr("Keep", r.Keep, "", errKeepRange)
		}
		c := reject.Calibration{Score: m.Model.Rejection().Score, Keep: r.Keep}
		if !r.KeepGiven && m.Model.Rejection().Keep > 0 {
			c.Keep = m.Model.Rejection().Keep
		}
		if r.ScoreGiven {
			var err error
			if c.Score, err = reject.ParseScore(r.Score); err != nil {
				return optionErr("Score", nil, "", err)
			}
		}
		if err := m.Model.SetCalibration(&c); err != nil {
			return optionErr("Keep", nil, "", err)
		}
		return nil
	}
}

// errKeepRange is a keep share out of range (0 is not the default here:
// reject.Calibration.WithDefaults would take it for one).
var errKeepRange = errors.New("want a share in (0, 1]")
