package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flycl/flycl/app/deploy"
	"github.com/flycl/flycl/format/modelfile"
	"github.com/flycl/flycl/reject"
)

// TestJournalTamperedUnderWriter: a journal written to inside (the same
// size: one byte of its last record changed) or cut (its last record
// gone) behind a store with Checkpoints is noticed before the next change
// is acknowledged (refused, wrapping modelfile.ErrJournalChanged), and
// every change acknowledged before is saved to a new checkpoint: the
// file then loads with all of them, and Health says so.
func TestJournalTamperedUnderWriter(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		tamper func(jp string, size int64) error
	}{
		{"a byte changed, same size", func(jp string, size int64) error {
			b, err := os.ReadFile(jp)
			if err != nil {
				return err
			}
			b[len(b)-3] ^= 0x40
			return os.WriteFile(jp, b, 0o644) // in place: same file, same size
		}},
		{"cut at its last record", func(jp string, size int64) error { return os.Truncate(jp, size) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "m.flycl")
			st, err := Open(ctx, path, &Options{Checkpoints: Checkpoints{Entries: 100}, Command: t.Name()})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			m, _ := deploy.New(cfg, 3, nil, nil)
			st.Create(m)
			var lastStart int64
			for i, c := range []string{"a", "b", "c"} {
				if c == "c" {
					lastStart = st.journal.Size()
				}
				if err := st.Update(ctx, learn(ctx, c, float32(i))); err != nil {
					t.Fatal(err)
				}
			}
			if cp, _ := modelfile.ReadCheckpoint(path); cp.Version != 1 {
				t.Fatalf("the model file is version %d: the learns should be in the journal only", cp.Version)
			}
			if err := tc.tamper(modelfile.JournalPath(path), lastStart); err != nil {
				t.Fatal(err)
			}
			err = st.Update(ctx, learn(ctx, "d", 3))
			if !errors.Is(err, modelfile.ErrJournalChanged) {
				t.Fatalf("a learn after the journal was %s: %v", tc.name, err)
			}
			if h := st.Health(); h == nil || !strings.Contains(h.Error(), "saved to a new checkpoint") {
				t.Fatalf("health after the rescue: %v", h)
			}
			got, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			names := got.Model.Classes().Names()
			slices.Sort(names)
			if !slices.Equal(names, []string{"a", "a2", "b", "b2", "c", "c2"}) || got.Model.Version() != 3 {
				t.Fatalf("after the rescue the file has %v at version %d, want every acknowledged learn (a, b, c) at version 3", names, got.Model.Version())
			}
		})
	}
}

// TestLearnPrepareNoGap: a learn whose prepare counts as a change of its
// own (a threshold set by hand: SetRejection bumps the version) records
// where it started, before the prepare, so its history shows no gap and
// an undo --to the learn before it is done and gives that model.
func TestLearnPrepareNoGap(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.flycl")
	st := create(t, path, true)
	defer st.Close()
	if err := st.Update(ctx, learn(ctx, "a", 0)); err != nil {
		t.Fatal(err)
	}
	rule, err := reject.ParseRule("0.5", reject.Rule{})
	if err != nil {
		t.Fatal(err)
	}
	x := []float32{1, 2, 3, 3, 2, 1}
	if _, err := st.Learn(ctx, LearnData{X: x, D: 3, Names: []string{"b", "b2"}}, deploy.LearnOptions{}, func(m *deploy.Model) error { return m.Model.SetRejection(rule) }); err != nil {
		t.Fatal(err)
	}
	hist, err := st.History()
	if err != nil {
		t.Fatal(err)
	}
	if i := Unbroken(hist); i != 0 {
		t.Fatalf("a gap before entry %d: %+v", i, hist)
	}
	one := uint64(1)
	if _, err := st.Undo(ctx, &one); err != nil {
		t.Fatalf("undo --to 1: %v", err)
	}
	if names := st.model.Model.Classes().Names(); !slices.Equal(names, []string{"a", "a2"}) {
		t.Fatalf("after undo --to 1: %v", names)
	}
}
