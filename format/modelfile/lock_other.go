//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package modelfile

import (
	"os"

	"github.com/gofrs/flock"
)

// lockHandle is a held lock (gofrs/flock: LockFileEx on Windows). These
// systems get no check that the path still names the locked file: a
// file that is open cannot be removed or replaced on Windows.
type lockHandle = *otherLock

type otherLock struct{ fl *flock.Flock }

func tryLock(lp string) (*otherLock, bool, error) {
	fl := flock.New(lp, flock.SetFlag(os.O_CREATE|os.O_RDWR), flock.SetPermissions(0o644))
	ok, err := fl.TryLock()
	if err != nil || !ok {
		fl.Close()
		return nil, false, err
	}
	return &otherLock{fl: fl}, true, nil
}

func (h *otherLock) check(string) string { return "" }

func (h *otherLock) writeHolder(b []byte) {
	if f, err := os.OpenFile(h.fl.Path(), os.O_WRONLY|os.O_TRUNC, 0); err == nil {
		f.Write(b)
		f.Close()
	}
}

func (h *otherLock) release(string) error {
	err := h.fl.Unlock()
	h.fl.Close()
	return err
}
