package main

import (
	"slices"
	"strings"
	"testing"
)

// TestCommandGroups: every command name scripts/, docs/ and users' scripts
// call still resolves, each of flycl's own in one group of "flycl --help"
// and flycl-lab's hidden there (flycl runs them through flycl-lab:
// TestLabCommandsRunFlyclLab), with "flycl help research" pointing to them.
func TestCommandGroups(t *testing.T) {
	// the commands flycl had before they were grouped
	names := []string{"run", "sweep", "extract", "report", "heatmap", "hebbian", "analyze", "export-w", "export",
		"bench", "info", "learn", "stats", "merge", "predict", "forget", "undo", "history", "repair", "classes",
		"serve", "watch", "frigate", "fetch", "reproduce", "version", "environment", "weights", "research"}
	root := newRoot()
	for _, n := range names {
		c, rest, err := root.Find([]string{n})
		if err != nil || len(rest) != 0 || c.Name() != n {
			t.Errorf("flycl %s: not found (%v)", n, err)
			continue
		}
		if slices.Contains(labCommands, n) {
			if !c.Hidden || !c.DisableFlagParsing {
				t.Errorf("flycl %s: flycl-lab's, but not hidden and handed over whole", n)
			}
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
	// the research lab's commands are not listed; the help says where they are
	if strings.Contains(help, "\n  run ") || !strings.Contains(help, "flycl help research") {
		t.Errorf("flycl --help lists run, or does not point to flycl help research:\n%s", help)
	}
	c, _, err := root.Find([]string{"research"})
	if err != nil || c.Name() != "research" {
		t.Fatalf("flycl help research: %v", err)
	}
	for _, n := range labCommands {
		if !strings.Contains(c.Long, n) {
			t.Errorf("flycl help research does not name %s", n)
		}
	}
}
