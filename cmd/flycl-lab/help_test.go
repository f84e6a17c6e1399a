package main

import (
	"testing"

	"github.com/flycl/flycl/cmd/internal/clitest"
)

// TestHelpExamplesParse: every example line of every command's help names
// a command that exists, with flags it has and values they take
// (clitest.ExamplesParse).
func TestHelpExamplesParse(t *testing.T) {
	clitest.ExamplesParse(t, "flycl-lab", newRoot)
}

// TestFlagSuggestionsEveryCommand: each flag of every command, mistyped,
// is refused as input with that flag suggested (clitest.FlagSuggestions).
func TestFlagSuggestionsEveryCommand(t *testing.T) {
	clitest.FlagSuggestions(t, newRoot())
}
