package store

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/deploy"
	"github.com/flycl/flycl/format/modelfile"
	"github.com/flycl/flycl/internal/codec"
	"github.com/flycl/flycl/internal/statcmp"
)

// crasher is a fault injector: it replaces the store's writes (Faults)
// with the same writes done step by step, and at its crashAt-th step
// leaves the files as a writer killed there leaves them (a partial
// temporary file, a file written but not renamed, a model file renamed
// before its journal was started anew on it, a partial journal record,
// a record written but not synced) and stops the goroutine
// (runtime.Goexit: no deferred rollback, no checkpoint, nothing more
// written), as kill -9 stops a process. A kill keeps what was written
// and not synced (the page cache survives it), so a step before a sync
// and the one after leave the same files: both are counted, as every
// write and sync is a point.
type crasher struct {
	path       string // the model file
	crashAt, n int
	points     []string // every step reached, in order
	crashed    string   // the step it crashed at
}

// point is one step: at the crash step, state leaves the files as the
// step found them, and the goroutine ends.
func (c *crasher) point(name string, state func()) {
	c.points = append(c.points, name)
	if c.n == c.crashAt {
		c.crashed = name
		if state != nil {
			state()
		}
		runtime.Goexit()
	}
	c.n++
}

func (c *crasher) faults() *Faults {
	return &Faults{
		Open: func(path string, cp modelfile.Checkpoint) (*modelfile.Journal, error) {
			c.point("journal open: before", nil)
			j, _, err := modelfile.OpenJournal(path, cp)
			if err == nil {
				c.point("journal open: after (torn tail cut, synced; or started anew)", nil)
			}
			return j, err
		},
		Append: func(j *modelfile.Journal, e *modelfile.JournalEntry) error {
			mark := j.Size()
			c.point("append: write (half a record written)", func() {
				if j.Append(e) == nil {
					os.Truncate(modelfile.JournalPath(c.path), mark+modelfile.RecordSize(e)/2)
				}
			})
			c.point("append: sync (record written, not synced)", func() { j.Append(e) })
			return j.Append(e)
		},
		Save: func(m *deploy.Model, path string) error {
			dir, base := filepath.Split(path)
			tmp := filepath.Join(dir, "."+base+".tmp-1")
			other := filepath.Join(dir, "other-"+base)
			c.point("save: write (half a temporary file)", func() {
				if saveModel(m, other) == nil {
					b, _ := os.ReadFile(other)
					os.WriteFile(tmp, b[:len(b)/2], 0o666)
					os.Remove(other)
				}
			})
			c.point("save: sync (temporary file whole, not renamed)", func() {
				if saveModel(m, other) == nil {
					os.Rename(other, tmp)
				}
			})
			c.point("save: rename (model file in place, journal not started anew)", func() {
				if saveModel(m, other) == nil {
					os.Rename(other, path)
				}
			})
			c.point("save: sync the folder", func() {
				if saveModel(m, other) == nil {
					os.Rename(other, path)
				}
			})
			c.point("save: journal anew (temporary journal written)", func() {
				if saveModel(m, other) == nil {
					os.Rename(other, path)
				}
			})
			c.point("save: journal anew (renamed)", func() { saveModel(m, path) })
			return saveModel(m, path)
		},
	}
}

// crashOp is an operation a crash is injected into.
type crashOp struct {
	name string
	// setup is the history before the operation (run without faults).
	setup []string
	run   func(ctx context.Context, st *Store) error
}

var crashOps = []crashOp{
	{"first learn of a new file", nil, func(ctx context.Context, st *Store) error { return st.Update(ctx, learn(ctx, "a", 0)) }},
	{"learn", []string{"a", "b"}, func(ctx context.Context, st *Store) error { return st.Update(ctx, learn(ctx, "c", 2)) }},
	{"forget", []string{"a", "b"}, func(ctx context.Context, st *Store) error {
		_, err := st.Forget(ctx, "a", nil)
		return err
	}},
	{"undo", []string{"a", "b", "c"}, func(ctx context.Context, st *Store) error {
		_, err := st.Undo(ctx, nil)
		return err
	}},
	{"undo --to 1", []string{"a", "b", "c"}, func(ctx context.Context, st *Store) error {
		one := uint64(1)
		_, err := st.Undo(ctx, &one)
		return err
	}},
	{"merge", []string{"a", "b"}, func(ctx context.Context, st *Store) error {
		x := []float32{1, 2, 3, 3, 2, 1, 1.5, 2, 2.5, 2.5, 2, 1.5}
		worker, err := flycl.New(cfg, 3)
		if err != nil {
			return err
		}
		ts, err := worker.TaskStats(ctx, x, []int{0, 1, 0, 1})
		if err != nil {
			return err
		}
		f, err := modelfile.NewStatsFile(worker, nil, ts, []string{"ma", "mb"}, []string{"t#0", "t#1", "t#2", "t#3"}, modelfile.Shard{Index: 0, Count: 1, Source: "t"})
		if err != nil {
			return err
		}
		_, err = st.Merge(ctx, f, 0)
		return err
	}},
	{"checkpoint", []string{"a", "b"}, func(ctx context.Context, st *Store) error { return st.Checkpoint() }},
}

// TestCrashAtEveryStep: a crash at every write and sync of a learn, a
// forget, an undo, an undo --to, a merge and a checkpoint, with and without
// Checkpoints (the server's store and the command line's), leaves a
// model file whose history holds exactly the changes the model holds:
// after reopening, the history has no gap and ends at the model's
// version, and replaying it from the model as created gives the model
// (G and S to the bit: they are sums the replay makes in the same
// order); undo --to 1, where the history allows it, gives the model a
// fresh learn of version 1's samples gives (G and S to the bit: the
// undone learns' features are added and subtracted exactly, see
// checkSame), and never claims a version the model is not at.
func TestCrashAtEveryStep(t *testing.T) {
	ctx := context.Background()
	modes := []struct {
		name string
		opt  Options
	}{
		{"command line (journal, every change saved whole)", Options{Journal: true}},
		{"server (checkpoint every 2 changes)", Options{Checkpoints: Checkpoints{Entries: 2}}},
	}
	total := 0
	for _, mode := range modes {
		for _, op := range crashOps {
			if op.name == "checkpoint" && mode.opt.Checkpoints.Entries == 0 {
				continue
			}
			for k := 0; ; k++ {
				c := &crasher{crashAt: k}
				if !crashOnce(t, ctx, mode.opt, op, c) {
					if k == 0 {
						t.Fatalf("%s, %s: no write to crash at", mode.name, op.name)
					}
					break
				}
				total++
				t.Run(fmt.Sprintf("%s/%s/%d %s", mode.name, op.name, k, c.crashed), func(t *testing.T) {
					checkHistory(t, ctx, c.path, mode.opt)
				})
			}
		}
	}
	t.Logf("%d crash points checked", total)
}

// crashOnce sets up op's history in a new folder, runs op with c
// crashing at its step c.crashAt, and abandons the store as a kill does
// (its lock released, nothing else). It reports whether op crashed (false:
// it has fewer steps, and ran whole).
func crashOnce(t *testing.T, ctx context.Context, opt Options, op crashOp, c *crasher) bool {
	t.Helper()
	c.path = filepath.Join(t.TempDir(), "m.flycl")
	opt.Command = t.Name()
	st, err := Open(ctx, c.path, &opt)
	if err != nil {
		t.Fatal(err)
	}
	m, err := deploy.New(cfg, 3, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Create(m); err != nil {
		t.Fatal(err)
	}
	for i, class := range op.setup {
		if err := st.Update(ctx, learn(ctx, class, float32(i))); err != nil {
			t.Fatal(err)
		}
	}
	st.opt.Faults = c.faults()
	done := make(chan error, 1)
	go func() {
		defer close(done)
		done <- op.run(ctx, st)
	}()
	err, ran := <-done
	// a kill: the lock is released with the process, and its journal's
	// file closed; nothing is written
	st.mu.Lock()
	st.journal.Close()
	st.mu.Unlock()
	st.lock.Unlock()
	if ran && err != nil {
		t.Fatalf("%s without a crash: %v", op.name, err)
	}
	return !ran
}

// checkHistory reopens the model file at path and checks that its
// history and model move together.
func checkHistory(t *testing.T, ctx context.Context, path string, opt Options) {
	opt.Command = t.Name()
	opt.Create = func() (*deploy.Model, error) { return deploy.New(cfg, 3, nil, nil) }
	st, err := Open(ctx, path, &opt)
	if err != nil {
		t.Fatalf("reopen after the crash: %v", err)
	}
	defer st.Close()
	m := st.model
	hist, err := st.History()
	if err != nil {
		t.Fatalf("history after the crash: %v", err)
	}
	if len(hist) == 0 {
		if m.Model.Version() != 0 || m.Model.Classes().Len() != 0 {
			t.Fatalf("no history, but the model is at version %d with %v", m.Model.Version(), m.Model.Classes().Names())
		}
		return
	}
	if last := hist[len(hist)-1].Version; last != m.Model.Version() {
		t.Fatalf("the history ends at version %d, the model is at %d", last, m.Model.Version())
	}
	if i := Unbroken(hist); i != 0 || hist[0].VersionBefore != 0 {
		t.Fatalf("the history has a gap before entry %d (%+v)", i, hist[i])
	}
	if hasOp(hist, "merge") != hasClass(m, "ma") {
		t.Fatalf("the history has a merge: %v; the model has its class: %v", hasOp(hist, "merge"), hasClass(m, "ma"))
	}
	if hasOp(hist, "merge") {
		return // a merge is not replayed
	}
	// the truth: the history replayed on the model as created
	r, err := deploy.New(cfg, 3, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range hist {
		if err := Replay(ctx, r, e); err != nil {
			t.Fatalf("replay the history: %v", err)
		}
	}
	checkSame(t, "the model", m, "its history replayed", r)

	// undo --to 1: refused (a forget after it), or the model as a fresh
	// learn of version 1's samples gives
	one := uint64(1)
	if _, err := UndoPlan(hist, m.Model.Version(), &one); err != nil {
		if hasOp(hist, "forget") {
			return
		}
		t.Fatalf("undo --to 1 refused: %v", err)
	}
	if _, err := st.Undo(ctx, &one); err != nil {
		t.Fatalf("undo --to 1: %v", err)
	}
	f, err := deploy.New(cfg, 3, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := learn(ctx, "a", 0)(f); err != nil {
		t.Fatal(err)
	}
	// the tolerance: every learn's rows were added to G and S, and those
	// after version 1 subtracted again, each add rounding by at most u
	// of a partial sum bounded by Σ|h_i h_j| ≤ √(A_ii A_jj) (Cauchy-
	// Schwarz), A the Gram of every row ever learned
	all, err := deploy.New(cfg, 3, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	rows := 0
	for _, e := range hist {
		if e.Op == "learn" {
			if _, err := all.Learn(ctx, e.X, e.Names, nil, deploy.LearnOptions{}); err != nil {
				t.Fatal(err)
			}
			rows += 2 * e.Rows()
		}
	}
	if err := statcmp.Close(st.model.Model, f.Model, all.Model, float64(rows)*0x1p-24); err != nil {
		t.Fatalf("undo --to 1 against a fresh learn of version 1: %v", err)
	}
}

func hasOp(hist []*modelfile.JournalEntry, op string) bool {
	return slices.ContainsFunc(hist, func(e *modelfile.JournalEntry) bool { return e.Op == op })
}

// checkSame compares two models' classes, samples and statistics G and
// S to the bit. G and S are sums of products of the top-k codes (0/1)
// and one-hot labels: small integers, exact in float32, so that any
// order of adding and subtracting them (a replay, an undo) gives the
// same bits.
func checkSame(t *testing.T, what string, a *deploy.Model, than string, b *deploy.Model) {
	t.Helper()
	if !slices.Equal(a.Model.Classes().Names(), b.Model.Classes().Names()) || a.Model.Samples() != b.Model.Samples() {
		t.Fatalf("%s has classes %v and %d samples, %s %v and %d", what, a.Model.Classes().Names(), a.Model.Samples(), than, b.Model.Classes().Names(), b.Model.Samples())
	}
	sa, sb := a.Model.Snapshot(), b.Model.Snapshot()
	for i := range a.Model.Config().M {
		if !slices.Equal(codec.LowerRow(sa, i), codec.LowerRow(sb, i)) {
			t.Fatalf("%s: G row %d differs from %s", what, i, than)
		}
	}
	if !slices.Equal(sa.S(), sb.S()) {
		t.Fatalf("%s: S differs from %s", what, than)
	}
}
