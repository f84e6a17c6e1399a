package main

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// docCommand finds a flycl command line in a line of a user doc: the text
// after "flycl " (or "bin/flycl "), up to a shell operator or a comment.
var docCommand = regexp.MustCompile(`(?:^|[\s;(|&$])(?:\./)?(?:bin/)?flycl\s+([^|;&<>)#` + "`" + `]*)`)

// docLines returns the lines of a markdown file that show commands: every
// line of a fenced code block (continuation lines joined) and every
// backtick span outside them, each with its line number.
func docLines(t *testing.T, path string) (lines []string, at []int) {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	fenced, n, pending, start := false, 0, "", 0
	span := regexp.MustCompile("`([^`]+)`")
	for sc.Scan() {
		n++
		l := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fenced = !fenced
			continue
		}
		if !fenced {
			for _, m := range span.FindAllStringSubmatch(l, -1) {
				lines, at = append(lines, m[1]), append(at, n)
			}
			continue
		}
		if pending == "" {
			start = n
		}
		if strings.HasSuffix(l, `\`) {
			pending += strings.TrimSuffix(l, `\`) + " "
			continue
		}
		lines, at = append(lines, pending+l), append(at, start)
		pending = ""
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return lines, at
}

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
		lines, at := docLines(t, path)
		for i, l := range lines {
			for _, m := range docCommand.FindAllStringSubmatch(l, -1) {
				args := strings.Fields(m[1])
				if len(args) == 0 {
					continue
				}
				c, rest, err := root.Find(args)
				if err != nil || c == root {
					continue // not a command: prose, or output
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
