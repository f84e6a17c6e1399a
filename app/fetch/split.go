package fetch

import (
	"archive/zip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// Listing describes a split folder: DIR/train/<class>/<file> and
// DIR/test/<class>/<file>.
type Listing struct {
	Files, Train, Test int
	Classes            int // distinct class folders over both splits
	// ListSHA256 is the SHA-256 of the sorted list of the files' paths
	// relative to the folder ("train/<class>/<file>"), one a line, each
	// ending in "\n".
	ListSHA256 string
}

// SplitError is a split folder whose files are not those recorded.
type SplitError struct {
	Dir       string
	Want, Got LockedSplit
	FromLock  bool
}

func (e *SplitError) Error() string {
	return fmt.Sprintf("fetch: %s: %d files with list digest %s, want %d files with %s (recorded in %s at the first conversion); remove the folder to convert the archive again",
		e.Dir, e.Got.Files, e.Got.ListSHA256, e.Want.Files, e.Want.ListSHA256, LockName)
}

func (l *Listing) locked() LockedSplit { return LockedSplit{Files: l.Files, ListSHA256: l.ListSHA256} }

// listing builds a Listing from relative paths.
func listing(paths []string) *Listing {
	sort.Strings(paths)
	h := sha256.New()
	l := &Listing{Files: len(paths)}
	classes := map[string]bool{}
	for _, p := range paths {
		io.WriteString(h, p+"\n")
		parts := strings.Split(p, "/")
		if parts[0] == "train" {
			l.Train++
		} else {
			l.Test++
		}
		classes[parts[1]] = true
	}
	l.Classes = len(classes)
	l.ListSHA256 = hex.EncodeToString(h.Sum(nil))
	return l
}

// ListSplit lists the split folder dir. Hidden files are skipped; any other
// file that is not train/<class>/<file> or test/<class>/<file> is an error.
func ListSplit(dir string) (*Listing, error) {
	var paths []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != dir && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		parts := strings.Split(rel, "/")
		if len(parts) != 3 || parts[0] != "train" && parts[0] != "test" || !d.Type().IsRegular() {
			return fmt.Errorf("%s is not a regular file train/<class>/<file> or test/<class>/<file>", rel)
		}
		paths = append(paths, rel)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("fetch: split %s: %w", dir, err)
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("fetch: split %s: no files", dir)
	}
	return listing(paths), nil
}

// splitEntry maps an archive member to its path in the split folder:
// "PREFIX/train/<class>/<file>" gives "train/<class>/<file>" and the
// prefix. skip is true for directories and for macOS and hidden files.
func splitEntry(name string) (rel, prefix string, skip bool, err error) {
	if strings.HasSuffix(name, "/") {
		return "", "", true, nil
	}
	if name == "" || strings.HasPrefix(name, "/") || strings.ContainsAny(name, "\\\x00") {
		return "", "", false, fmt.Errorf("member %q: not a relative path", name)
	}
	parts := strings.Split(name, "/")
	for _, p := range parts {
		if p == ".." || p == "." || p == "" {
			return "", "", false, fmt.Errorf("member %q: not a clean relative path", name)
		}
		if p == "__MACOSX" || strings.HasPrefix(p, ".") {
			return "", "", true, nil
		}
	}
	n := len(parts)
	if n < 3 || parts[n-3] != "train" && parts[n-3] != "test" {
		return "", "", false, fmt.Errorf("member %q is not [PREFIX/]train/<class>/<file> or test/<class>/<file>", name)
	}
	return path.Join(parts[n-3:]...), path.Join(parts[:n-3]...), false, nil
}

// ConvertSplit extracts the zip archive of a split (members
// [PREFIX/]train/<class>/<file> and [PREFIX/]test/<class>/<file>, one
// PREFIX for all) into the folder out, which must not exist. It extracts
// into out.part first and renames it to out when every member was read and
// its CRC-32 checked, so out is either complete or absent.
func ConvertSplit(ctx context.Context, archive, out string) (*Listing, error) {
	if _, err := os.Lstat(out); err == nil {
		return nil, fmt.Errorf("fetch: %s already exists", out)
	}
	zr, err := zip.OpenReader(archive)
	if err != nil {
		return nil, fmt.Errorf("fetch: %s: %w", archive, err)
	}
	defer zr.Close()
	tmp := out + ".part"
	if err := os.RemoveAll(tmp); err != nil {
		return nil, fmt.Errorf("fetch: %w", err)
	}
	l, err := extractSplit(ctx, &zr.Reader, tmp)
	if err != nil {
		os.RemoveAll(tmp)
		return nil, fmt.Errorf("fetch: %s: %w", archive, err)
	}
	if err := os.Rename(tmp, out); err != nil {
		os.RemoveAll(tmp)
		return nil, fmt.Errorf("fetch: %w", err)
	}
	return l, nil
}

func extractSplit(ctx context.Context, zr *zip.Reader, dir string) (*Listing, error) {
	var paths []string
	seen := map[string]bool{}
	prefix, first := "", true
	made := map[string]bool{}
	for _, zf := range zr.File {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		rel, pre, skip, err := splitEntry(zf.Name)
		if err != nil {
			return nil, err
		}
		if skip || zf.Mode().IsDir() {
			continue
		}
		if !zf.Mode().IsRegular() {
			return nil, fmt.Errorf("member %q is not a regular file", zf.Name)
		}
		if first {
			prefix, first = pre, false
		} else if pre != prefix {
			return nil, fmt.Errorf("member %q is not under %q like the others", zf.Name, prefix)
		}
		if seen[rel] {
			return nil, fmt.Errorf("member %q twice", zf.Name)
		}
		seen[rel] = true
		dst := filepath.Join(dir, filepath.FromSlash(rel))
		if d := filepath.Dir(dst); !made[d] {
			if err := os.MkdirAll(d, 0o755); err != nil {
				return nil, err
			}
			made[d] = true
		}
		if err := extractFile(zf, dst); err != nil {
			return nil, fmt.Errorf("member %q: %w", zf.Name, err)
		}
		paths = append(paths, rel)
	}
	if len(paths) == 0 {
		return nil, errors.New("no train/<class>/<file> or test/<class>/<file> members")
	}
	return listing(paths), nil
}

// extractFile copies one member; zip checks its size and CRC-32 at the end.
func extractFile(zf *zip.File, dst string) error {
	r, err := zf.Open()
	if err != nil {
		return err
	}
	defer r.Close()
	w, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(w, r); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}

// verifySplitFolder: a split folder already in dir is verified against the
// lock (recorded if the lock has none); done is true when nothing else is
// needed.
func (c *Client) verifySplitFolder(a Asset, dir string, res *Result) (done bool, err error) {
	out := filepath.Join(dir, a.Split)
	if _, err := os.Stat(out); err != nil {
		return false, nil
	}
	l, err := ListSplit(out)
	if err != nil {
		return true, err
	}
	if err := c.checkSplit(a, dir, out, l); err != nil {
		return true, err
	}
	res.Split = l
	return true, nil
}

// checkSplit compares a listing with the lock's, or records it.
func (c *Client) checkSplit(a Asset, dir, out string, l *Listing) error {
	lock, err := ReadLock(dir)
	if err != nil {
		return err
	}
	if want, ok := lock.Splits[a.Split]; ok {
		if want != l.locked() {
			return &SplitError{Dir: out, Want: want, Got: l.locked()}
		}
		c.notice(a, "%s: %d files (train %d, test %d, %d classes), file list SHA-256 %s as recorded", out, l.Files, l.Train, l.Test, l.Classes, l.ListSHA256)
		return nil
	}
	err = updateLock(dir, func(lk *Lock) { lk.Splits[a.Split] = l.locked() })
	if err == nil {
		c.notice(a, "%s: %d files (train %d, test %d, %d classes), file list SHA-256 %s recorded in %s",
			out, l.Files, l.Train, l.Test, l.Classes, l.ListSHA256, filepath.Join(dir, LockName))
	}
	return err
}

// split converts a verified split archive into its folder.
func (c *Client) split(ctx context.Context, a Asset, dir string, res *Result) error {
	if a.Split == "" {
		return nil
	}
	out := filepath.Join(dir, a.Split)
	archive := filepath.Join(dir, a.File)
	if zr, err := zip.OpenReader(archive); err == nil {
		var n uint64
		for _, f := range zr.File {
			n += f.UncompressedSize64
		}
		zr.Close()
		if err := c.checkSpace(a, dir, int64(min(n, 1<<62))); err != nil {
			return err
		}
	}
	c.notice(a, "converting %s into %s", archive, out)
	l, err := ConvertSplit(ctx, archive, out)
	if err != nil {
		return err
	}
	if err := c.checkSplit(a, dir, out, l); err != nil {
		os.RemoveAll(out)
		return err
	}
	res.Split = l
	return nil
}
