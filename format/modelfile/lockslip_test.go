//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package modelfile

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLockSlip: a lock file removed (or replaced) under its holder lets a
// second writer take a lock of its own (flock cannot know); the first
// holder's Check must then fail, so it acknowledges nothing more, while
// the second's passes. Without the check both would go on saving.
func TestLockSlip(t *testing.T) {
	for _, how := range []string{"removed", "replaced"} {
		t.Run(how, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "m.flycl")
			a, err := TakeLock(context.Background(), path, LockOptions{Command: "writer A"})
			if err != nil {
				t.Fatal(err)
			}
			defer a.Unlock()
			if err := a.Check(); err != nil {
				t.Fatalf("fresh lock: %v", err)
			}
			lp := LockPath(path)
			switch how {
			case "removed":
				if err := os.Remove(lp); err != nil {
					t.Fatal(err)
				}
			case "replaced":
				tmp := filepath.Join(dir, "other")
				if err := os.WriteFile(tmp, []byte("x"), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.Rename(tmp, lp); err != nil {
					t.Fatal(err)
				}
			}
			b, err := TakeLock(context.Background(), path, LockOptions{Command: "writer B"})
			if err != nil {
				t.Fatalf("second writer after the lock file was %s: %v", how, err)
			}
			defer b.Unlock()
			err = a.Check()
			var le *LockLostError
			if !errors.Is(err, ErrLockLost) || !errors.As(err, &le) || le.What == "" || !strings.Contains(err.Error(), "stops changing it") {
				t.Fatalf("first writer's check after its lock file was %s: %v", how, err)
			}
			if err := b.Check(); err != nil {
				t.Fatalf("second writer's check: %v", err)
			}
			// the first writer's release leaves the second's lock file alone
			if err := a.Unlock(); err != nil {
				t.Fatal(err)
			}
			if err := b.Check(); err != nil {
				t.Fatalf("second writer's check after the first released: %v", err)
			}
			if _, err := TakeLock(context.Background(), path, LockOptions{}); !errors.Is(err, ErrLocked) {
				t.Fatalf("third writer while the second holds: %v", err)
			}
		})
	}
}

// TestLockSymlink: a lock file that is a symbolic link is refused (with
// a message saying to remove it) and its target is never written.
func TestLockSymlink(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.flycl")
	target := filepath.Join(dir, "precious")
	if err := os.WriteFile(target, []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, LockPath(path)); err != nil {
		t.Fatal(err)
	}
	l, err := TakeLock(context.Background(), path, LockOptions{Command: "writer"})
	if err == nil {
		l.Unlock()
		t.Fatal("a symbolic link lock file was followed")
	}
	if !strings.Contains(err.Error(), "symbolic link") || !strings.Contains(err.Error(), "remove") {
		t.Fatalf("error %v", err)
	}
	if b, _ := os.ReadFile(target); string(b) != "keep me" {
		t.Fatalf("the link's target was written: %q", b)
	}
}

// TestLockLeavesNoFile: a released lock leaves no lock file; a lock in a
// folder that does not exist says so.
func TestLockLeavesNoFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.flycl")
	l, err := TakeLock(context.Background(), path, LockOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(LockPath(path)); err != nil {
		t.Fatalf("held lock has no file: %v", err)
	}
	if err := l.Unlock(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(LockPath(path)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("released lock left its file: %v", err)
	}
	_, err = TakeLock(context.Background(), filepath.Join(dir, "nope", "m.flycl"), LockOptions{})
	if err == nil || !strings.Contains(err.Error(), "does not exist") || !strings.Contains(err.Error(), "folder") {
		t.Fatalf("missing folder: %v", err)
	}
}
