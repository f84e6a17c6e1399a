package fetch

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// makeZip writes members (name → content) into a zip archive.
func makeZip(t testing.TB, members map[string]string) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	names := make([]string, 0, len(members))
	for n := range members {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: n, Method: zip.Store})
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(members[n]))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// splitMembers is a small split archive as the authors' zips lay it out,
// with a prefix folder and macOS litter.
var splitMembers = map[string]string{
	"imagenet-r/train/n01/a.jpg":     "a",
	"imagenet-r/train/n01/b.jpg":     "bb",
	"imagenet-r/train/n02/c.jpg":     "ccc",
	"imagenet-r/test/n01/d.jpg":      "dddd",
	"imagenet-r/test/n02/e.jpg":      "eeeee",
	"imagenet-r/":                    "",
	"__MACOSX/imagenet-r/._a.jpg":    "junk",
	"imagenet-r/train/n01/.DS_Store": "junk",
}

// wantList is the listing computed here from the member names.
func wantList() LockedSplit {
	paths := []string{"test/n01/d.jpg", "test/n02/e.jpg", "train/n01/a.jpg", "train/n01/b.jpg", "train/n02/c.jpg"}
	h := sha256.Sum256([]byte(strings.Join(paths, "\n") + "\n"))
	return LockedSplit{Files: 5, ListSHA256: hex.EncodeToString(h[:])}
}

func TestFetchConvertsSplit(t *testing.T) {
	z := makeZip(t, splitMembers)
	f := fixture{data: z}
	m := sha256.Sum256(z)
	s := newServer(t, serve(f))
	dir := t.TempDir()
	a := Asset{Name: "imagenet-r", File: "imagenet-r.zip", URLs: []string{s.URL + "/z"}, Digest: Digest{"sha256", hex.EncodeToString(m[:])}, Spec: "folder", Split: "imagenet-r"}
	res, err := quick().Fetch(context.Background(), a, dir)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "imagenet-r")
	if res.Path != out || res.Split == nil || res.Split.locked() != wantList() || res.Split.Train != 3 || res.Split.Test != 2 || res.Split.Classes != 2 {
		t.Fatalf("result %+v split %+v, want %+v", res, res.Split, wantList())
	}
	for name, content := range splitMembers {
		rel, ok := strings.CutPrefix(name, "imagenet-r/")
		if !ok || strings.Contains(rel, ".DS_Store") || rel == "" {
			continue
		}
		mustFile(t, filepath.Join(out, rel), []byte(content))
	}
	mustNotExist(t, out+".part", filepath.Join(out, "train", "n01", ".DS_Store"))
	l, err := ReadLock(dir)
	if err != nil || l.Splits["imagenet-r"] != wantList() {
		t.Fatalf("lock %+v, %v", l, err)
	}
	// The folder is there: verified against the lock without the archive.
	os.Remove(filepath.Join(dir, "imagenet-r.zip"))
	if res, err = quick().Fetch(context.Background(), a, dir); err != nil || res.Downloaded || res.Split.locked() != wantList() {
		t.Fatalf("second fetch: %+v, %v", res, err)
	}
	if s.requests() != 1 {
		t.Errorf("%d requests, want 1", s.requests())
	}
	// A file added to the folder: the listing no longer matches.
	os.WriteFile(filepath.Join(out, "train", "n02", "x.jpg"), []byte("x"), 0o644)
	_, err = quick().Fetch(context.Background(), a, dir)
	var se *SplitError
	if !errors.As(err, &se) || se.Want != wantList() || se.Got.Files != 6 {
		t.Fatalf("error %v, want a *SplitError with 6 files", err)
	}
}

func TestConvertSplitRejects(t *testing.T) {
	for _, tc := range []struct {
		name    string
		members map[string]string
		want    string
	}{
		{"escape", map[string]string{"train/a/../../../x.jpg": "x"}, "not a clean relative path"},
		{"absolute", map[string]string{"/train/a/x.jpg": "x"}, "not a relative path"},
		{"mixed prefixes", map[string]string{"a/train/c/x.jpg": "x", "b/test/c/y.jpg": "y"}, "like the others"},
		{"not a split", map[string]string{"images/c/x.jpg": "x"}, "is not [PREFIX/]train"},
		{"empty", map[string]string{"README": ""}, "is not [PREFIX/]train"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			zp := filepath.Join(dir, "s.zip")
			os.WriteFile(zp, makeZip(t, tc.members), 0o644)
			out := filepath.Join(dir, "out")
			_, err := ConvertSplit(context.Background(), zp, out)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one saying %q", err, tc.want)
			}
			mustNotExist(t, out, out+".part", filepath.Join(filepath.Dir(dir), "x.jpg"))
		})
	}
}

func TestConvertSplitChecksCRC(t *testing.T) {
	z := makeZip(t, map[string]string{"train/a/x.jpg": "hello, split"})
	i := bytes.Index(z, []byte("hello, split"))
	z[i] ^= 1 // stored data changed, CRC-32 in the header not
	dir := t.TempDir()
	zp := filepath.Join(dir, "s.zip")
	os.WriteFile(zp, z, 0o644)
	_, err := ConvertSplit(context.Background(), zp, filepath.Join(dir, "out"))
	if !errors.Is(err, zip.ErrChecksum) {
		t.Fatalf("error %v, want zip.ErrChecksum", err)
	}
	mustNotExist(t, filepath.Join(dir, "out"), filepath.Join(dir, "out.part"))
}

// FuzzConvertSplit: a split archive is outside bytes (verified by an MD5
// only). Whatever converts must list as it says, and nothing may be
// written outside the output folder.
func FuzzConvertSplit(f *testing.F) {
	f.Add(makeZip(f, splitMembers))
	f.Add(makeZip(f, map[string]string{"train/a/../../x": "x"}))
	f.Add(makeZip(f, map[string]string{"p/train/a/x.jpg": "x", "q/test/a/y.jpg": "y"}))
	f.Fuzz(func(t *testing.T, b []byte) {
		dir := t.TempDir()
		zp := filepath.Join(dir, "in.zip")
		if err := os.WriteFile(zp, b, 0o644); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, "out")
		l, err := ConvertSplit(context.Background(), zp, out)
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if e.Name() != "in.zip" && (err != nil || e.Name() != "out") {
				t.Fatalf("%s left in the folder (error %v)", e.Name(), err)
			}
		}
		if err != nil {
			return
		}
		back, err := ListSplit(out)
		if err != nil || *back != *l {
			t.Fatalf("converted listing %+v, folder lists %+v (%v)", l, back, err)
		}
	})
}
