package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flycl/flycl/app/intake"
)

// TestLearnPredictBadFiles: learn refuses a folder with undecodable
// photos naming each of them in one error (and how to learn the rest),
// --skip-bad learns the others; predict answers every good photo and
// fails naming the bad one.
func TestLearnPredictBadFiles(t *testing.T) {
	lib := ortLib(t)
	photos := t.TempDir()
	writePhotos(t, photos, 3, "red", "blue")
	good, err := os.ReadFile(filepath.Join(photos, "red", "a.png"))
	if err != nil {
		t.Fatal(err)
	}
	bad := []string{filepath.Join(photos, "blue", "cut.png"), filepath.Join(photos, "red", "text.jpg")}
	os.WriteFile(bad[0], good[:len(good)/2], 0o644)
	os.WriteFile(bad[1], []byte("not a photo"), 0o644)
	os.WriteFile(filepath.Join(photos, "red", "notes.txt"), []byte("red things"), 0o644)
	model := filepath.Join(t.TempDir(), "m.flycl")
	common := []string{"--model", model, "--ort-lib", lib, "--cache", "", "--quiet"}
	_, err = runCLI(t, append([]string{"learn", "--data", "folder:" + photos}, common...)...)
	var be *intake.BadFilesError
	if !errors.As(err, &be) || len(be.Files) != 2 || !strings.Contains(err.Error(), "--skip-bad to learn the other 6") {
		t.Fatalf("learn with bad files: %v", err)
	}
	for _, p := range bad {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("the error does not name %s: %v", p, err)
		}
	}
	if _, err := os.Stat(model); err == nil {
		t.Fatal("a refused learn wrote the model")
	}
	out, err := runCLI(t, append([]string{"learn", "--data", "folder:" + photos, "--skip-bad"}, common...)...)
	if err != nil || !strings.Contains(out, "learned 6 samples") {
		t.Fatalf("learn --skip-bad: %v\n%s", err, out)
	}
	args := []string{"predict", "--format", "csv", "--top", "1", filepath.Join(photos, "red", "a.png"), bad[0], filepath.Join(photos, "blue", "b.png")}
	out, err = runCLI(t, append(args, common...)...)
	if !errors.As(err, &be) || len(be.Files) != 1 || be.Files[0].Path != bad[0] || exitCode(err) != exitInput {
		t.Errorf("predict with a bad file: %v", err)
	}
	for _, p := range []string{filepath.Join(photos, "red", "a.png"), filepath.Join(photos, "blue", "b.png")} {
		if !strings.Contains(out, p+",") {
			t.Errorf("predict printed no answer for %s:\n%s", p, out)
		}
	}
}
