package cli

import (
	"testing"

	"github.com/spf13/cobra"
)

// TestNoGuessForAWildFlag: a flag far from every flag of the command gets
// no suggestion, one letter off gets its flag.
func TestNoGuessForAWildFlag(t *testing.T) {
	c := &cobra.Command{Use: "x"}
	c.Flags().String("model", "", "")
	c.Flags().String("addr", "", "")
	if s := suggestFlags(c, "unknown flag: --zzzzzzzz"); s != "" {
		t.Errorf("a wild flag got %q", s)
	}
	if s := suggestFlags(c, "unknown flag: --modle"); s != "did you mean --model? (x --help lists its flags)" {
		t.Errorf("--modle got %q", s)
	}
}

// TestEditDistance against hand-counted edits.
func TestEditDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		d    int
	}{{"modle", "model", 1}, {"model", "model", 0}, {"", "abc", 3}, {"adr", "addr", 1}, {"kitten", "sitting", 3}, {"ca", "abc", 3}} {
		if got := editDistance(tc.a, tc.b); got != tc.d {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.d)
		}
	}
}
