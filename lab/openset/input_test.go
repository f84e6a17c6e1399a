package openset

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flycl/flycl/format/features"
)

func TestParseSetSpec(t *testing.T) {
	for _, c := range []struct{ in, name, dir string }{
		{"vit=out/vit", "vit", "out/vit"},
		{"a=b=c", "a", "b=c"},
		{"vit", "", ""},
		{"=dir", "", ""},
		{"vit=", "", ""},
		{"", "", ""},
	} {
		name, dir, err := ParseSetSpec(c.in)
		if (err != nil) != (c.name == "") || name != c.name || dir != c.dir {
			t.Errorf("ParseSetSpec(%q) = %q, %q, %v; want %q, %q", c.in, name, dir, err, c.name, c.dir)
		}
		if err != nil && !strings.Contains(err.Error(), `"`+c.in+`"`) {
			t.Errorf("error %v does not quote %q", err, c.in)
		}
	}
}

// writeSet writes a feature set with perClass samples of each of 3
// classes, labels interleaved, and returns it.
func writeSet(t *testing.T, path string, perClass int) *features.Set {
	t.Helper()
	s := &features.Set{D: 2, ClassNames: []string{"a", "b", "c"}}
	for i := 0; i < 3*perClass; i++ {
		s.X = append(s.X, float32(i), float32(-i))
		s.Labels = append(s.Labels, i%3)
		s.N++
	}
	if err := features.Save(path, s); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestLoadSets: the sets read are the files' samples, cut to the first n
// per class (counted here by brute force); a bad spec or a missing folder
// is an error naming it.
func TestLoadSets(t *testing.T) {
	dir := t.TempDir()
	writeSet(t, filepath.Join(dir, features.TrainFile), 5)
	writeSet(t, filepath.Join(dir, features.TestFile), 4)
	for _, c := range []struct{ trainPer, testPer, wantTrain, wantTest int }{
		{0, 0, 15, 12}, {2, 0, 6, 12}, {0, 1, 15, 3}, {9, 9, 15, 12},
	} {
		sets, err := LoadSets([]string{"x=" + dir, "y=" + dir}, c.trainPer, c.testPer)
		if err != nil {
			t.Fatal(err)
		}
		if len(sets) != 2 || sets[0].Name != "x" || sets[1].Name != "y" {
			t.Fatalf("sets %v", sets)
		}
		tr, te := sets[0].Train, sets[0].Test
		if tr.N != c.wantTrain || te.N != c.wantTest {
			t.Fatalf("per class %d/%d: %d train, %d test; want %d, %d", c.trainPer, c.testPer, tr.N, te.N, c.wantTrain, c.wantTest)
		}
		// the first samples of each class, in file order: x[0] is the
		// sample's index in the file (writeSet), labels interleaved
		for i := 0; i < tr.N; i++ {
			if int(tr.X[2*i]) != i || tr.Labels[i] != i%3 {
				t.Fatalf("train sample %d is file sample %g (label %d)", i, tr.X[2*i], tr.Labels[i])
			}
		}
	}
	if _, err := LoadSets([]string{"x=" + dir, "bad"}, 0, 0); err == nil || !strings.Contains(err.Error(), `"bad"`) {
		t.Fatalf("bad spec: %v", err)
	}
	missing := filepath.Join(dir, "none")
	if _, err := LoadSets([]string{"x=" + missing}, 0, 0); err == nil || !strings.Contains(err.Error(), missing) {
		t.Fatalf("missing folder: %v", err)
	}
	fs, err := LoadFewShotSets([]string{"z=" + dir}, map[string]string{"a": "g"})
	if err != nil || len(fs) != 1 || fs[0].Name != "z" || fs[0].Photos.N != 15 || fs[0].Other.N != 12 || fs[0].Groups["a"] != "g" {
		t.Fatalf("LoadFewShotSets: %+v, %v", fs, err)
	}
}

// TestLoadGroups: a file's lines are read; no path gives the built-in
// grouping, one entry per non-comment line of the file that ships; a
// missing or bad file is an error naming it.
func TestLoadGroups(t *testing.T) {
	p := filepath.Join(t.TempDir(), "groups.tsv")
	if err := os.WriteFile(p, []byte("# c\nn01\tdog\nn02\tbird\textra\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	g, err := LoadGroups(p)
	if err != nil || len(g) != 2 || g["n01"] != "dog" || g["n02"] != "bird" {
		t.Fatalf("LoadGroups(file) = %v, %v", g, err)
	}
	g, err = LoadGroups("")
	if err != nil {
		t.Fatal(err)
	}
	lines := 0
	for _, l := range strings.Split(ImageNet500Groups, "\n") {
		if l != "" && !strings.HasPrefix(l, "#") {
			lines++
		}
	}
	if len(g) != lines || lines == 0 {
		t.Fatalf("built-in grouping: %d entries, the file has %d lines", len(g), lines)
	}
	if _, err := LoadGroups(p + ".none"); err == nil || !strings.Contains(err.Error(), "--groups") {
		t.Fatalf("missing file: %v", err)
	}
	if err := os.WriteFile(p, []byte("no tab here\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadGroups(p); err == nil || !strings.Contains(err.Error(), p) {
		t.Fatalf("bad file: %v", err)
	}
}
