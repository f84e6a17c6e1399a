//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package modelfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// lockHandle is a locked lock file (flock on an open descriptor).
type lockHandle = *unixLock

type unixLock struct{ f *os.File }

// tryLock opens the lock file at lp without following a symbolic link
// and takes an exclusive flock on it without waiting. ok is false when
// another writer holds it. It retries when the path was removed or
// replaced between the open and the flock (then the lock taken is on a
// file nobody else will open).
func tryLock(lp string) (*unixLock, bool, error) {
	for tries := 0; ; tries++ {
		fd, err := syscall.Open(lp, syscall.O_CREAT|syscall.O_RDWR|syscall.O_NOFOLLOW|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0o644)
		if err != nil {
			if fi, lerr := os.Lstat(lp); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
				return nil, false, fmt.Errorf("the lock file is a symbolic link, which a writer never follows (its target would be overwritten): remove %s and try again", lp)
			}
			return nil, false, &fs.PathError{Op: "open", Path: lp, Err: err}
		}
		f := os.NewFile(uintptr(fd), lp)
		fi, err := f.Stat()
		if err != nil {
			f.Close()
			return nil, false, err
		}
		if !fi.Mode().IsRegular() {
			f.Close()
			return nil, false, fmt.Errorf("the lock file is not a regular file (%s): remove %s and try again", fi.Mode().Type(), lp)
		}
		if err := syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			f.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) || errors.Is(err, syscall.EAGAIN) {
				return nil, false, nil
			}
			return nil, false, &fs.PathError{Op: "flock", Path: lp, Err: err}
		}
		h := &unixLock{f: f}
		if h.check(lp) == "" {
			return h, true, nil
		}
		// removed or replaced between the open and the flock (its holder
		// released it, removing it): try the path again
		f.Close()
		if tries >= 100 {
			return nil, false, fmt.Errorf("the lock file kept being replaced while it was taken")
		}
	}
}

// check returns "" while lp names the locked file, else what happened to
// it ("removed", "replaced").
func (h *unixLock) check(lp string) string {
	mine, err := h.f.Stat()
	if err != nil {
		return "replaced"
	}
	cur, err := os.Lstat(lp)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "removed"
	case err != nil || !os.SameFile(mine, cur):
		return "replaced"
	}
	return ""
}

// writeHolder writes the holder into the locked file itself (never by
// its path, which another program may have changed).
func (h *unixLock) writeHolder(b []byte) {
	if h.f.Truncate(0) == nil {
		h.f.WriteAt(b, 0)
	}
}

// release removes the lock file while it is still this lock's, then
// releases the lock.
func (h *unixLock) release(lp string) error {
	if h.check(lp) == "" {
		os.Remove(lp)
	}
	err := syscall.Flock(int(h.f.Fd()), syscall.LOCK_UN)
	if cerr := h.f.Close(); err == nil {
		err = cerr
	}
	return err
}
