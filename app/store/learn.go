package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/deploy"
	"github.com/flycl/flycl/format/modelfile"
)

// LearnData is labelled training data offered to Learn.
type LearnData struct {
	X        []float32 // N×D, row-major
	D        int
	Names    []string            // each sample's class
	Pipeline *modelfile.Pipeline // the features' backbone identity (nil: feature vectors without one)
	Source   string              // names the data in errors ("train.npz")
}

// Learned is what Learn did: the library's result, the model it taught,
// and how long the learn and the save (with the journal's record) took.
type Learned struct {
	*deploy.LearnResult
	Model       *deploy.Model
	Learn, Save time.Duration
}

// Learn teaches the model the data (deploy.Model.Learn with opt) as one
// durable change recorded in the journal (LearnEntry), so that an
// undo takes it back. prepare, when not nil, changes the model first in
// the same change (a new "unknown" calibration): the undo takes that back
// too. A store whose file does not exist yet needs Create first. A learn
// that fails leaves the file as it was; an input the model refuses
// (flycl.IsInput) is an error naming the data's Source. As with Update, a
// learn saved but not recorded in the journal returns its Learned with an
// error wrapping ErrNotRecorded.
func (s *Store) Learn(ctx context.Context, d LearnData, opt deploy.LearnOptions, prepare func(*deploy.Model) error) (*Learned, error) {
	if s.model == nil {
		return nil, fmt.Errorf("%s does not exist", s.path)
	}
	before := PriorOf(s.model) // what an undo of this learn puts back
	v0 := s.model.Version()    // where its record starts: prepare may count as a change
	if prepare != nil {
		if err := prepare(s.model); err != nil {
			return nil, err
		}
	}
	res := &Learned{Model: s.model}
	t1 := time.Now()
	err := s.Update(ctx, func(m *deploy.Model) (Change, error) {
		t0 := time.Now()
		var err error
		if res.LearnResult, err = m.Learn(ctx, d.X, d.Names, d.Pipeline, opt); err != nil {
			if flycl.IsInput(err) {
				return Change{}, fmt.Errorf("learn %s (%s unchanged): %w", d.Source, s.path, err)
			}
			return Change{}, fmt.Errorf("learn (%s unchanged): %w", s.path, err)
		}
		res.Learn, t1 = time.Since(t0), time.Now()
		e := LearnEntry(m.Version(), before, d.X, d.Names, d.D, opt)
		e.VersionBefore = v0
		return Change{Entry: e}, nil
	})
	res.Save = time.Since(t1)
	if err != nil && !errors.Is(err, ErrNotRecorded) {
		return nil, err
	}
	return res, err
}
