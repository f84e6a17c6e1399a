package report

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/flycl/flycl/lab/experiment"
)

// TestResultFiles: merging the files of two halves of a result gives the
// whole's summary; comparing files names each column by the file's folder
// and lays out what Compare lays out for the results themselves.
func TestResultFiles(t *testing.T) {
	dir := t.TempDir()
	r := result()
	a, b := *r, *r
	a.Runs, b.Runs = r.Runs[:1], r.Runs[1:]
	var paths []string
	for i, part := range []*experiment.Result{&a, &b} {
		sub := filepath.Join(dir, []string{"seedA", "seedB"}[i])
		if _, err := WriteAll(sub, part); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, filepath.Join(sub, "result.json"))
	}
	m, err := MergeFiles(paths...)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := Summarize(m)[0], Summarize(r)[0]; got.Seeds != 2 || got.Average != want.Average || got.BWT != want.BWT {
		t.Errorf("merged summary %+v, want %+v", got, want)
	}
	if _, err := MergeFiles(paths[0], paths[0]); err == nil {
		t.Error("the same file twice: no error")
	}
	var got, want bytes.Buffer
	if err := CompareFiles(&got, paths...); err != nil {
		t.Fatal(err)
	}
	if err := Compare(&want, []string{"seedA", "seedB"}, [][]Summary{Summarize(&a), Summarize(&b)}); err != nil {
		t.Fatal(err)
	}
	if got.String() != want.String() {
		t.Errorf("got\n%s\nwant\n%s", got.String(), want.String())
	}
	if err := CompareFiles(&got, filepath.Join(dir, "none.json")); err == nil {
		t.Error("a missing file: no error")
	}
}
