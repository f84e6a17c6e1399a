package modelfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flycl/flycl"
)

// TestMergeFiles: the files of a whole split merge as MergeStats merges
// their parts; a shard missing is returned merged but incomplete (as
// CheckComplete says); the same part twice is refused naming the files; a
// file that is not statistics is input refused, one that is missing is not.
func TestMergeFiles(t *testing.T) {
	const d = 20
	m, _ := flycl.New(statsCfg, d)
	x, y := statsData(3, 90, d, 3)
	dir := t.TempDir()
	var paths []string
	for i, b := range shardFiles(t, m, x, y, d, 3, "train") {
		p := filepath.Join(dir, "part-"+string(rune('0'+i))+".stats")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	merged, incomplete, err := MergeFiles(paths...)
	if err != nil || incomplete != nil {
		t.Fatalf("whole split: %v, incomplete %v", err, incomplete)
	}
	want, err := MergeStats(decodeAll(t, shardFiles(t, m, x, y, d, 3, "train"))...)
	if err != nil {
		t.Fatal(err)
	}
	if merged.Stats.N != len(y) || !slices.Equal(merged.Stats.G, want.Stats.G) || !slices.Equal(merged.Names, want.Names) {
		t.Errorf("merged %d samples, G equal %v; want MergeStats's", merged.Stats.N, slices.Equal(merged.Stats.G, want.Stats.G))
	}

	merged, incomplete, err = MergeFiles(paths[0], paths[2])
	if err != nil || merged == nil {
		t.Fatalf("two of three shards: %v", err)
	}
	if want := CheckComplete(merged.Shards); incomplete == nil || want == nil || incomplete.Error() != want.Error() {
		t.Errorf("two of three shards: incomplete %v, CheckComplete %v", incomplete, want)
	}

	_, _, err = MergeFiles(paths[0], paths[0])
	if err == nil || !strings.Contains(err.Error(), "part 2 = "+paths[0]) {
		t.Errorf("the same part twice: %v, want an error naming the files", err)
	}

	junk := filepath.Join(dir, "junk.stats")
	if err := os.WriteFile(junk, []byte("not statistics"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err = MergeFiles(paths[0], junk); !flycl.IsInput(err) {
		t.Errorf("a file that is not statistics: %v, want input refused", err)
	}
	_, _, err = MergeFiles(paths[0], filepath.Join(dir, "none.stats"))
	if !errors.Is(err, fs.ErrNotExist) || flycl.IsInput(err) {
		t.Errorf("a missing file: %v, want not-exist and not input", err)
	}
}
