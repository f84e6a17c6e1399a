//go:build linux || darwin || freebsd || openbsd || netbsd || dragonfly

package atomicfile

import (
	"os"
	"syscall"
)

// lock takes an exclusive advisory lock on f (released when f is closed,
// or when the process dies).
func lock(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) }

// tryLock reports whether f could be locked (no live writer holds it).
func tryLock(f *os.File) bool { return lock(f) == nil }
