package server

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/deploy"
	"github.com/flycl/flycl/format/modelfile"
)

// logBuf is a concurrency-safe log sink for a test.
type logBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuf) Write(p []byte) (int, error) { l.mu.Lock(); defer l.mu.Unlock(); return l.b.Write(p) }
func (l *logBuf) String() string              { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

// openJournalled opens (creating) a journalled backend on path, logging
// to log.
func openJournalled(t *testing.T, path string, every int, log *logBuf) *FileBackend {
	t.Helper()
	b, err := OpenFileWith(context.Background(), path, FileOptions{
		Create:      func() (*flycl.Model, error) { return flycl.New(testConfig(), testDim) },
		Checkpoints: Checkpoints{Entries: every},
		Logger:      slog.New(slog.NewTextHandler(log, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// learnStep learns two classes named after step.
func learnStep(b *FileBackend, r *rand.Rand, step int) error {
	x, y := clusters(r, []int{step % 4, (step + 1) % 4}, 4)
	names := make([]string, len(y))
	for i, c := range y {
		names[i] = className(c) + string(rune('a'+step))
	}
	_, _, err := b.Learn(context.Background(), slices.Concat(x...), names, deploy.LearnOptions{})
	return err
}

// TestServerLockRemoved: two servers with the lock file removed between
// them. The second takes a lock of its own; the first must refuse every
// change from then on (and say so in Health and its log), so that only
// one of them acknowledges changes of the file. Without the check both
// learn, and their journals interleave.
func TestServerLockRemoved(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.flycl")
	var logA logBuf
	a := openJournalled(t, path, 16, &logA)
	r := rand.New(rand.NewPCG(1, 2))
	if err := learnStep(a, r, 0); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(modelfile.LockPath(path)); err != nil {
		t.Fatal(err)
	}
	var logB logBuf
	b := openJournalled(t, path, 16, &logB)
	if err := learnStep(b, r, 1); err != nil {
		t.Fatalf("second server: %v", err)
	}
	if err := learnStep(a, r, 2); !errors.Is(err, modelfile.ErrLockLost) {
		t.Fatalf("first server's learn after its lock file was removed: %v", err)
	}
	if err := a.Health(); !errors.Is(err, modelfile.ErrLockLost) {
		t.Fatalf("first server's health: %v", err)
	}
	if s := logA.String(); !strings.Contains(s, "no more changes are taken") || !strings.Contains(s, "lock file") {
		t.Fatalf("first server's log: %q", s)
	}
	if err := b.Health(); err != nil {
		t.Fatalf("second server's health: %v", err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	m := savedModel(t, path)
	if m.Model.Version() != b.Current().Version() {
		t.Fatalf("saved version %d, the second server acknowledged %d", m.Model.Version(), b.Current().Version())
	}
	if _, ok := m.Model.Classes().LabelOf(className(2) + "c"); ok {
		t.Fatal("the first server's refused learn is in the file")
	}
}

// TestServerJournalTampered: a journal removed, replaced or cut behind a
// running server is noticed as its model file is: Health fails (with
// the way out) before any learn, and the next learn is refused rather
// than appended to a file no load will read.
func TestServerJournalTampered(t *testing.T) {
	for _, how := range []string{"removed", "replaced", "truncated"} {
		t.Run(how, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "m.flycl")
			var log logBuf
			b := openJournalled(t, path, 16, &log)
			r := rand.New(rand.NewPCG(3, 4))
			for step := range 3 {
				if err := learnStep(b, r, step); err != nil {
					t.Fatal(err)
				}
			}
			jp := modelfile.JournalPath(path)
			switch how {
			case "removed":
				os.Remove(jp)
			case "replaced":
				old, _ := os.ReadFile(jp)
				os.WriteFile(jp+".tmp", old, 0o644)
				os.Rename(jp+".tmp", jp)
			case "truncated":
				os.Truncate(jp, 0)
			}
			err := b.Health()
			if !errors.Is(err, modelfile.ErrJournalChanged) || !strings.Contains(err.Error(), "restart") {
				t.Fatalf("health: %v", err)
			}
			if err := learnStep(b, r, 3); !errors.Is(err, modelfile.ErrJournalChanged) {
				t.Fatalf("learn: %v", err)
			}
			if !strings.Contains(log.String(), "journal") {
				t.Fatalf("log: %q", log.String())
			}
		})
	}
}

// TestServerDiskFull: a checkpoint that cannot be written (a full disk,
// injected in the model file's save) does not fail a learn whose journal
// append fits: the learn is acknowledged from the journal, and the
// checkpoint tried later. A learn whose append fails too is refused (not
// acknowledged), Health says so (ErrNotDurable), and the next learn that
// can be saved clears it. Every acknowledged learn is in what a load
// reads.
func TestServerDiskFull(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.flycl")
	var log logBuf
	b := openJournalled(t, path, 2, &log)
	r := rand.New(rand.NewPCG(5, 6))
	if err := learnStep(b, r, 0); err != nil { // creates the file
		t.Fatal(err)
	}
	full := &os.PathError{Op: "write", Path: path, Err: syscall.ENOSPC}
	b.faults.Save = func(*deploy.Model, string) error { return full }
	for step := 1; step <= 3; step++ { // the second is a checkpoint, which fails
		if err := learnStep(b, r, step); err != nil {
			t.Fatalf("learn %d with a failing checkpoint: %v", step, err)
		}
	}
	if !strings.Contains(log.String(), "checkpoint failed") {
		t.Fatalf("log: %q", log.String())
	}
	if err := b.Health(); err != nil {
		t.Fatalf("health while the journal takes the changes: %v", err)
	}
	acked := b.Current().Version()
	b.faults.Append = func(*modelfile.Journal, *modelfile.JournalEntry) error { return full }
	if err := learnStep(b, r, 4); err == nil {
		t.Fatal("a learn that cannot be saved was acknowledged")
	}
	if err := b.Health(); !errors.Is(err, ErrNotDurable) {
		t.Fatalf("health after a change that could not be saved: %v", err)
	}
	if b.Current().Version() != acked {
		t.Fatalf("version %d after a refused learn, want %d", b.Current().Version(), acked)
	}
	b.faults.Append = nil
	if err := learnStep(b, r, 5); err != nil {
		t.Fatal(err)
	}
	if err := b.Health(); err != nil {
		t.Fatalf("health once changes are saved again: %v", err)
	}
	m := savedModel(t, path)
	if m.Model.Version() != b.Current().Version() {
		t.Fatalf("a load reads version %d, the server acknowledged %d", m.Model.Version(), b.Current().Version())
	}
	if _, ok := m.Model.Classes().LabelOf(className(4) + "e"); ok {
		t.Fatal("the refused learn is in the file")
	}
}

// TestForgetExactOverHTTP: DELETE /v1/classes/X without data is exact
// when the model's journal holds every sample X learned, as flycl forget
// is (one forget): the answer says so, with the samples subtracted, and
// the model equals one that never learned X (the same classes, counts
// and samples as a model forgetting X with its data).
func TestForgetExactOverHTTP(t *testing.T) {
	var log logBuf
	path := filepath.Join(t.TempDir(), "m.flycl")
	_, hs, _ := testServer(t, func(c *Config) {
		c.Backend.(*FileBackend).Close()
		c.Backend = openJournalled(t, path, 16, &log)
	})
	r := rand.New(rand.NewPCG(30, 31))
	x, y := clusters(r, []int{0, 1, 2}, 30)
	learnFeatures(t, hs.URL, "", x, y)
	var fr ForgetResponse
	if code, _, b := do(t, "DELETE", hs.URL+"/v1/classes/"+className(1), "", nil, "", &fr); code != 200 || !fr.Exact || fr.Samples != 10 {
		t.Fatalf("forget from the journal: %d %s", code, b)
	}
	m := savedModel(t, path)
	if m.Model.Samples() != 20 || slices.Contains(m.Model.Classes().Names(), className(1)) {
		t.Fatalf("after an exact forget: %d samples, classes %v", m.Model.Samples(), m.Model.Classes().Names())
	}
}
