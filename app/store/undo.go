package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"time"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/deploy"
	"github.com/flycl/flycl/format/modelfile"
)

// ErrNoUndo is matched (errors.Is) by the error of an undo the model's
// journal cannot do: no learn to undo, one older than the history kept,
// one before a forget, or a version that is not a learn's.
var ErrNoUndo = errors.New("store: nothing to undo")

// Undoable returns the learns an undo can take back, oldest first, from
// a model's journal history (modelfile.ReadHistory): the learns not yet
// undone since the last forget. An undo takes back the last of them.
//
// A gap in the history (an entry that does not start where the one
// before it ended: a record lost) ends what an undo reaches as a forget
// does: only the learns after it are undoable.
func Undoable(hist []*modelfile.JournalEntry) []*modelfile.JournalEntry {
	var stack []*modelfile.JournalEntry
	for _, e := range hist[Unbroken(hist):] {
		switch e.Op {
		case "learn":
			stack = append(stack, e)
		case "unlearn":
			if i := slices.IndexFunc(stack, func(l *modelfile.JournalEntry) bool { return l.Version == e.Undoes }); i >= 0 {
				stack = slices.Delete(stack, i, i+1)
			}
		default: // a forget: what came before is not undone past it
			stack = stack[:0]
		}
	}
	return stack
}

// Unbroken returns where the last unbroken run of the history hist
// begins: the index of the first entry after its last gap (0: none). An
// entry whose VersionBefore is not the version the entry before it ended
// at follows a gap: the changes between were made, but their records
// are lost (a journal cut, or damage repaired away), so no undo may
// reach past it. Entries written before VersionBefore was recorded (0)
// are taken to follow on.
func Unbroken(hist []*modelfile.JournalEntry) int {
	for i := len(hist) - 1; i > 0; i-- {
		if b := hist[i].VersionBefore; b != 0 && b != hist[i-1].Version {
			return i
		}
	}
	return 0
}

// UndoLast takes the last learn of the model's journal history back out
// exactly (flycl.Model.Unlearn, with the λ the model had before it), puts
// back the calibration it had before it (threshold, temperature and
// leave-one-out pool: codec.RestoreCalibration), as a new version,
// and returns the journal entry of that change. The model
// must be the one the history ends at.
func UndoLast(ctx context.Context, m *deploy.Model, hist []*modelfile.JournalEntry) (*modelfile.JournalEntry, error) {
	if len(hist) > 0 && hist[len(hist)-1].Version != m.Model.Version() {
		return nil, fmt.Errorf("%w: the journal ends at version %d, the model is at %d (changed without the journal)", ErrNoUndo, hist[len(hist)-1].Version, m.Model.Version())
	}
	st := Undoable(hist)
	if len(st) == 0 {
		if len(hist) == 0 && m.Model.Version() == 0 {
			return nil, fmt.Errorf("%w: the model has learned nothing yet (version 0): there is no learn to take back", ErrNoUndo)
		}
		if len(hist) == 0 {
			return nil, fmt.Errorf("%w: the model has no journal of its learns, so none can be taken back (it was learned with --no-journal, or by an older flycl); flycl learn starts one at the next learn (unless --no-journal), and flycl serve keeps one: the learns from then on can be undone", ErrNoUndo)
		}
		return nil, fmt.Errorf("%w: no learn left to undo in the journal (it keeps the learns since the last forget or merge, up to %d MiB)", ErrNoUndo, modelfile.HistoryBytes>>20)
	}
	e := st[len(st)-1]
	if e.Op != "learn" {
		return nil, fmt.Errorf("%w: version %d is a %s", ErrNoUndo, e.Version, e.Op)
	}
	labels, err := labelsOf(m, e.Names)
	if err != nil {
		return nil, err
	}
	lambda := e.LambdaBefore
	if lambda == 0 {
		// the learn was the model's first: nothing is left to solve for
		lambda = m.Model.Lambda()
	}
	if _, err := m.Model.Unlearn(ctx, e.X, labels, lambda); err != nil {
		return nil, fmt.Errorf("store: undo the learn of version %d: %w", e.Version, err)
	}
	// the threshold, temperature and pool of the version before the learn
	// (a learn journalled before they were recorded: the model keeps its own)
	if err := restoreCalibration(m, e.Calibration); err != nil {
		return nil, fmt.Errorf("store: undo the learn of version %d: its calibration: %w", e.Version, err)
	}
	return &modelfile.JournalEntry{Op: "unlearn", Version: m.Model.Version(), Time: time.Now().UTC(), LambdaBefore: lambda,
		Undoes: e.Version, Names: slices.Clone(e.Names), D: e.D, X: e.X, Calibration: e.Calibration}, nil
}

// labelsOf returns the labels of the classes called names (every one
// must exist).
func labelsOf(m *deploy.Model, names []string) ([]int, error) {
	out := make([]int, len(names))
	for i, n := range names {
		l, ok := m.Model.Classes().LabelOf(n)
		if !ok {
			return nil, fmt.Errorf("store: %w %q", flycl.ErrUnknownClass, n)
		}
		out[i] = l
	}
	return out, nil
}

// HistoryItem is one change of a model, as its journal records it.
type HistoryItem struct {
	Version uint64    `json:"version"`
	Time    time.Time `json:"time"`
	// Op is learn, forget or undo.
	Op string `json:"op"`
	// Classes are the classes the change touched, Samples its samples.
	Classes []string `json:"classes"`
	Samples int      `json:"samples"`
	// LambdaBefore is the model's λ before the change.
	LambdaBefore float64 `json:"lambda_before"`
	// Undoes is the version an undo took back.
	Undoes uint64 `json:"undoes,omitempty"`
	// Undoable: an undo now would take back this learn (the last one)
	// or, with --to, the learns after it.
	Undoable bool `json:"undoable"`
}

// History lists the changes the journal of the model file at path
// records, oldest first.
func History(path string) ([]HistoryItem, error) {
	cp, err := modelfile.ReadCheckpoint(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	hist, err := modelfile.ReadHistory(path, cp.ID)
	if err != nil {
		return nil, err
	}
	undoable := map[uint64]bool{}
	// a model file past the journal's last record was changed without
	// the journal (a record over modelfile.MaxJournalEntry, a torn
	// record): undo takes nothing back (UndoLast, UndoPlan), so no learn
	// is undoable
	if n := len(hist); n == 0 || cp.Version <= hist[n-1].Version {
		for _, e := range Undoable(hist) {
			undoable[e.Version] = true
		}
	}
	out := make([]HistoryItem, len(hist))
	for i, e := range hist {
		op := e.Op
		if op == "unlearn" {
			op = "undo"
		}
		out[i] = HistoryItem{Version: e.Version, Time: e.Time, Op: op, Classes: deploy.Distinct(e.Names), Samples: e.Rows(),
			LambdaBefore: e.LambdaBefore, Undoes: e.Undoes, Undoable: undoable[e.Version]}
		if e.Op == "forget" {
			out[i].Samples = e.Rows()
		}
	}
	return out, nil
}

// JournalSamples returns the n×d features of the samples of class the
// journal history holds (its learns of d features, less those undone),
// for an exact forget without the data. A learn of another length (a
// journal that is outside bytes) is left out: its rows are not the
// model's samples, and the caller, which checks that it has them all,
// then forgets the class's column only.
func JournalSamples(hist []*modelfile.JournalEntry, class string, d int) []float32 {
	var x []float32
	undone := map[uint64]bool{}
	for _, e := range hist {
		if e.Op == "unlearn" {
			undone[e.Undoes] = true
		}
	}
	for _, e := range hist {
		if e.Op != "learn" || undone[e.Version] || e.D != d {
			continue
		}
		x = append(x, deploy.Select(e.X, e.D, e.Names, class)...)
	}
	return x
}
