package modelfile

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTakeLock: a second writer fails at once with a *LockedError that
// names the first (its PID and command); with a wait it gets the lock as
// soon as the first releases it, or fails after the wait; a cancelled
// context ends the wait; a symbolic link shares its target's lock.
func TestTakeLock(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.flycl")
	a, err := TakeLock(context.Background(), path, LockOptions{Command: "writer A"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = TakeLock(context.Background(), path, LockOptions{Command: "writer B"})
	var le *LockedError
	if !errors.As(err, &le) || !errors.Is(err, ErrLocked) {
		t.Fatalf("second writer: %v", err)
	}
	if le.Holder == nil || le.Holder.PID != os.Getpid() || le.Holder.Command != "writer A" || !strings.Contains(err.Error(), "writer A") {
		t.Fatalf("holder %+v in %q", le.Holder, err)
	}
	// through a symbolic link: the same lock
	link := filepath.Join(dir, "link.flycl")
	if err := os.Symlink(path, link); err != nil {
		t.Fatal(err)
	}
	if _, err := TakeLock(context.Background(), link, LockOptions{}); !errors.Is(err, ErrLocked) {
		t.Fatalf("through a link: %v", err)
	}
	// a wait that runs out says how long it waited
	start := time.Now()
	_, err = TakeLock(context.Background(), path, LockOptions{Wait: 50 * time.Millisecond})
	if !errors.As(err, &le) || le.Waited < 50*time.Millisecond || time.Since(start) < 50*time.Millisecond {
		t.Fatalf("wait 50ms: %v", err)
	}
	// a cancelled context ends a long wait with its error
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(30 * time.Millisecond); cancel() }()
	if _, err := TakeLock(ctx, path, LockOptions{Wait: time.Hour}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled wait: %v", err)
	}
	// a waiter gets the lock once it is released
	got := make(chan error, 1)
	go func() {
		b, err := TakeLock(context.Background(), path, LockOptions{Wait: time.Minute})
		if err == nil {
			b.Unlock()
		}
		got <- err
	}()
	time.Sleep(50 * time.Millisecond)
	if err := a.Unlock(); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatalf("waiter after release: %v", err)
	}
	if err := a.Unlock(); err != nil {
		t.Fatalf("second Unlock: %v", err)
	}
}

// TestIdent: an Ident tells the same unchanged file from one rewritten in
// place, replaced by a rename, or removed.
func TestIdent(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	write := func(s string) {
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("one")
	id := must(IdentOf(path))
	if !id.Same(must(IdentOf(path))) {
		t.Fatal("unchanged file differs")
	}
	write("three") // in place, another size
	if id.Same(must(IdentOf(path))) {
		t.Fatal("rewritten file is the same")
	}
	id = must(IdentOf(path))
	other := filepath.Join(dir, "g")
	if err := os.WriteFile(other, []byte("three"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(other, path); err != nil {
		t.Fatal(err)
	}
	if id.Same(must(IdentOf(path))) {
		t.Fatal("renamed-over file is the same")
	}
	os.Remove(path)
	if _, err := IdentOf(path); err == nil {
		t.Fatal("removed file has an ident")
	}
	if !(Ident{}).Same(Ident{}) || id.Same(Ident{}) {
		t.Fatal("zero idents")
	}
}

func must(id Ident, err error) Ident {
	if err != nil {
		panic(err)
	}
	return id
}

// FuzzParseHolder: a lock file is outside bytes (any program may write
// it): parsing never panics, and a holder it returns has a positive PID
// and a one-line command of bounded length.
func FuzzParseHolder(f *testing.F) {
	f.Add([]byte(`{"pid":12,"command":"flycl serve on 127.0.0.1:8080","host":"cam","since":"2026-11-26T21:00:00Z"}` + "\n"))
	f.Add([]byte(`{"pid":-1}`))
	f.Add([]byte(`{"pid":1,"command":"a\nb\u0000"}`))
	f.Add([]byte(`{"pid":1,"extra":true}`))
	f.Add([]byte(""))
	f.Add([]byte(`{"pid":1e99}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := ParseHolder(b)
		if err != nil {
			return
		}
		if h.PID <= 0 || strings.ContainsAny(h.Command, "\n\r\x00") || len(h.Command) > 520 {
			t.Fatalf("holder %+v", h)
		}
		_ = h.String()
	})
}
