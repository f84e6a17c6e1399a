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

// Learned is what Learn did: the library's result, and how long the
// learn and the save (with the journal's record) took.
type Learned struct {
	*deploy.LearnResult
	Learn, Save time.Duration
}

// Learn teaches the model the data (deploy.Model.Learn with opt) as one
// durable change recorded in the journal (LearnEntry), so that an undo
// takes it back. prepare, when not nil, changes the model first in the
// same change (a new "unknown" calibration): the undo takes that back
// too; its error refuses the learn (it must not have changed the model
// then). A store whose file does not exist yet needs Create first. A
// learn that fails leaves the file as it was; input the model refuses
// (deploy.Model.CheckLearn: a wrong dimension or pipeline, a bad class
// name, λ or batch, a task over opt.MaxBytes) is refused before the model
// changes (an error naming the data's Source when it is input:
// flycl.IsInput), as is input a learn refuses later (then the model is
// read back from its file). As with Update, a learn saved but not recorded in the
// journal returns its Learned with an error wrapping ErrNotRecorded.
func (s *Store) Learn(ctx context.Context, d LearnData, opt deploy.LearnOptions, prepare func(*deploy.Model) error) (*Learned, error) {
	res := &Learned{}
	var t1 time.Time
	err := s.Update(ctx, func(m *deploy.Model) (Change, error) {
		if err := m.CheckLearn(d.X, d.Names, d.Pipeline, opt); err != nil {
			return Change{}, Refused(s.learnError(d, err))
		}
		before := PriorOf(m)    // what an undo of this learn puts back
		v0 := m.Model.Version() // where its record starts: prepare may count as a change
		if prepare != nil {
			if err := prepare(m); err != nil {
				return Change{}, Refused(err)
			}
		}
		t0 := time.Now()
		var err error
		if res.LearnResult, err = m.Learn(ctx, d.X, d.Names, d.Pipeline, opt); err != nil {
			return Change{}, s.learnError(d, err)
		}
		res.Learn, t1 = time.Since(t0), time.Now()
		e := LearnEntry(m.Model.Version(), before, d.X, d.Names, d.D, opt)
		e.VersionBefore = v0
		return Change{Entry: e}, nil
	})
	if !t1.IsZero() {
		res.Save = time.Since(t1)
	}
	if err != nil && !errors.Is(err, ErrNotRecorded) {
		return nil, err
	}
	return res, err
}

// learnError says that the learn of d failed, and the model file is
// unchanged; an input error names the data.
func (s *Store) learnError(d LearnData, err error) error {
	if flycl.IsInput(err) {
		return fmt.Errorf("learn %s (%s unchanged): %w", d.Source, s.path, err)
	}
	return fmt.Errorf("learn (%s unchanged): %w", s.path, err)
}
