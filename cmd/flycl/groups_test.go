package main

import (
	"slices"
	"strings"
	"testing"
)

// TestCommandGroups: every command name scripts/, docs/ and users' scripts
// call still resolves, each in one group of "flycl --help", the camera
// user's groups before the research lab's.
func TestCommandGroups(t *testing.T) {
	// the commands flycl had before they were grouped
	names := []string{"run", "sweep", "extract", "report", "heatmap", "hebbian", "analyze", "export-w", "export",
		"bench", "info", "learn", "stats", "merge", "predict", "forget", "undo", "history", "repair", "classes",
		"serve", "watch", "frigate", "fetch", "reproduce", "version", "environment", "weights"}
	root := newRoot()
	for _, n := range names {
		c, rest, err := root.Find([]string{n})
		if err != nil || len(rest) != 0 || c.Name() != n {
			t.Errorf("flycl %s: not found (%v)", n, err)
			continue
		}
		if c.Runnable() && c.Name() != "version" && !root.ContainsGroup(c.GroupID) {
			t.Errorf("flycl %s: in no group", n)
		}
	}
	for _, c := range root.Commands() {
		if !slices.Contains(names, c.Name()) && c.Name() != "help" && c.Name() != "completion" {
			t.Errorf("flycl %s: a new command; add it to this test's list", c.Name())
		}
	}
	var b strings.Builder
	root.SetOut(&b)
	root.SetArgs([]string{"--help"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	help := b.String()
	last := -1
	for _, g := range groups {
		i := strings.Index(help, g.title)
		if i < 0 || i < last {
			t.Fatalf("flycl --help: group %q missing or out of order:\n%s", g.title, help)
		}
		last = i
	}
	// a research command is listed under Research, not under Models
	models, research := strings.Index(help, groups[0].title), strings.Index(help, "Research")
	if run := strings.Index(help, "\n  run "); run < research || run < models {
		t.Errorf("flycl run is not under Research:\n%s", help)
	}
}
