// Package clitest holds what the tests of flycl's two programs (cmd/flycl,
// cmd/flycl-lab) share: the command lines the docs show, the checks of
// the model flags every command binds from flycl.Config, and small
// feature files to run commands on. Only tests import it.
package clitest

import (
	"bufio"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/configflag"
	"github.com/flycl/flycl/cmd/internal/cli"
	"github.com/flycl/flycl/format/features"
)

// CommandLine finds a command line of program in a line of a user doc:
// the text after "program " (or "bin/program "), up to a shell operator
// or a comment. The command line is the first submatch.
func CommandLine(program string) *regexp.Regexp {
	return regexp.MustCompile(`(?:^|[\s;(|&$])(?:\./)?(?:bin/)?` + regexp.QuoteMeta(program) + `\s+([^|;&<>)#` + "`" + `]*)`)
}

// Run runs the program newRoot makes with args in this process and
// returns what it wrote to stdout.
func Run(t *testing.T, newRoot func() *cobra.Command, args ...string) (string, error) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stdout
	os.Stdout = w
	done := make(chan []byte)
	go func() { b, _ := io.ReadAll(r); done <- b }()
	root := newRoot()
	root.SetArgs(args)
	err = root.Execute()
	w.Close()
	os.Stdout = old
	return string(<-done), err
}

// DocFlags checks the command lines of program that patterns find in
// README.md and docs/*.md (read from a cmd/<program> folder): each names
// only flags its command has (or inherits), so that the docs cannot drift
// from the commands' flags. A line that root does not resolve to one of
// its commands (prose, output, another program's), or whose command
// other (when not nil) says is another program's, is passed over. It returns how many lines it checked.
func DocFlags(t *testing.T, program string, root *cobra.Command, patterns []*regexp.Regexp, other func(*cobra.Command) bool) int {
	t.Helper()
	docs, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	docs = append(docs, filepath.Join("..", "..", "README.md"))
	checked := 0
	for _, path := range docs {
		lines, at := DocLines(t, path)
		for i, l := range lines {
			var found [][]string
			for _, re := range patterns {
				found = append(found, re.FindAllStringSubmatch(l, -1)...)
			}
			for _, m := range found {
				args := strings.Fields(m[1])
				if len(args) == 0 {
					continue
				}
				c, rest, err := root.Find(args)
				if err != nil || c == root || (other != nil && other(c)) {
					continue
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
							t.Errorf("%s:%d: %s %s has no flag --%s (in %q)", filepath.Base(path), at[i], program, c.CommandPath()[len(root.Name())+1:], name, strings.TrimSpace(m[0]))
						}
					}
				}
			}
		}
	}
	return checked
}

// DocLines returns the lines of a markdown file that show commands: every
// line of a fenced code block (continuation lines joined) and every
// backtick span outside them, each with its line number.
func DocLines(t *testing.T, path string) (lines []string, at []int) {
	t.Helper()
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

// WriteBlobs writes perClass samples of each of 4 Gaussian blobs in 6
// dimensions (class means drawn with a fixed seed, samples with seed) to
// path as a feature file.
func WriteBlobs(t *testing.T, path string, seed uint64, perClass int) {
	WriteScaledBlobs(t, path, seed, perClass, 1)
}

// WriteScaledBlobs is WriteBlobs with every value times scale.
func WriteScaledBlobs(t *testing.T, path string, seed uint64, perClass int, scale float32) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 1))
	s := &features.Set{D: 6}
	for c := 0; c < 4; c++ {
		mr := rand.New(rand.NewPCG(uint64(c), 2))
		mean := make([]float64, 6)
		for j := range mean {
			mean[j] = 3 * mr.NormFloat64()
		}
		for i := 0; i < perClass; i++ {
			for j := range mean {
				s.X = append(s.X, float32(mean[j]+r.NormFloat64())*scale)
			}
			s.Labels = append(s.Labels, c)
			s.N++
		}
	}
	if err := features.Save(path, s); err != nil {
		t.Fatal(err)
	}
}

// ConfigFlags checks that every command of root that takes Fly-CL's
// configuration (it has --w-seed, a flag only the model flags have; but
// those in except, by command path) has a flag for every field of
// flycl.Config, with the field's help text (its tag, as
// flycl.Config.FlagHelp completes it) and flycl.DefaultConfig's default,
// so a field added to flycl.Config is a flag of all of them; and that the
// commands want are among them.
func ConfigFlags(t *testing.T, root *cobra.Command, except map[string]bool, want ...string) {
	t.Helper()
	typ := reflect.TypeFor[flycl.Config]()
	cf := configflag.New()
	defaults := map[string]string{}
	for _, v := range cf.Values() {
		defaults[v.Flag] = v.String()
	}
	help := func(f reflect.StructField) string { return flycl.Config{}.FlagHelp(f.Name, f.Tag.Get("help")) }
	var found []string
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		fs := c.Flags()
		if fs.Lookup("w-seed") == nil || except[c.CommandPath()] {
			return
		}
		found = append(found, c.CommandPath())
		for i := range typ.NumField() {
			field := typ.Field(i)
			name := cf.Flag(field.Name)
			fl := fs.Lookup(name)
			switch {
			case fl == nil:
				t.Errorf("%s: no --%s for flycl.Config.%s", c.CommandPath(), name, field.Name)
			case fl.Usage != help(field):
				t.Errorf("%s --%s: help %q, flycl.Config.%s's is %q", c.CommandPath(), name, fl.Usage, field.Name, help(field))
			case fl.DefValue != defaults[name]:
				t.Errorf("%s --%s: default %q, flycl.DefaultConfig's %q", c.CommandPath(), name, fl.DefValue, defaults[name])
			}
		}
	}
	walk(root)
	for _, w := range want {
		if !slices.Contains(found, w) {
			t.Errorf("%s does not take the model flags (commands that do: %s)", w, strings.Join(found, ", "))
		}
	}
}

// SchemaFlags checks that a flag of any command of root named as a field
// of flycl.Config (--m, --lambdas, ...) is that field's, bound from the
// schema: its help is flycl.Config's, so that no command declares a
// hyper-parameter by hand (a benchmark may give another default). other
// are the exceptions, as "COMMAND PATH --FLAG".
func SchemaFlags(t *testing.T, root *cobra.Command, other map[string]bool) {
	t.Helper()
	cf := configflag.New()
	schema := map[string]string{}
	for _, v := range cf.Values() {
		schema[v.Flag] = v.Help
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		c.Flags().VisitAll(func(fl *pflag.Flag) {
			h, ok := schema[fl.Name]
			if !ok || other[c.CommandPath()+" --"+fl.Name] {
				return
			}
			if fl.Usage != h {
				t.Errorf("%s --%s: help %q, not flycl.Config's %q (bind it with configflag)", c.CommandPath(), fl.Name, fl.Usage, h)
			}
		})
	}
	walk(root)
}

// ExamplesParse checks that every example line of program's help (the
// tree newRoot makes) names a command that exists, with flags it has and
// values they take (the flags are parsed by the command's own flag set,
// with its checks of required flags), as written.
func ExamplesParse(t *testing.T, program string, newRoot func() *cobra.Command) {
	n := 0
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		for _, line := range strings.FieldsFunc(c.Example, func(r rune) bool { return r == '\n' || r == ';' }) {
			line, _, _ = strings.Cut(line, "#")
			if a, b, ok := strings.Cut(line, "&&"); ok { // two commands: the first here, the second below
				line = a
				defer func(b string) { checkExample(t, program, newRoot, c, strings.TrimSpace(b), &n) }(b)
			}
			checkExample(t, program, newRoot, c, strings.TrimSpace(line), &n)
		}
	}
	walk(newRoot())
	if n < 10 {
		t.Errorf("only %d example lines found", n)
	}
}

// checkExample parses one example command line of c's help (see
// ExamplesParse), counting it in n.
func checkExample(t *testing.T, program string, newRoot func() *cobra.Command, c *cobra.Command, line string, n *int) {
	t.Helper()
	if line == "" || strings.HasPrefix(line, "$") {
		return
	}
	words := strings.Fields(line)
	if words[0] != program || strings.ContainsAny(line, "|<>`$'\"\\") {
		return // shell around the program: not its line alone
	}
	*n++
	root := newRoot()
	found, rest, err := root.Find(words[1:])
	if err != nil || found == root && len(words) > 1 && !strings.HasPrefix(words[1], "-") {
		t.Errorf("%s example %q: no such command (%v)", c.CommandPath(), line, err)
		return
	}
	found.SetOut(new(strings.Builder))
	if err := found.ParseFlags(rest); err != nil {
		t.Errorf("%s example %q: %v", c.CommandPath(), line, err)
		return
	}
	if err := found.ValidateRequiredFlags(); err != nil {
		t.Errorf("%s example %q: %v", c.CommandPath(), line, err)
	}
	if err := found.ValidateArgs(found.Flags().Args()); err != nil {
		t.Errorf("%s example %q: %v", c.CommandPath(), line, err)
	}
}

// FlagSuggestions checks that, for every command of root's tree, each of
// its flags mistyped by swapping two letters (the commonest typo) is
// refused by cli.FlagError as input with that flag among the
// suggestions, as cobra suggests a mistyped command.
func FlagSuggestions(t *testing.T, root *cobra.Command) {
	var walk func(c *cobra.Command)
	checked := 0
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		if !c.Runnable() {
			return
		}
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if f.Hidden || len(f.Name) < 4 || checked > 4000 {
				return
			}
			typo := f.Name[:1] + f.Name[2:3] + f.Name[1:2] + f.Name[3:]
			if typo == f.Name || c.Flags().Lookup(typo) != nil {
				return
			}
			err := cli.FlagError(c, pflagUnknown(typo))
			if !flycl.IsInput(err) || !strings.Contains(err.Error(), "did you mean") || !strings.Contains(err.Error(), "--"+f.Name) {
				t.Errorf("%s --%s (for --%s): %v", c.CommandPath(), typo, f.Name, err)
			}
			checked++
		})
	}
	walk(root)
	if checked < 100 {
		t.Errorf("only %d flags checked", checked)
	}
}

// pflagUnknown is pflag's own error for an unknown flag, made by pflag.
func pflagUnknown(name string) error {
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	fs.SetOutput(new(strings.Builder))
	return fs.Parse([]string{"--" + name})
}
