package main

import (
	"os"
	"strings"
	"testing"

	"github.com/flycl/flycl/app/fetch"
	"github.com/flycl/flycl/vision/transform"
)

// TestReproduceDocsMatchSettings: docs/REPRODUCE.md shows every setting's
// command exactly as flycl-lab reproduce runs it, and every catalogue asset
// with its digest.
func TestReproduceDocsMatchSettings(t *testing.T) {
	b, err := os.ReadFile("../../docs/REPRODUCE.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, s := range fetch.Settings() {
		line, err := s.Command(defaultWeightsDir, defaultDataDir)
		if err != nil {
			t.Fatal(err)
		}
		if want := "bin/flycl-lab " + strings.Join(line, " "); !strings.Contains(doc, want) {
			t.Errorf("docs/REPRODUCE.md lacks the command of %s:\n%s", s.Name, want)
		}
		if !strings.Contains(doc, "`"+s.Name+"`") {
			t.Errorf("docs/REPRODUCE.md does not name the setting %s", s.Name)
		}
	}
	for _, a := range fetch.Catalogue() {
		if !strings.Contains(doc, "`"+a.Name+"`") || !strings.Contains(doc, a.File) || a.Digest.Hex != "" && !strings.Contains(doc, a.Digest.Hex) {
			t.Errorf("docs/REPRODUCE.md lacks %s (%s, %s)", a.Name, a.File, a.Digest)
		}
	}
}

// TestReproduceCommandsParse: every setting's command is a valid flycl-lab run
// command line (its flags parse, its preset exists).
func TestReproduceCommandsParse(t *testing.T) {
	for _, s := range fetch.Settings() {
		line, _ := s.Command("w", "d")
		if line[0] != "run" {
			t.Fatalf("%s: %v", s.Name, line)
		}
		c := runCmd()
		if err := c.ParseFlags(line[1:]); err != nil {
			t.Errorf("%s: %v", s.Name, err)
		}
		if args := c.Flags().Args(); len(args) != 0 {
			t.Errorf("%s: stray arguments %q", s.Name, args)
		}
		p, _ := c.Flags().GetString("preset")
		if _, ok := transform.Presets[p]; !ok {
			t.Errorf("%s: preset %q does not exist", s.Name, p)
		}
	}
}

func TestReproduceDryRun(t *testing.T) {
	dir := t.TempDir()
	out, _, err := fetchCLI(t, "reproduce", "cub-resnet50", "--dry-run", "--weights-dir", dir+"/w", "--data-dir", dir+"/d")
	if err != nil {
		t.Fatal(err)
	}
	s, _ := fetch.LookupSetting("cub-resnet50")
	line, _ := s.Command(dir+"/w", dir+"/d")
	for _, w := range []string{"flycl-lab " + strings.Join(line, " "), "102.5 MB", "1.15 GB", "resnet50-11ad3fa6.pth", "CUB_200_2011.tgz",
		"11788 images at 39.7 images/s: about 5 min", "2-core AMD EPYC", "Ā = 80.25"} {
		if !strings.Contains(out, w) {
			t.Errorf("dry run lacks %q:\n%s", w, out)
		}
	}
	if _, err := os.Stat(dir + "/w"); !os.IsNotExist(err) {
		t.Errorf("a dry run made %s/w", dir)
	}
	out, _, err = fetchCLI(t, "reproduce", "--list")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range fetch.Settings() {
		if !strings.Contains(out, s.Name) {
			t.Errorf("--list lacks %s", s.Name)
		}
	}
}
