package store

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/deploy"
	"github.com/flycl/flycl/format/modelfile"
	"github.com/flycl/flycl/internal/codec"
)

// Prior is what an undo of a learn puts back besides the statistics: the
// model's λ before the learn (0 when it had no class), which the undo
// re-solves with, and its calibration of "unknown" and of the
// probabilities then (threshold, temperature, leave-one-out pool), which
// the undo restores. Take it with PriorOf just before the learn.
type Prior struct {
	Lambda      float64
	Calibration modelfile.JournalCalibration
}

// PriorOf returns the model's Prior: call it just before a learn, and
// give it to LearnEntry.
func PriorOf(m *deploy.Model) Prior {
	p := Prior{Calibration: modelfile.JournalCalibration{Rejection: m.Model.Rejection(), Pool: codec.CalibrationPool(m.Model)}}
	if m.Model.Classes().Len() > 0 {
		p.Lambda = m.Model.Lambda()
	}
	return p
}

// LearnEntry returns the journal entry of a learn of x (n×d) with the
// class names names and options opt, after which the model is at
// version; before is the model's Prior, taken just before the learn:
// what an undo puts back (modelfile.JournalEntry).
func LearnEntry(version uint64, before Prior, x []float32, names []string, d int, opt deploy.LearnOptions) *modelfile.JournalEntry {
	cal := before.Calibration
	cal.Pool = slices.Clone(cal.Pool)
	e := &modelfile.JournalEntry{Op: "learn", Version: version, Time: time.Now().UTC(), LambdaBefore: before.Lambda,
		Names: slices.Clone(names), D: d, X: x, Lambda: opt.Lambda, Online: opt.Online, Batch: opt.Batch, Calibration: &cal}
	if opt.LambdaPolicy != flycl.LambdaGCV {
		e.LambdaPolicy = opt.LambdaPolicy.String()
	}
	return e
}

// restoreCalibration puts back the calibration an undo entry (or the
// learn it undoes) records, when it records one, and derives the
// calibration of later learns from it as Load does (deploy.Calibrate).
func restoreCalibration(m *deploy.Model, c *modelfile.JournalCalibration) error {
	if c == nil {
		return nil
	}
	if err := codec.RestoreCalibration(m.Model, c.Rejection, c.Pool); err != nil {
		return err
	}
	deploy.Calibrate(m.Model)
	return nil
}

// ForgetEntry returns the journal entry of the forget of class (exactly,
// with its n×d features x, or of its column only, with x nil).
func ForgetEntry(version uint64, class string, x []float32, d int) *modelfile.JournalEntry {
	return &modelfile.JournalEntry{Op: "forget", Version: version, Time: time.Now().UTC(), Names: []string{class}, D: d, X: x}
}

// MergeEntry returns the history entry of a merge of statistics (flycl
// merge) that taught the classes names: the model is at version after it.
// It holds no features: a merge is saved whole, never replayed, and an
// undo does not reach past it.
func MergeEntry(version uint64, names []string, d int) *modelfile.JournalEntry {
	return &modelfile.JournalEntry{Op: "merge", Version: version, Time: time.Now().UTC(), Names: slices.Clone(names), D: d}
}

// Replay applies a journal entry to the model: the change it records,
// done again exactly as it was first done. The model must be below the
// entry's version, and is at it after (a change that ends elsewhere means
// the journal does not continue this model).
func Replay(ctx context.Context, m *deploy.Model, e *modelfile.JournalEntry) error {
	if e.Version <= m.Model.Version() {
		return fmt.Errorf("store: journal entry of version %d on a model at version %d", e.Version, m.Model.Version())
	}
	if e.D != m.Model.InputDim() {
		return fmt.Errorf("store: journal entry of d=%d on a model of d=%d", e.D, m.Model.InputDim())
	}
	switch e.Op {
	case "learn":
		opt := deploy.LearnOptions{Lambda: e.Lambda, Online: e.Online, Batch: e.Batch}
		if e.LambdaPolicy != "" {
			p, err := flycl.ParseLambdaPolicy(e.LambdaPolicy)
			if err != nil {
				return fmt.Errorf("store: journal entry of version %d: %w", e.Version, err)
			}
			opt.LambdaPolicy = p
		}
		if _, err := m.Learn(ctx, e.X, e.Names, nil, opt); err != nil {
			return fmt.Errorf("store: replay the learn of version %d: %w", e.Version, err)
		}
	case "forget":
		if _, _, err := m.Forget(ctx, e.Names[0], e.X, nil); err != nil {
			return fmt.Errorf("store: replay the forget of version %d: %w", e.Version, err)
		}
	case "unlearn":
		labels, err := labelsOf(m, e.Names)
		if err == nil {
			_, err = m.Model.Unlearn(ctx, e.X, labels, e.LambdaBefore)
		}
		if err == nil {
			err = restoreCalibration(m, e.Calibration)
		}
		if err != nil {
			return fmt.Errorf("store: replay the undo of version %d: %w", e.Version, err)
		}
	case "merge":
		return fmt.Errorf("store: the merge of version %d cannot be replayed (a merge is saved whole): the journal does not continue this model file", e.Version)
	default:
		return fmt.Errorf("store: journal entry of version %d: unknown op %q", e.Version, e.Op)
	}
	if m.Model.Version() != e.Version {
		// an online learn is one change of the file but several versions
		// of the model: it is journalled with the version it ended at
		return fmt.Errorf("store: the replayed change of version %d left the model at version %d", e.Version, m.Model.Version())
	}
	return nil
}
