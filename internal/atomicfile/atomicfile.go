package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// File is a file being written atomically.
type File struct {
	*os.File
	path string // the target (symbolic links resolved)
	done bool
}

// Create starts writing path.
func Create(path string) (*File, error) {
	target, mode, exists, err := resolve(path)
	if err != nil {
		return nil, err
	}
	RemoveStale(target)
	dir, base := filepath.Split(target)
	if dir == "" {
		dir = "."
	}
	for try := 0; ; try++ {
		name := filepath.Join(dir, "."+base+".tmp-"+strconv.FormatUint(rand.Uint64()%1e12, 10))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if errors.Is(err, fs.ErrExist) && try < 100 {
			continue
		}
		if errors.Is(err, fs.ErrNotExist) {
			// name is the temporary file's: the user's is the folder
			return nil, fmt.Errorf("create %s: the folder %s does not exist: %w", path, filepath.Clean(dir), fs.ErrNotExist)
		}
		if err != nil {
			return nil, fmt.Errorf("create %s: %w", path, err)
		}
		if err := lock(f); err != nil {
			f.Close()
			os.Remove(name)
			return nil, fmt.Errorf("create %s: lock %s: %w", path, name, err)
		}
		// A concurrent RemoveStale may have taken the new file for a stale
		// one between its creation and the lock: then start again.
		if !sameFile(f, name) {
			f.Close()
			if try < 100 {
				continue
			}
			return nil, fmt.Errorf("create %s: temporary file %s removed while being created", path, name)
		}
		if exists {
			if err := f.Chmod(mode); err != nil {
				f.Close()
				os.Remove(name)
				return nil, fmt.Errorf("create %s: %w", path, err)
			}
		}
		return &File{File: f, path: target}, nil
	}
}

// WriteFile writes path atomically with the bytes fill writes: it
// creates the temporary file, calls fill with it and commits it, or, when
// fill fails, removes the temporary and leaves path untouched. An error
// from fill is returned wrapped as "write PATH: ...".
func WriteFile(path string, fill func(io.Writer) error) error {
	f, err := Create(path)
	if err != nil {
		return err
	}
	if err := fill(f); err != nil {
		f.Abort()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Commit()
}

// resolve follows symbolic links and checks that the target is a regular
// file or absent; it returns the target, its mode and whether it exists.
func resolve(path string) (string, fs.FileMode, bool, error) {
	target := path
	for hops := 0; ; hops++ {
		fi, err := os.Lstat(target)
		if errors.Is(err, fs.ErrNotExist) {
			if target != path {
				return "", 0, false, fmt.Errorf("write %s: symbolic link to %s, which does not exist", path, target)
			}
			return target, 0, false, nil
		}
		if err != nil {
			return "", 0, false, fmt.Errorf("write %s: %w", path, err)
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			if hops >= 40 {
				return "", 0, false, fmt.Errorf("write %s: too many levels of symbolic links", path)
			}
			dest, err := os.Readlink(target)
			if err != nil {
				return "", 0, false, fmt.Errorf("write %s: %w", path, err)
			}
			if !filepath.IsAbs(dest) {
				dest = filepath.Join(filepath.Dir(target), dest)
			}
			target = dest
			continue
		}
		if !fi.Mode().IsRegular() {
			what := "not a regular file"
			switch {
			case fi.IsDir():
				what = "a directory"
			case fi.Mode()&fs.ModeDevice != 0:
				what = "a device"
			case fi.Mode()&fs.ModeNamedPipe != 0:
				what = "a named pipe"
			case fi.Mode()&fs.ModeSocket != 0:
				what = "a socket"
			}
			if target != path {
				return "", 0, false, fmt.Errorf("write %s: refusing to replace %s, which is %s", path, target, what)
			}
			return "", 0, false, fmt.Errorf("write %s: refusing to replace it: it is %s", path, what)
		}
		return target, fi.Mode().Perm(), true, nil
	}
}

// isTemp reports whether name is a temporary file of target base.
func isTemp(name, base string) bool {
	rest, ok := strings.CutPrefix(name, "."+base+".tmp-")
	if !ok || rest == "" {
		return false
	}
	for _, c := range rest {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// RemoveStale removes the temporary files of target left by writers that
// died (regular files named like ours that no live writer holds locked).
// It returns how many it removed. Create calls it.
func RemoveStale(target string) int {
	dir, base := filepath.Split(target)
	if dir == "" {
		dir = "."
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	removed := 0
	for _, e := range ents {
		if !e.Type().IsRegular() || !isTemp(e.Name(), base) {
			continue
		}
		name := filepath.Join(dir, e.Name())
		f, err := os.Open(name)
		if err != nil {
			continue
		}
		if tryLock(f) && sameFile(f, name) {
			if os.Remove(name) == nil {
				removed++
			}
		}
		f.Close()
	}
	return removed
}

// sameFile reports whether the open file f is still the file at name.
func sameFile(f *os.File, name string) bool {
	a, err1 := f.Stat()
	b, err2 := os.Lstat(name)
	return err1 == nil && err2 == nil && os.SameFile(a, b)
}

// Commit syncs the data, renames it over the target and syncs the directory.
func (f *File) Commit() error {
	if f.done {
		return fmt.Errorf("write %s: already committed or aborted", f.path)
	}
	f.done = true
	tmp := f.File.Name()
	if err := f.File.Sync(); err != nil {
		f.File.Close()
		os.Remove(tmp)
		return fmt.Errorf("write %s: sync: %w", f.path, err)
	}
	// Rename while holding the lock, so no RemoveStale can take the file.
	if err := os.Rename(tmp, f.path); err != nil {
		f.File.Close()
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", f.path, err)
	}
	// The contents were synced before the rename and the new file is in
	// place: the write has succeeded. Closing only drops the descriptor
	// and its lock, so a close error is not reported as a failed write
	// (a caller would otherwise undo a save that took effect).
	f.File.Close()
	if d, err := os.Open(filepath.Dir(f.path)); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// Abort removes the temporary file; the target is untouched. It is safe
// to call after Commit (it then does nothing).
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	os.Remove(f.File.Name())
	f.File.Close()
}
