package modelfile

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/flycl/flycl/internal/onejson"
)

// A model file has one writer at a time, as an SQLite database does: a
// writer (a learn, forget or merge, for its read-modify-write; a server,
// for its lifetime) holds an exclusive lock on PATH.lock beside the model
// file before it reads the model it will change, and releases it after
// its last save. Readers (predict, info, classes) take no lock: every save
// replaces the file atomically, so a reader sees one whole version or the
// next. The lock is an advisory operating-system lock (flock on Unix,
// LockFileEx on Windows): it is released when its holder exits or dies,
// so a crashed writer never leaves the model locked. The lock file holds
// the holder's PID and command, for the message a second writer gets; a
// writer removes it when it releases the lock (one killed leaves it, and
// the next writer takes it over). It is never part of the model.

// ErrLocked is matched (errors.Is) by the *LockedError that Lock returns
// when another writer holds the model file.
var ErrLocked = errors.New("modelfile: locked by another writer")

// Holder describes the writer holding a model file's lock, as it wrote
// itself into the lock file.
type Holder struct {
	PID     int       `json:"pid"`
	Command string    `json:"command"`
	Host    string    `json:"host,omitempty"`
	Since   time.Time `json:"since"`
}

func (h *Holder) String() string {
	s := fmt.Sprintf("PID %d", h.PID)
	if h.Host != "" {
		s += " on " + h.Host
	}
	if h.Command != "" {
		s += fmt.Sprintf(" (%s)", h.Command)
	}
	if !h.Since.IsZero() {
		s += " since " + h.Since.UTC().Format(time.RFC3339)
	}
	return s
}

// LockedError reports a model file locked by another writer. Holder is
// nil when the holder could not be read (it was still writing itself in).
type LockedError struct {
	Path   string        // the model file
	Holder *Holder       // who holds it, when known
	Waited time.Duration // how long Lock waited (0: it did not)
}

func (e *LockedError) Error() string {
	who := "another writer"
	if e.Holder != nil {
		who = e.Holder.String()
	}
	s := fmt.Sprintf("modelfile: %s is locked by %s (a model file has one writer at a time: stop that writer or change the model through it", e.Path, who)
	if e.Waited > 0 {
		return s + fmt.Sprintf("; waited %s)", e.Waited.Round(time.Millisecond))
	}
	return s + ", or wait for it with --wait)"
}

// Is reports whether target is ErrLocked.
func (e *LockedError) Is(target error) bool { return target == ErrLocked }

// LockOptions say how to take a model file's lock.
type LockOptions struct {
	// Wait is how long to wait for another writer to release the lock;
	// 0 fails at once with a *LockedError.
	Wait time.Duration `flag:"wait"`
	// Command describes the writer to a second writer (e.g. "flycl serve
	// --model cam.flycl"); the PID, host and time are added.
	Command string
}

// ErrLockLost is matched (errors.Is) by the *LockLostError of a writer
// whose lock file was removed or replaced while it held it: another writer
// may have taken the model file since, so this one must stop changing it.
var ErrLockLost = errors.New("modelfile: the lock file was removed or replaced")

// LockLostError reports a lock whose file no longer names the locked
// inode (Lock.Check).
type LockLostError struct {
	Path     string // the model file
	LockPath string // its lock file
	What     string // "removed" or "replaced"
}

func (e *LockLostError) Error() string {
	return fmt.Sprintf("modelfile: the lock file %s of %s was %s by another program while this writer held it, so another writer may have taken the model file since: this writer stops changing it (nothing more is saved or acknowledged); make sure no other writer runs on %s, then start this one again",
		e.LockPath, e.Path, e.What, e.Path)
}

// Is reports whether target is ErrLockLost.
func (e *LockLostError) Is(target error) bool { return target == ErrLockLost }

// Lock is a held model-file lock.
type Lock struct {
	path string // the model file
	lp   string // the lock file
	h    lockHandle
}

// LockPath returns the lock file of the model file at path: PATH.lock
// beside the file a symbolic link at path points to (whether or not that
// file exists yet), as atomic saves write through the link to it.
func LockPath(path string) string {
	for hops := 0; hops < 40; hops++ {
		fi, err := os.Lstat(path)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			break
		}
		dest, err := os.Readlink(path)
		if err != nil {
			break
		}
		if !filepath.IsAbs(dest) {
			dest = filepath.Join(filepath.Dir(path), dest)
		}
		path = dest
	}
	return path + ".lock"
}

// TakeLock takes the single-writer lock of the model file at path (which
// need not exist yet), waiting up to opt.Wait for another writer, or
// until ctx is done. It fails with a *LockedError (errors.Is ErrLocked)
// naming the holder when the lock stays taken. The caller must Unlock it.
//
// On Unix the lock file is opened without following a symbolic link (a
// lock file that is a link is refused, and its target never written), and
// once the lock is taken TakeLock checks that the lock file's path still
// names the locked file (another writer may have removed or replaced it
// in between: then it tries again). A holder checks it again before every
// change it acknowledges (Check), and removes the lock file when it
// releases the lock, so a finished writer leaves none behind.
func TakeLock(ctx context.Context, path string, opt LockOptions) (*Lock, error) {
	lp := LockPath(path)
	if _, err := os.Stat(filepath.Dir(lp)); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("modelfile: the folder %s of %s does not exist: %w", filepath.Dir(lp), path, err)
	}
	start := time.Now()
	var deadline time.Time
	if opt.Wait > 0 {
		deadline = start.Add(opt.Wait)
	}
	retries := 0 // lock files found released while their holder was read
	for {
		h, ok, err := tryLock(lp)
		if err != nil {
			return nil, fmt.Errorf("modelfile: lock %s (lock file %s): %w", path, lp, err)
		}
		if ok {
			// Tell a second writer who holds the lock (best effort: the
			// lock holds whether or not this is written).
			host, _ := os.Hostname()
			hd := Holder{PID: os.Getpid(), Command: opt.Command, Host: host, Since: time.Now().UTC().Truncate(time.Second)}
			if b, err := json.Marshal(hd); err == nil {
				h.writeHolder(append(b, '\n'))
			}
			return &Lock{path: path, lp: lp, h: h}, nil
		}
		if opt.Wait > 0 && time.Now().Before(deadline) {
			select {
			case <-ctx.Done():
				return nil, fmt.Errorf("modelfile: lock %s: %w", path, ctx.Err())
			case <-time.After(20 * time.Millisecond):
			}
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("modelfile: lock %s: %w", path, err)
		}
		e := &LockedError{Path: path, Holder: readHolder(lp)}
		// The holder writes itself in just after it takes the lock: give
		// it a moment when this one came in between. A lock file gone
		// meanwhile was released (its holder removes it): try again.
		gone := false
		for try := 0; e.Holder == nil && try < 20; try++ {
			if _, err := os.Lstat(lp); errors.Is(err, fs.ErrNotExist) {
				gone = true
				break
			}
			time.Sleep(10 * time.Millisecond)
			e.Holder = readHolder(lp)
		}
		if gone && retries < 100 {
			retries++
			continue
		}
		if opt.Wait > 0 {
			e.Waited = time.Since(start)
		}
		return nil, e
	}
}

// Path returns the model file the lock is for.
func (l *Lock) Path() string { return l.path }

// Check reports whether the lock still holds: nil, or a *LockLostError
// (errors.Is ErrLockLost) when the lock file's path no longer names the
// locked file (removed, or replaced by another file): a second writer
// may then hold a lock of its own. A writer calls it before every change
// it saves and again before it acknowledges it, and stops changing the
// model once it fails.
func (l *Lock) Check() error {
	if l == nil || l.h == nil {
		return fmt.Errorf("modelfile: the lock of %s is not held", l.pathOrNone())
	}
	if what := l.h.check(l.lp); what != "" {
		return &LockLostError{Path: l.path, LockPath: l.lp, What: what}
	}
	return nil
}

func (l *Lock) pathOrNone() string {
	if l == nil {
		return "the model file"
	}
	return l.path
}

// Unlock releases the lock, removing the lock file first when it is
// still this lock's (a writer waiting on the removed file then finds it
// gone, and takes a new one). It is safe to call more than once.
func (l *Lock) Unlock() error {
	if l == nil || l.h == nil {
		return nil
	}
	err := l.h.release(l.lp)
	l.h = nil
	if err != nil {
		return fmt.Errorf("modelfile: unlock %s: %w", l.path, err)
	}
	return nil
}

// maxHolder bounds what readHolder reads of a lock file (outside bytes).
const maxHolder = 4096

// readHolder reads the holder a lock file names, or nil.
func readHolder(lockPath string) *Holder {
	f, err := os.Open(lockPath)
	if err != nil {
		return nil
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxHolder))
	if err != nil {
		return nil
	}
	h, err := ParseHolder(b)
	if err != nil {
		return nil
	}
	return h
}

// ParseHolder parses the contents of a lock file (the JSON a holder
// writes). It refuses anything else, so a foreign or half-written file
// names no holder.
func ParseHolder(b []byte) (*Holder, error) {
	if len(b) > maxHolder {
		return nil, fmt.Errorf("modelfile: lock file of %d bytes, more than %d", len(b), maxHolder)
	}
	var h Holder
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := onejson.Decode(dec, &h); err != nil {
		return nil, fmt.Errorf("modelfile: lock file: %w", err)
	}
	if h.PID <= 0 {
		return nil, fmt.Errorf("modelfile: lock file: pid %d", h.PID)
	}
	// a command is shown to users: keep it one printable line
	h.Command = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, h.Command)
	if len(h.Command) > 512 {
		h.Command = h.Command[:512] + "..."
	}
	return &h, nil
}

// Ident identifies one state of a file on disk: which file (device and
// inode, through os.SameFile), its size and its modification time. A
// writer that holds a model's lock records the Ident after each load and
// save, and compares it before it saves again: a file replaced or
// rewritten behind it (by a copy, a restore from backup, a writer that
// ignores the lock) then differs.
type Ident struct {
	fi fs.FileInfo
}

// IdentOf stats path.
func IdentOf(path string) (Ident, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return Ident{}, err
	}
	return Ident{fi: fi}, nil
}

// Same reports whether o is the same file, unchanged, as i.
func (i Ident) Same(o Ident) bool {
	if i.fi == nil || o.fi == nil {
		return i.fi == nil && o.fi == nil
	}
	return os.SameFile(i.fi, o.fi) && i.fi.Size() == o.fi.Size() && i.fi.ModTime().Equal(o.fi.ModTime())
}

// IsZero reports whether i names no file (the file did not exist).
func (i Ident) IsZero() bool { return i.fi == nil }
