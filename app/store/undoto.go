package store

import (
	"errors"
	"fmt"
	"slices"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/deploy"
	"github.com/flycl/flycl/format/modelfile"
)

// Undone describes a learn an undo took back: its version, its kind
// (always "learn": only learns are undone), the classes and the number
// of samples it had taught.
type Undone struct {
	Version uint64   `json:"version"`
	Op      string   `json:"op"`
	Classes []string `json:"classes"`
	Samples int      `json:"samples"`
}

// UndoneOf describes the learn of journal entry e.
func UndoneOf(e *modelfile.JournalEntry) Undone {
	return Undone{Version: e.Version, Op: e.Op, Classes: deploy.Distinct(e.Names), Samples: e.Rows()}
}

// ErrNotLast is matched (errors.Is) by the error of an undo that names
// the learn it takes back (CheckLast) when that learn is not the one an
// undo would take back now: another change came after it (HTTP 409).
var ErrNotLast = errors.New("store: the learn named is not the last")

// CheckLast reports whether an undo of the history hist (oldest first)
// takes back the learn of version version: nil when that learn is the last
// one not undone (Undoable), else an error wrapping ErrNotLast (and
// input, flycl.IsInput) saying what is last now. A client that undoes the
// learn it made names its version, so that it never takes back another
// client's.
func CheckLast(hist []*modelfile.JournalEntry, version uint64) error {
	st := Undoable(hist)
	if len(st) > 0 && st[len(st)-1].Version == version {
		return nil
	}
	now := "no learn can be undone now"
	if len(st) > 0 {
		now = fmt.Sprintf("the last learn is version %d", st[len(st)-1].Version)
	}
	if len(hist) > 0 {
		last := hist[len(hist)-1]
		op := last.Op
		if op == "unlearn" {
			op = "undo"
		}
		now += fmt.Sprintf(", and the last change version %d, a %s", last.Version, op)
	}
	return flycl.Input(fmt.Errorf("%w: the learn of version %d is not the one an undo takes back now (%s): nothing is undone", ErrNotLast, version, now))
}

// UndoPlan decides what an undo takes back, from the journal history hist
// (modelfile.ReadHistory, oldest first) of a model at version cur, and
// returns those learns newest first: the order Model.Undo takes them back
// in, one change each (UndoLast).
//
// With to nil, it is the last learn the journal can undo (Undoable).
//
// With to = N, it is every learn after version N that is not undone yet,
// so that the model ends as it was at version N: the same classes and
// statistics (up to float32 rounding), as a new version, since versions
// only grow. N is a version the journal records (the version of one of
// its changes), or 0: the model as created, before its first learn, when
// the journal holds that first learn (undoing every learn then leaves a
// model with no class). An undo to N is refused (an error wrapping
// ErrNoUndo, which is input: flycl.IsInput) when N is after the model's
// version, is not a version the journal records, or lies before a forget
// (an undo does not reach past a forget), or before an undo that took
// back a learn of N or earlier (an undo does not redo). When the model
// is already as it was at version N (N is its version, or every learn
// after N was undone since) the plan is empty and the error nil: an undo
// to N is safe to repeat, and two clients that both ask for it end at the
// same model.
func UndoPlan(hist []*modelfile.JournalEntry, cur uint64, to *uint64) ([]*modelfile.JournalEntry, error) {
	refuse := func(format string, a ...any) error {
		return flycl.Input(fmt.Errorf("%w: %s", ErrNoUndo, fmt.Sprintf(format, a...)))
	}
	if len(hist) == 0 && cur == 0 {
		return nil, refuse("the model has learned nothing yet (version 0): there is no learn to take back")
	}
	if len(hist) == 0 {
		return nil, refuse("the model has no journal of its learns, so none can be taken back (it was learned with --no-journal, or by an older flycl); flycl learn starts one at the next learn (unless --no-journal), and flycl serve keeps one: the learns from then on can be undone")
	}
	if last := hist[len(hist)-1].Version; last != cur {
		return nil, refuse("the journal ends at version %d, the model is at %d (changed without the journal)", last, cur)
	}
	st := Undoable(hist)
	i0 := Unbroken(hist)
	gap := func() error {
		lo := hist[i0].VersionBefore
		return refuse("the history has a gap: the changes after version %d up to version %d are not recorded (a record was lost: the journal was cut or damaged), so an undo does not reach past version %d (undo to version %d or later)", hist[i0-1].Version, lo, lo, lo)
	}
	if to == nil {
		if len(st) == 0 {
			if i0 > 0 && !slices.ContainsFunc(hist[i0:], func(e *modelfile.JournalEntry) bool { return e.Op != "learn" && e.Op != "unlearn" }) {
				return nil, gap()
			}
			for i := len(hist) - 1; i >= 0; i-- {
				if e := hist[i]; e.Op != "learn" && e.Op != "unlearn" {
					return nil, refuse("no learn left to undo after version %d, a %s (an undo does not reach past it)", e.Version, e.Op)
				}
			}
			return nil, refuse("no learn left to undo in the journal (it keeps the learns up to %d MiB)", modelfile.HistoryBytes>>20)
		}
		return []*modelfile.JournalEntry{st[len(st)-1]}, nil
	}
	n := *to
	switch {
	case n > cur:
		return nil, refuse("version %d is after the model's version %d", n, cur)
	case n == cur:
		return nil, nil
	}
	if i0 > 0 {
		if lo := hist[i0].VersionBefore; n < lo {
			return nil, gap()
		}
		hist = hist[i0:]
	}
	first := hist[0]
	recorded := slices.ContainsFunc(hist, func(e *modelfile.JournalEntry) bool { return e.Version == n }) || (i0 > 0 && n == first.VersionBefore)
	if n == 0 {
		// the model as created: the journal must begin with its first learn
		recorded = first.Op == "learn" && first.LambdaBefore == 0 && first.Version > 0
	}
	if !recorded {
		return nil, refuse("version %d is not one the journal records (it holds versions %d to %d: see flycl history)", n, first.Version, cur)
	}
	for _, e := range hist {
		if e.Version <= n {
			continue
		}
		switch e.Op {
		case "learn":
		case "unlearn":
			if e.Undoes <= n {
				return nil, refuse("the learn of version %d was undone at version %d, after version %d: an undo does not bring it back (undo to version %d or later)", e.Undoes, e.Version, n, e.Version)
			}
		default:
			return nil, refuse("version %d is a %s, after version %d: an undo does not reach past it (undo to version %d or later)", e.Version, e.Op, n, e.Version)
		}
	}
	var plan []*modelfile.JournalEntry
	for i := len(st) - 1; i >= 0 && st[i].Version > n; i-- {
		plan = append(plan, st[i])
	}
	return plan, nil
}
