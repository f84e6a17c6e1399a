package main

import (
	"errors"
	"image/jpeg"
	"image/png"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flycl/flycl/app/watch"
	"github.com/flycl/flycl/cmd/internal/cli"
)

// TestWatchSingleJPEGDeadWebhook: flycl watch of a source that is one
// JPEG photo (made here) classifies it as one frame, and with a webhook
// on a closed port of 127.0.0.1 it exits with an error that says no event
// was delivered and why (connection refused), not 0.
func TestWatchSingleJPEGDeadWebhook(t *testing.T) {
	lib, err := filepath.Abs(ortLib(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		t.Skipf("ffmpeg not installed (apt-get install ffmpeg): %v", err)
	}
	t.Setenv(cli.EnvModels, "")
	os.Unsetenv(cli.EnvModels) // the weights built into flycl
	train := t.TempDir()
	colourImages(t, train, 4, 1)
	model := filepath.Join(t.TempDir(), "cam.flycl")
	if out, err := runCLI(t, "learn", "--model", model, "--data", "folder:"+train, "--backbone", "squeezenet", "--ort-lib", lib, "--cache", "", "--quiet",
		"--m", "2000", "--p", "50", "--k", "600", "--lambdas", "1,10,100,1000"); err != nil {
		t.Fatalf("learn: %v\n%s", err, out)
	}
	pngs, _ := filepath.Glob(filepath.Join(train, "red", "*.png"))
	f, err := os.Open(pngs[0])
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	photo := filepath.Join(t.TempDir(), "photo.jpg")
	jf, err := os.Create(photo)
	if err != nil {
		t.Fatal(err)
	}
	if err := jpeg.Encode(jf, img, &jpeg.Options{Quality: 95}); err != nil {
		t.Fatal(err)
	}
	jf.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String() + "/hook"
	ln.Close()

	out, err := runCLI(t, "watch", "--model", model, "--ort-lib", lib, "--source", photo, "--fps", "2", "--unknown", "off",
		"--debounce", "1", "--webhook", dead, "--flush", "2s")
	answers, events := watchLines(t, out)
	if !slices.Equal(answers, []string{"red"}) || !slices.Equal(events, []string{"red"}) {
		t.Fatalf("one JPEG: answers %v, events %v; want one red frame and its event\n%s", answers, events, out)
	}
	if !errors.Is(err, watch.ErrUndelivered) || !strings.Contains(err.Error(), "connection refused") || exitCode(err) == 0 {
		t.Fatalf("a webhook on a closed port: %v (exit %d)", err, exitCode(err))
	}
}
