package cli

import (
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/flycl/flycl"
)

// FlagError is every command's flag error handler (cobra asks the root's
// for a command that sets none): an unknown flag gets the command's
// nearest flags as suggestions, as cobra suggests mistyped commands; the
// error is input refused either way (exit status 2).
func FlagError(cmd *cobra.Command, err error) error {
	if s := suggestFlags(cmd, err.Error()); s != "" {
		err = fmt.Errorf("%w; %s", err, s)
	}
	return flycl.Input(err)
}

// suggestFlags is "did you mean --model?" for pflag's "unknown flag:
// --modle" ("" when msg is another error or no flag is near).
func suggestFlags(cmd *cobra.Command, msg string) string {
	name, ok := strings.CutPrefix(msg, "unknown flag: --")
	if !ok {
		return ""
	}
	name, _, _ = strings.Cut(name, "=")
	var names []string
	seen := map[string]bool{}
	add := func(f *pflag.Flag) {
		if !f.Hidden && !seen[f.Name] {
			seen[f.Name] = true
			names = append(names, f.Name)
		}
	}
	cmd.LocalFlags().VisitAll(add)
	cmd.InheritedFlags().VisitAll(add)
	near := nearNames(name, names)
	if len(near) == 0 {
		return ""
	}
	for i := range near {
		near[i] = "--" + near[i]
	}
	return "did you mean " + strings.Join(near, " or ") + "? (" + cmd.CommandPath() + " --help lists its flags)"
}

// nearNames are the names within a small edit distance of typed (at most
// 2, and less than half its length, so that short typos do not match
// everything), or that typed is a prefix or a piece of; nearest first,
// then in order of the names, at most three.
func nearNames(typed string, names []string) []string {
	type cand struct {
		name string
		d    int
	}
	limit := min(2, max(1, len(typed)/2))
	var cs []cand
	for _, n := range names {
		d := editDistance(strings.ToLower(typed), strings.ToLower(n))
		switch {
		case d <= limit:
		case len(typed) >= 3 && (strings.HasPrefix(n, typed) || strings.Contains(n, typed)):
			d = limit + 1
		default:
			continue
		}
		cs = append(cs, cand{n, d})
	}
	sort.SliceStable(cs, func(i, j int) bool {
		if cs[i].d != cs[j].d {
			return cs[i].d < cs[j].d
		}
		return cs[i].name < cs[j].name
	})
	var out []string
	for i := 0; i < len(cs) && i < 3; i++ {
		out = append(out, cs[i].name)
	}
	return out
}

// editDistance is the optimal string alignment distance of a and b:
// insertions, deletions, substitutions and transpositions of neighbours,
// each 1 (a transposition is the commonest typo: --modle).
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}
