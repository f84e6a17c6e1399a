package main

import (
	"regexp"
	"testing"

	"github.com/flycl/flycl/cmd/internal/clitest"
)

// docCommands find flycl-lab's command lines in the docs, and flycl's
// that run flycl-lab's commands ("flycl run" runs "flycl-lab run").
var docCommands = []*regexp.Regexp{clitest.CommandLine("flycl-lab"), clitest.CommandLine("flycl")}

// TestDocsFlagsExist: every flycl-lab command line that README.md and
// docs/ show (in a code block or in backticks), and every flycl command
// line of a command flycl runs through flycl-lab, names flags that its
// command has, so that the docs cannot drift from the commands' flags.
// Prose finds no command and is passed over.
func TestDocsFlagsExist(t *testing.T) {
	// flycl's own commands are not flycl-lab's: they do not resolve
	checked := clitest.DocFlags(t, "flycl-lab", newRoot(), docCommands, nil)
	if checked < 100 {
		t.Errorf("checked only %d command lines in the docs: the scan does not see them", checked)
	}
	t.Logf("%d command lines checked", checked)
}
