package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flycl/flycl/cmd/internal/clitest"
)

// TestFlagSuggestionsEveryCommand: each flag of every command, mistyped,
// is refused as input with that flag suggested (clitest.FlagSuggestions).
func TestFlagSuggestionsEveryCommand(t *testing.T) {
	clitest.FlagSuggestions(t, newRoot())
}

// TestHelpfulErrors: through the command line, a mistyped flag is
// suggested the right one; --data with a bare folder is told folder:; a
// predict on a model file that does not exist says to learn first, with
// the command.
func TestHelpfulErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "never.flycl")
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"predict", "--modle", "x.flycl", "a.jpg"}, []string{"unknown flag: --modle", "did you mean --model?"}},
		{[]string{"serve", "--adr", "127.0.0.1:1"}, []string{"did you mean --addr?"}},
		{[]string{"learn", "--model", missing, "--data", "photos"}, []string{`unknown kind "photos"`, "give folder:photos"}},
		{[]string{"predict", "--model", missing, "a.jpg"}, []string{"no such file", "learn first: flycl learn --model " + missing + " --data folder:"}},
		{[]string{"info", missing}, []string{"learn first"}},
		// a folder among the images: how to give its images
		{[]string{"predict", "--model", missing, filepath.Dir(missing)}, []string{filepath.Dir(missing) + " is a folder", "--data folder:"}},
		// a mistyped path is not a model without a journal
		{[]string{"history", "--model", missing}, []string{"no such file", "learn first"}},
		// a mini-batch of no sample, named by its flag before the model is read
		{[]string{"learn", "--model", missing, "--data", "folder:x", "--online", "--online-batch", "-3"}, []string{"--online-batch -3"}},
	} {
		_, err := runCLI(t, tc.args...)
		if err == nil {
			t.Errorf("%v: no error", tc.args)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v: %v\nwant %q in it", tc.args, err, w)
			}
		}
		if exitCode(err) != exitInput {
			t.Errorf("%v: exit status %d, want %d (input refused)", tc.args, exitCode(err), exitInput)
		}
	}
}

// TestStrayArgumentsRefused: a command that takes only flags refuses a
// word left on its command line (a flag's value without its flag, e.g.
// the output folder of extract without --out) naming it, rather than
// doing its work without it.
func TestStrayArgumentsRefused(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "never.flycl")
	for _, args := range [][]string{
		{"classes", "--model", missing, "other.flycl"},
		{"export", "--model", missing, "cam.onnx"},
		{"extract", "--data", "folder:photos", "myfeatures"},
		{"stats", "--features", "f.npz", "--out", "p.stats", "part-1"},
		{"watch", "--model", missing, "--source", "clip.mp4", "rtsp://cam"},
	} {
		_, err := runCLI(t, args...)
		stray := args[len(args)-1]
		if err == nil || !strings.Contains(err.Error(), `"`+stray+`"`) {
			t.Errorf("%v: %v, want an error naming %q", args, err, stray)
		}
	}
}

// TestInterruptSaysSo: a command ended by Ctrl-C says it was
// interrupted, not only Go's "context canceled"; another error that
// wraps a cancellation without an interrupt is printed as it is.
func TestInterruptSaysSo(t *testing.T) {
	err := fmt.Errorf("learn (m.flycl unchanged): %w", context.Canceled)
	if got := errorLine(err, true); !strings.HasPrefix(got, "flycl: interrupted (Ctrl-C): ") || !strings.Contains(got, "m.flycl unchanged") {
		t.Errorf("interrupted: %q", got)
	}
	if got := errorLine(err, false); got != "flycl: "+err.Error() {
		t.Errorf("not interrupted: %q", got)
	}
}

// TestExtractionFlagsOutOfRange: an extraction flag out of its range is
// refused naming it (input refused) before any image is read, not taken
// for the default or for no limit.
func TestExtractionFlagsOutOfRange(t *testing.T) {
	photos := t.TempDir()
	writePhotos(t, photos, 2, "red", "blue")
	model := filepath.Join(t.TempDir(), "m.flycl")
	for _, flag := range [][]string{{"--batch", "-1"}, {"--threads", "-2"}, {"--max-image-pixels", "-5"}, {"--decode-pixels", "0"}} {
		for _, cmd := range [][]string{
			{"learn", "--model", model, "--data", "folder:" + photos, "--quiet", "--cache", ""},
			{"extract", "--data", "folder:" + photos, "--out", t.TempDir(), "--quiet", "--cache", ""},
		} {
			_, err := runCLI(t, append(cmd, flag...)...)
			if err == nil || !strings.Contains(err.Error(), flag[0]+" "+flag[1]) || exitCode(err) != exitInput {
				t.Errorf("%s %v: %v, want it refused naming the flag", cmd[0], flag, err)
			}
		}
	}
	if _, err := os.Stat(model); err == nil {
		t.Error("a refused learn created the model")
	}
}
