package main

import (
	"regexp"
	"slices"
	"testing"

	"github.com/spf13/cobra"

	"github.com/flycl/flycl/cmd/internal/clitest"
)

// docCommand finds a flycl command line in a line of a user doc.
var docCommand = clitest.CommandLine("flycl")

// TestDocsFlagsExist: every flycl command line that README.md and docs/
// show (in a code block or in backticks) names flags that its command
// has, so that the docs cannot drift from the commands' flags. Prose that
// names flycl ("flycl is ...") finds no command and is passed over.
func TestDocsFlagsExist(t *testing.T) {
	// the research commands are flycl-lab's, checked by its own test
	isLab := func(c *cobra.Command) bool { return slices.Contains(labCommands, c.Name()) }
	checked := clitest.DocFlags(t, "flycl", newRoot(), []*regexp.Regexp{docCommand}, isLab)
	if checked < 100 {
		t.Errorf("checked only %d command lines in the docs: the scan does not see them", checked)
	}
	t.Logf("%d command lines checked", checked)
}
