package smallfile

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func TestRead(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, n int) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, bytes.Repeat([]byte{'a'}, n), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	const limit = 100
	for _, c := range []struct {
		name string
		path string
		want int   // bytes returned, when no error
		err  error // the error class
		size int64 // TooLargeError.Size
	}{
		{"empty", write("empty", 0), 0, nil, 0},
		{"at the limit", write("at", limit), limit, nil, 0},
		{"one over", write("over", limit+1), 0, ErrTooLarge, limit + 1},
		{"far over", write("far", 10*limit), 0, ErrTooLarge, 10 * limit},
		{"endless device", "/dev/zero", 0, ErrTooLarge, -1},
		{"missing", filepath.Join(dir, "none"), 0, fs.ErrNotExist, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, err := Read(c.path, limit)
			if c.err == nil {
				if err != nil || len(b) != c.want {
					t.Fatalf("Read = %d bytes, %v; want %d bytes", len(b), err, c.want)
				}
				return
			}
			if !errors.Is(err, c.err) {
				t.Fatalf("Read err = %v, want %v", err, c.err)
			}
			if c.err != ErrTooLarge {
				return
			}
			var tl *TooLargeError
			if !errors.As(err, &tl) || tl.Path != c.path || tl.Limit != limit || tl.Size != c.size {
				t.Fatalf("err = %#v, want path %s, limit %d, size %d", err, c.path, limit, c.size)
			}
		})
	}
}

// TestReadDevZeroBounded: /dev/zero at the largest limit the programs use
// costs that limit, not the machine. The bytes Read allocates (the
// runtime's count, TotalAlloc) are at most 4× the limit: io.ReadAll
// grows its buffer geometrically, so the buffers it drops on the way sum
// to less than twice the last one, itself under twice the limit.
func TestReadDevZeroBounded(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := Read("/dev/zero", CALimit)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("err = %v, want ErrTooLarge", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 4*CALimit {
		t.Errorf("reading /dev/zero with limit %d allocated %d bytes", CALimit, got)
	}
}
