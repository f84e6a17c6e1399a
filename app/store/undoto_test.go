package store

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/format/modelfile"
)

// TestUndoPlan: what an undo takes back, by its target, on journal
// histories built by hand: the last learn, every learn after a version
// (skipping learns undone already), version 0 (the model as created),
// nothing when the model is already there, and refusals naming why: a
// version after the model's, one the journal does not record, a forget
// or an undo in the way.
func TestUndoPlan(t *testing.T) {
	learn := func(v uint64, lambdaBefore float64, names ...string) *modelfile.JournalEntry {
		return &modelfile.JournalEntry{Op: "learn", Version: v, LambdaBefore: lambdaBefore, Names: names}
	}
	unlearn := func(v, undoes uint64) *modelfile.JournalEntry {
		return &modelfile.JournalEntry{Op: "unlearn", Version: v, Undoes: undoes}
	}
	forget := func(v uint64, class string) *modelfile.JournalEntry {
		return &modelfile.JournalEntry{Op: "forget", Version: v, Names: []string{class}}
	}
	// with a forget: 1 a, 2 b, 3 c, 4 undo of 3, 5 d, 6 forget b, 7 e, 8 f
	withForget := []*modelfile.JournalEntry{learn(1, 0, "a"), learn(2, 1, "b"), learn(3, 1, "c"), unlearn(4, 3), learn(5, 1, "d"), forget(6, "b"), learn(7, 1, "e"), learn(8, 1, "f")}
	// without: 1 a, 2 b, 3 c, 4 undo of 3, 5 d
	noForget := withForget[:5]
	// a journal that begins after the model's first learn
	trimmed := []*modelfile.JournalEntry{learn(4, 1.5, "x"), learn(5, 1.5, "y")}
	// every learn undone
	allUndone := []*modelfile.JournalEntry{learn(1, 0, "a"), unlearn(2, 1)}
	v := func(n uint64) *uint64 { return &n }
	for _, c := range []struct {
		name   string
		hist   []*modelfile.JournalEntry
		cur    uint64
		to     *uint64
		want   []uint64 // versions of the learns taken back, newest first
		refuse string   // a fragment of the refusal
	}{
		{"last learn", withForget, 8, nil, []uint64{8}, ""},
		{"to the version before the last", withForget, 8, v(7), []uint64{8}, ""},
		{"to a forget's version", withForget, 8, v(6), []uint64{8, 7}, ""},
		{"past a forget", withForget, 8, v(5), nil, "version 6 is a forget"},
		{"0 past a forget", withForget, 8, v(0), nil, "version 6 is a forget"},
		{"to the version served", withForget, 8, v(8), []uint64{}, ""},
		{"after the model", withForget, 8, v(9), nil, "after the model's version 8"},
		{"to 0: every learn", noForget, 5, v(0), []uint64{5, 2, 1}, ""},
		{"to 1", noForget, 5, v(1), []uint64{5, 2}, ""},
		{"to 2: the undone learn skipped", noForget, 5, v(2), []uint64{5}, ""},
		{"to an undone learn", noForget, 5, v(3), nil, "the learn of version 3 was undone at version 4"},
		{"to an undo's version", noForget, 5, v(4), []uint64{5}, ""},
		{"last of a history with an undo", noForget, 5, nil, []uint64{5}, ""},
		{"0 without the first learn", trimmed, 5, v(0), nil, "version 0 is not one the journal records"},
		{"a version before the journal", trimmed, 5, v(3), nil, "version 3 is not one the journal records (it holds versions 4 to 5"},
		{"the first version the journal holds", trimmed, 5, v(4), []uint64{5}, ""},
		{"changed without the journal", noForget, 6, v(1), nil, "the journal ends at version 5, the model is at 6"},
		{"no journal", nil, 3, nil, nil, "no journal"},
		{"no learn left", allUndone, 2, nil, nil, "no learn left to undo in the journal"},
		{"no learn after a forget", withForget[:6], 6, nil, nil, "no learn left to undo after version 6, a forget"},
		{"0 with every learn undone: nothing to do", allUndone, 2, v(0), []uint64{}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			plan, err := UndoPlan(c.hist, c.cur, c.to)
			if c.refuse != "" {
				if err == nil || !strings.Contains(err.Error(), c.refuse) {
					t.Fatalf("got %v, %v; want a refusal saying %q", plan, err, c.refuse)
				}
				if !errors.Is(err, ErrNoUndo) || !flycl.IsInput(err) {
					t.Errorf("%v: not ErrNoUndo and input", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := []uint64{}
			for _, e := range plan {
				if e.Op != "learn" {
					t.Errorf("plan holds a %s", e.Op)
				}
				got = append(got, e.Version)
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("takes back %v, want %v", got, c.want)
			}
		})
	}
}
