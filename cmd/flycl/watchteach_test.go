package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/flycl/flycl/app/inbox"
	"github.com/flycl/flycl/app/store"
)

// TestWatchInbox: flycl watch --inbox keeps the frames of a clip (through
// SqueezeNet) in the labelling inbox with their camera, the model's
// version and the features the model scored; every frame of a class the
// model never learned (banana) is doubtful to a policy that keeps every
// answer short of certainty (rejected as unknown, or a probability below
// 1), and the items' features are the model's
// input dimension, so that flycl serve can learn them.
func TestWatchInbox(t *testing.T) {
	lib, sq := squeezeNet(t)
	ff, err := exec.LookPath("ffmpeg")
	if err != nil {
		t.Skipf("ffmpeg not installed (apt-get install ffmpeg): %v", err)
	}
	dir, frames := watchPhotos(t, ff, map[string]string{"tench": "n01440764_tench.JPEG", "magpie": "n01582220_magpie.JPEG",
		"banana": "n07753592_banana.JPEG"})
	banana, err := os.ReadFile(frames["banana"])
	if err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(filepath.Join(dir, "banana")) // a class the model does not learn
	model := filepath.Join(t.TempDir(), "cam.flycl")
	if out, err := runCLI(t, "learn", "--data", "folder:"+dir, "--backbone", "squeezenet:"+sq, "--model", model, "--ort-lib", lib,
		"--cache", "", "--quiet", "--m", "2000", "--p", "50", "--k", "600", "--lambdas", "1,10,100,1000"); err != nil {
		t.Fatalf("learn: %v\n%s", err, out)
	}
	seqDir := t.TempDir()
	for i := range 4 {
		os.WriteFile(filepath.Join(seqDir, fmt.Sprintf("%03d.png", i)), banana, 0o644)
	}
	video := filepath.Join(t.TempDir(), "clip.avi")
	if b, err := exec.Command(ff, "-hide_banner", "-loglevel", "error", "-framerate", "4", "-i", filepath.Join(seqDir, "%03d.png"),
		"-c:v", "mjpeg", "-q:v", "3", video).CombinedOutput(); err != nil {
		t.Fatalf("make the video: %v: %s", err, b)
	}
	ibDir := filepath.Join(t.TempDir(), "inbox")
	if out, err := runCLI(t, "watch", "--model", model, "--ort-lib", lib, "--backbone", "squeezenet:"+sq, "--source", video, "--fps", "0",
		"--camera", "drive", "--inbox", ibDir, "--inbox-below", "1", "--inbox-margin", "1e9", "--inbox-every", "1"); err != nil {
		t.Fatalf("watch: %v\n%s", err, out)
	}
	m, err := store.Load(model)
	if err != nil {
		t.Fatal(err)
	}
	ib, err := inbox.Open(ibDir, inbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ib.Close()
	items := ib.List()
	if len(items) == 0 || len(items) > 4 {
		t.Fatalf("%d items kept of the 4 banana frames", len(items))
	}
	for _, it := range items {
		if it.Camera != "drive" || it.Zone != "" || it.ModelVersion != m.Model.Version() || it.Dim != m.Model.InputDim() || !it.Image ||
			(it.Guess != "tench" && it.Guess != "magpie") || (it.Why != inbox.Unknown && it.Why != inbox.LowProbability) {
			t.Fatalf("item %+v: want camera drive, version %d, d=%d, an image, a guess of the model's, kept as unsure", it, m.Model.Version(), m.Model.InputDim())
		}
	}
}
