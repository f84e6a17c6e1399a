package main

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flycl/flycl/cmd/internal/clitest"
)

// docCommand finds a flycl command line in a line of a user doc.
var docCommand = clitest.CommandLine("flycl")

// TestDocsFlagsExist: every flycl command line that README.md and docs/
// show (in a code block or in backticks) names flags that its command
// has, so that the docs cannot drift from the commands' flags. Prose that
// names flycl ("flycl is ...") finds no command and is passed over.
func TestDocsFlagsExist(t *testing.T) {
	docs, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	docs = append(docs, filepath.Join("..", "..", "README.md"))
	root := newRoot()
	checked := 0
	for _, path := range docs {
		lines, at := clitest.DocLines(t, path)
		for i, l := range lines {
			for _, m := range docCommand.FindAllStringSubmatch(l, -1) {
				args := strings.Fields(m[1])
				if len(args) == 0 {
					continue
				}
				c, rest, err := root.Find(args)
				if err != nil || c == root || slices.Contains(labCommands, c.Name()) {
					continue // not a command (prose, or output), or flycl-lab's (its own test)
				}
				checked++
				for _, a := range rest {
					if !strings.HasPrefix(a, "--") || a == "--" {
						continue
					}
					flag, _, _ := strings.Cut(a, "=")
					for _, name := range strings.Split(flag, "/") { // "--lambda/--online" names two
						name = strings.Trim(strings.TrimPrefix(name, "--"), `"'.,:`)
						if name == "" || name == "help" {
							continue
						}
						if c.Flags().Lookup(name) == nil && c.InheritedFlags().Lookup(name) == nil {
							t.Errorf("%s:%d: flycl %s has no flag --%s (in %q)", filepath.Base(path), at[i], c.CommandPath()[len(root.Name())+1:], name, strings.TrimSpace(m[0]))
						}
					}
				}
			}
		}
	}
	if checked < 100 {
		t.Errorf("checked only %d command lines in the docs: the scan does not see them", checked)
	}
	t.Logf("%d command lines checked", checked)
}
