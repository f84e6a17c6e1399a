package fetch

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPlanSetting: a plan looks only at the disk: an asset there is
// present, an interrupted download is resumed after its .part's size, and
// a converted split's recorded file count replaces the docs' image count
// in the estimate.
func TestPlanSetting(t *testing.T) {
	dir := t.TempDir()
	wdir, ddir := filepath.Join(dir, "w"), filepath.Join(dir, "d")
	for _, d := range []string{wdir, ddir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	s, err := LookupSetting("vtab-resnet50")
	if err != nil {
		t.Fatal(err)
	}
	b, d, err := s.Assets()
	if err != nil {
		t.Fatal(err)
	}
	p, err := PlanSetting(s, wdir, ddir)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Assets) != 2 || p.Assets[0].Name != b.Name || p.Assets[1].Name != d.Name || p.Assets[0].Dir != wdir || p.Assets[1].Dir != ddir {
		t.Fatalf("assets %+v", p.Assets)
	}
	for _, a := range p.Assets {
		if a.Present || a.Partial != 0 {
			t.Errorf("%s: present %v partial %d in empty folders", a.Name, a.Present, a.Partial)
		}
	}
	if want := DocsMeasured.Estimate(s, 0); p.Estimate != want {
		t.Errorf("estimate %+v, want %+v", p.Estimate, want)
	}
	line, _ := s.Command(wdir, ddir)
	if strings.Join(p.Command, " ") != strings.Join(line, " ") {
		t.Errorf("command %v, want %v", p.Command, line)
	}
	if err := os.WriteFile(b.Path(wdir), []byte("w"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ddir, d.File+".part"), make([]byte, 1234), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteLock(ddir, &Lock{Files: map[string]LockedFile{}, Splits: map[string]LockedSplit{d.Split: {Files: 777, ListSHA256: strings.Repeat("a", 64)}}}); err != nil {
		t.Fatal(err)
	}
	if p, err = PlanSetting(s, wdir, ddir); err != nil {
		t.Fatal(err)
	}
	if !p.Assets[0].Present || p.Assets[1].Present || p.Assets[1].Partial != 1234 {
		t.Errorf("weights present %v; data present %v, partial %d (want true, false, 1234)", p.Assets[0].Present, p.Assets[1].Present, p.Assets[1].Partial)
	}
	if p.Estimate.Images != 777 || p.Estimate != DocsMeasured.Estimate(s, 777) {
		t.Errorf("estimate %+v, want %+v", p.Estimate, DocsMeasured.Estimate(s, 777))
	}
}

// TestAssetDir: a folder given wins; else weights/ or data/ by kind.
func TestAssetDir(t *testing.T) {
	for _, a := range Catalogue() {
		want := DefaultDataDir
		if a.Kind == Weights {
			want = DefaultWeightsDir
		}
		if got := a.Dir(""); got != want {
			t.Errorf("%s: %s, want %s", a.Name, got, want)
		}
		if got := a.Dir("x"); got != "x" {
			t.Errorf("%s with a folder: %s", a.Name, got)
		}
	}
}
