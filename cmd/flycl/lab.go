package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/flycl/flycl"
)

// The research lab's commands (the paper's protocol, data sets, figures
// and benchmarks) are flycl-lab's, a program of their own, so that
// "flycl --help" lists what a camera user needs. flycl still runs them by
// their names: "flycl run ARGS" runs "flycl-lab run ARGS" (the flycl-lab
// beside this executable, else on PATH), so that scripts and habits
// written for one program keep working.

// labCommands are flycl-lab's commands (TestLabCommandsAreFlyclLabs
// checks the list against flycl-lab's tree).
var labCommands = []string{"analyze", "bench", "export-w", "fetch", "heatmap", "hebbian", "report", "reproduce", "run", "sweep"}

// addLabCommands adds to root, hidden, a command per lab command that
// runs flycl-lab's with the arguments as given.
func addLabCommands(root *cobra.Command) {
	for _, name := range labCommands {
		root.AddCommand(&cobra.Command{Use: name, Hidden: true, DisableFlagParsing: true,
			Short: "flycl-lab " + name + " (the research lab's program: flycl help research)",
			RunE:  func(cmd *cobra.Command, args []string) error { return runLab(cmd, append([]string{name}, args...)) }})
	}
}

// researchHelp is the help topic "flycl help research".
func researchHelp() *cobra.Command {
	return &cobra.Command{Use: "research", Short: "The research lab's commands (run, sweep, bench, ...) are flycl-lab's",
		Long: `The research lab's commands are a program of their own, flycl-lab, built and
installed beside flycl (make build, make install, the release archives):
` + strings.Join(labCommands, ", ") + `.
They run the paper's protocol (methods × seeds on feature files or data
sets), fetch its data sets and backbones, draw its figures and measure the
engine. "flycl-lab help" lists them; "flycl NAME ARGS" runs
"flycl-lab NAME ARGS".`}
}

// labProgram is flycl-lab's path: beside this program's executable, else
// on PATH.
func labProgram(name string) (string, error) {
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), "flycl-lab"+filepath.Ext(exe))
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p, nil
		}
	}
	p, err := exec.LookPath("flycl-lab")
	if err != nil {
		return "", flycl.Input(fmt.Errorf("flycl %s is flycl-lab %s, the research lab's program, which is neither beside flycl nor on PATH (make build builds bin/flycl-lab; go build ./cmd/flycl-lab)", name, name))
	}
	return p, nil
}

// runLab runs flycl-lab with args on flycl's input and output; flycl-lab
// gets the interrupt itself (flycl, catching it, waits for it to stop).
func runLab(cmd *cobra.Command, args []string) error {
	p, err := labProgram(args[0])
	if err != nil {
		return err
	}
	c := exec.Command(p, args...)
	c.Stdin, c.Stdout, c.Stderr = cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr()
	err = c.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return &labExit{ee}
	}
	return err
}

// labExit is flycl-lab's exit with a status (runLab), whose message
// flycl-lab has written; it unwraps to the *exec.ExitError, whose status
// flycl exits with (cli.ExitCode).
type labExit struct{ *exec.ExitError }

func (e *labExit) Unwrap() error { return e.ExitError }

// ranLab reports whether err is flycl-lab's exit with a status, whose
// message flycl-lab has written. Another program's exit in err (ffmpeg's,
// under flycl watch) is not: its message is flycl's to print.
func ranLab(err error) bool {
	var le *labExit
	return errors.As(err, &le) && le.ExitCode() > 0
}
