package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/deploy"
)

// ForgetData is training data offered to Forget: the features of labelled
// samples, of which only the forgotten class's are used.
type ForgetData struct {
	X      []float32 // N×D, row-major
	D      int
	Names  []string // each sample's class
	Source string   // names the data in Forgotten and in errors
}

// FromJournal is Forgotten.Source when the journal gave the samples.
const FromJournal = "the model's journal"

// Forgotten is what Forget did.
type Forgotten struct {
	// Exact: the class's statistics were subtracted from G and S and the
	// classifier re-solved (Record says how); otherwise only its column
	// was dropped.
	Exact  bool
	Record flycl.TaskRecord
	// Source is where the samples of an exact forget came from:
	// ForgetData.Source or FromJournal.
	Source string
	// Held, when not Exact, is how many of the class's samples G still
	// holds (-1: unknown).
	Held int
}

// Forget removes class from the model as one durable change. It is exact
// (the model then equals one that never learned the class, up to float32
// rounding in G) with the class's samples: those of the data when a data
// func is given (called, with the model, under the store's lock, only
// once the class is known, so that a refused forget reads no data; its
// samples are checked against what the class learned), else the
// journal's when its history holds every sample the class learned
// (JournalSamples). Without either only the class's column is dropped. A
// class the model does not have is an error wrapping
// flycl.ErrUnknownClass, data without a sample of the class or of another
// dimension an error that is input (flycl.IsInput), and the model
// unchanged. As with Update, a change saved but not recorded in the
// journal returns its Forgotten with an error wrapping ErrNotRecorded.
func (s *Store) Forget(ctx context.Context, class string, data func(*deploy.Model) (*ForgetData, error)) (*Forgotten, error) {
	if s.model == nil {
		return nil, fmt.Errorf("%s does not exist", s.path)
	}
	res := &Forgotten{}
	// the model is read (the class, the data's check) and changed under
	// the store's lock, in one Update: a refusal reads nothing back
	err := s.Update(ctx, func(m *deploy.Model) (Change, error) {
		if _, ok := m.Model.Classes().LabelOf(class); !ok {
			return Change{}, Refused(fmt.Errorf("%w: %s has no class %q (classes: %v)", flycl.ErrUnknownClass, s.path, class, m.Model.Classes().Names()))
		}
		res.Held = classCount(m, class)
		var x []float32
		if data != nil {
			d, err := data(m)
			if err != nil {
				return Change{}, Refused(err)
			}
			switch {
			case d.D != m.Model.InputDim():
				return Change{}, Refused(flycl.Input(fmt.Errorf("%s has %d-dimensional features, the model d=%d", d.Source, d.D, m.Model.InputDim())))
			case len(d.X) != len(d.Names)*d.D:
				return Change{}, Refused(flycl.Input(fmt.Errorf("%s has %d feature values for %d samples of d=%d", d.Source, len(d.X), len(d.Names), d.D)))
			}
			if x = deploy.Select(d.X, d.D, d.Names, class); x == nil {
				return Change{}, Refused(flycl.Input(fmt.Errorf("%s has no samples of class %q", d.Source, class)))
			}
			res.Source = d.Source
		} else if x = s.journalSamples(class); x != nil {
			res.Source = FromJournal
		}
		var err error
		if res.Record, res.Exact, err = m.Forget(ctx, class, x, nil); err != nil {
			return Change{}, fmt.Errorf("forget (%s unchanged): %w", s.path, err)
		}
		return Change{Entry: ForgetEntry(m.Model.Version(), class, x, m.Model.InputDim())}, nil
	})
	if err != nil && !errors.Is(err, ErrNotRecorded) {
		return nil, err
	}
	if !res.Exact {
		res.Source = ""
	}
	return res, err
}

// classCount is how many samples m's class learned (-1: no such class).
func classCount(m *deploy.Model, class string) int {
	label, ok := m.Model.Classes().LabelOf(class)
	if !ok {
		return -1
	}
	for i, l := range m.Model.Classes().Labels() {
		if l == label {
			return m.Model.Classes().Counts()[i]
		}
	}
	return -1
}
