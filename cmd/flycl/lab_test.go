package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestLabCommandsRunFlyclLab builds flycl-lab and checks, through the
// command line, that "flycl NAME ARGS" is "flycl-lab NAME ARGS": the
// same help, the arguments passed whole (flags flycl does not have), the
// same exit status on a refused flag (2); that labCommands are exactly
// the commands "flycl-lab --help" lists; and that without flycl-lab
// beside flycl or on PATH, flycl says how to build it.
func TestLabCommandsRunFlyclLab(t *testing.T) {
	if testing.Short() {
		t.Skip("builds flycl-lab; skipped with -short")
	}
	dir := t.TempDir()
	lab := filepath.Join(dir, "flycl-lab")
	if out, err := exec.Command("go", "build", "-o", lab, "../flycl-lab").CombinedOutput(); err != nil {
		t.Fatalf("go build flycl-lab: %v\n%s", err, out)
	}
	out, err := exec.Command(lab, "--help").Output()
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, m := range regexp.MustCompile(`(?m)^  ([a-z-]+)\s{2,}`).FindAllStringSubmatch(string(out), -1) {
		if m[1] != "help" && m[1] != "completion" {
			listed = append(listed, m[1])
		}
	}
	slices.Sort(listed)
	if !slices.Equal(listed, labCommands) {
		t.Errorf("flycl-lab --help lists %v, labCommands are %v", listed, labCommands)
	}

	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	want, err := exec.Command(lab, "sweep", "--help").Output()
	if err != nil {
		t.Fatal(err)
	}
	got, err := runCLI(t, "sweep", "--help")
	if err != nil || got != string(want) {
		t.Errorf("flycl sweep --help: %v\n%s\nwant flycl-lab sweep --help:\n%s", err, got, want)
	}
	_, err = runCLI(t, "bench", "engine", "--no-such-flag")
	if exitCode(err) != exitInput || !ranLab(err) {
		t.Errorf("flycl bench engine --no-such-flag: %v, exit status %d, want flycl-lab's %d", err, exitCode(err), exitInput)
	}

	t.Setenv("PATH", t.TempDir())
	_, err = runCLI(t, "run", "--help")
	if err == nil || ranLab(err) || !strings.Contains(err.Error(), "make build builds bin/flycl-lab") {
		t.Errorf("without flycl-lab: %v", err)
	}
}

// TestRanLabOnlyForFlyclLab: an error wrapping another program's exit
// (ffmpeg's, which ends flycl watch on a source it cannot read) is not
// flycl-lab's: main prints it (it printed nothing, and exited 1).
func TestRanLabOnlyForFlyclLab(t *testing.T) {
	err := exec.Command("sh", "-c", "exit 1").Run()
	if err == nil {
		t.Fatal("sh -c 'exit 1' succeeded")
	}
	if ranLab(fmt.Errorf("watch: the source gave no frame: nope.mp4: %w", err)) {
		t.Fatal("an ffmpeg exit is taken for flycl-lab's, and its error is not printed")
	}
}
