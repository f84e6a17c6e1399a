package flycl

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// TestClassNameRules: names that print alike but differ (white space at an
// end, invisible format characters, direction overrides, control
// characters) are refused with a *NameError naming the rule; names in
// decomposed Unicode come back in NFC. The NFC forms are written out as
// code points here, independently of the normaliser.
func TestClassNameRules(t *testing.T) {
	for _, tc := range []struct {
		name string
		want string // NFC form; "" when refused
		rule string // substring of the rule when refused
	}{
		{"cat", "cat", ""},
		{"forklift truck", "forklift truck", ""}, // inner space is fine
		{"猫", "猫", ""},
		{"e\u0301t\u0065\u0301", "\u00e9t\u00e9", ""}, // é as e + combining acute
		{"\u1100\u1161", "\uac00", ""},                // Hangul jamo compose to one syllable
		{"\u212b", "\u00c5", ""},                      // U+212B ANGSTROM SIGN is Å in NFC
		{"", "", "empty"},
		{"   ", "", "starts with white space"},
		{" a", "", "starts with white space"},
		{"a ", "", "ends with white space"},
		{"a\u00a0", "", "ends with white space"}, // no-break space
		{"a\t", "", "ends with white space"},
		{"a\u200b", "", "format character U+200B"},
		{"\u202eabc", "", "format character U+202E"},
		{"a\u200db", "", "format character U+200D"},
		{"a\nb", "", "control character U+000A"},
		{"a\x00b", "", "control character U+0000"},
		{"a\u2028b", "", "separator U+2028"},
		{string([]byte{'a', 0xff}), "", "UTF-8"},
		{strings.Repeat("x", MaxNameLen+1), "", "at most"},
		{strings.Repeat("\u1100\u1161", MaxNameLen/3+1), "", "at most"}, // long once composed
	} {
		got, err := NormalizeClassName(tc.name)
		if tc.rule == "" {
			if err != nil || got != tc.want {
				t.Errorf("%q: got %q, %v; want %q", tc.name, got, err, tc.want)
			}
			if CheckClassName(tc.name) != nil {
				t.Errorf("%q: CheckClassName refuses what NormalizeClassName accepts", tc.name)
			}
			continue
		}
		var ne *NameError
		if !errors.As(err, &ne) || ne.Name != tc.name || !strings.Contains(err.Error(), tc.rule) {
			t.Errorf("%q: error %v, want a *NameError about %q", tc.name, err, tc.rule)
		}
		if CheckClassName(tc.name) == nil {
			t.Errorf("%q: CheckClassName accepts it", tc.name)
		}
	}
}

// TestNormalizeClassNames: the class names of distinct labels must stay
// distinct (a feature file's ['dup', 'dup'] would merge two labels), also
// when they differ only in Unicode composition.
func TestNormalizeClassNames(t *testing.T) {
	for _, tc := range []struct {
		names []string
		want  []string
		rule  string
	}{
		{[]string{"a", "b"}, []string{"a", "b"}, ""},
		{[]string{"e\u0301", "e"}, []string{"\u00e9", "e"}, ""},
		{nil, []string{}, ""},
		{[]string{"dup", "dup"}, nil, "two labels (0 and 1)"},
		{[]string{"x", "\u00e9", "e\u0301"}, nil, "two labels (1 and 2), as"},
		{[]string{"ok", "bad "}, nil, "ends with white space"},
	} {
		got, err := NormalizeClassNames(tc.names)
		if tc.rule == "" {
			if err != nil || !slices.Equal(got, tc.want) {
				t.Errorf("%q: %q, %v", tc.names, got, err)
			}
			continue
		}
		var ne *NameError
		if !errors.As(err, &ne) || !strings.Contains(err.Error(), tc.rule) {
			t.Errorf("%q: error %v, want a *NameError about %q", tc.names, err, tc.rule)
		}
		if CheckClassNames(tc.names) == nil {
			t.Errorf("%q: CheckClassNames accepts it", tc.names)
		}
	}
}

// TestClassNamesStoredInNFC: a class learned under a decomposed name is
// stored in NFC and found again under either form; a name that breaks a
// rule is refused by LabelsFor with the model unchanged.
func TestClassNamesStoredInNFC(t *testing.T) {
	ctx := context.Background()
	m, _ := New(Config{M: 50, P: 2, K: 10, Lambdas: []float64{1}}, 4)
	labels, err := m.LabelsFor([]string{"cafe\u0301", "caf\u00e9", "tea"})
	if err != nil {
		t.Fatal(err)
	}
	if labels[0] != labels[1] || labels[0] == labels[2] {
		t.Fatalf("labels %v: the two forms of café must be one class, tea another", labels)
	}
	x, _ := clusters(1, 3, 4, []int{0}, 1)
	if _, err := m.Learn(ctx, x, labels, nil); err != nil {
		t.Fatal(err)
	}
	if got := m.Classes().Names(); !slices.Equal(got, []string{"caf\u00e9", "tea"}) {
		t.Fatalf("stored names %q, want NFC", got)
	}
	for _, q := range []string{"cafe\u0301", "caf\u00e9"} {
		if l, ok := m.Classes().LabelOf(q); !ok || l != labels[0] {
			t.Errorf("LabelOf(%q) = %d, %v", q, l, ok)
		}
	}
	if _, err := m.LabelsFor([]string{"new", "tea\u200b"}); err == nil {
		t.Fatal("tea + zero-width space accepted")
	}
	if _, ok := m.Classes().LabelOf("new"); ok || len(m.names) != 2 {
		t.Fatalf("a refused LabelsFor left names attached: %v", m.names)
	}
}

// TestLegacyClassNamesLoad: a model whose stored names break today's rules
// (written before them: a trailing space, a decomposed accent) still
// loads, and its classes are still found by those names; the decomposed
// one also by its NFC form.
func TestLegacyClassNamesLoad(t *testing.T) {
	ctx := context.Background()
	m, _ := New(Config{M: 50, P: 2, K: 10, Lambdas: []float64{1}}, 4)
	x, y := clusters(2, 6, 4, []int{0, 1}, 1)
	if _, err := m.Learn(ctx, x, y, nil); err != nil {
		t.Fatal(err)
	}
	s := m.Snapshot()
	st := s.State()
	st.Names = []string{"a ", "cafe\u0301"}
	s2, err := newSnapshot(st, s.Projection(), slices.Clone(s.g), slices.Clone(s.s), s.Samples())
	if err != nil {
		t.Fatalf("legacy names refused on load: %v", err)
	}
	old, err := s2.Model()
	if err != nil {
		t.Fatal(err)
	}
	for q, want := range map[string]int{"a ": 0, "cafe\u0301": 1, "caf\u00e9": 1} {
		if l, ok := old.Classes().LabelOf(q); !ok || l != want {
			t.Errorf("LabelOf(%q) = %d, %v, want %d", q, l, ok, want)
		}
	}
	labels, err := old.LabelsFor([]string{"a ", "caf\u00e9", "cafe\u0301"})
	if err != nil || !slices.Equal(labels, []int{0, 1, 1}) {
		t.Fatalf("LabelsFor on legacy names: %v, %v", labels, err)
	}
}

// FuzzNormalizeClassName: class names come from every outside source (a
// request, a feature file, a journal, the C API). Any string is refused
// with a *NameError carrying it, or normalised to a name that keeps every
// rule: NFC (normalising again changes nothing), valid UTF-8, 1 to
// MaxNameLen bytes, no white space at an end, no Cc, Cf, Zl or Zp
// character. It also checks the bound NormalizeClassName relies on to
// refuse a long name before normalising it: NFC never shrinks a name to
// a quarter of its bytes, so a name over 4·MaxNameLen bytes could never
// have fitted.
func FuzzNormalizeClassName(f *testing.F) {
	for _, s := range []string{"cat", "Cafe\u0301", "café", " cat", "cat ", "ca\u200bt", "a\u202eb", "a\nb", "a\u2028b",
		"\xff", "", strings.Repeat("a", MaxNameLen), strings.Repeat("a", MaxNameLen+1), strings.Repeat("e\u0301", 128),
		strings.Repeat("\u1100\u1161\u11a8", 100), "한국", "a \u0301", "\u00a0a", "日本語", "42"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if utf8.ValidString(s) {
			if n := norm.NFC.String(s); s != "" && 4*len(n) <= len(s) {
				t.Fatalf("NFC shrank %d bytes to %d (%q)", len(s), len(n), s)
			}
		}
		n, err := NormalizeClassName(s)
		if err != nil {
			var ne *NameError
			if !errors.As(err, &ne) || ne.Name != s || n != "" {
				t.Fatalf("%q refused with %v (%T), %q", s, err, err, n)
			}
			return
		}
		first, _ := utf8.DecodeRuneInString(n)
		last, _ := utf8.DecodeLastRuneInString(n)
		switch {
		case n == "" || len(n) > MaxNameLen || !utf8.ValidString(n) || !norm.NFC.IsNormalString(n):
			t.Fatalf("%q accepted as %q", s, n)
		case n != norm.NFC.String(s):
			t.Fatalf("%q accepted as %q, not its NFC", s, n)
		case unicode.IsSpace(first) || unicode.IsSpace(last):
			t.Fatalf("%q accepted as %q, with white space at an end", s, n)
		case strings.IndexFunc(n, func(r rune) bool { return unicode.In(r, unicode.Cc, unicode.Cf, unicode.Zl, unicode.Zp) }) >= 0:
			t.Fatalf("%q accepted as %q, with an invisible or control character", s, n)
		}
		if again, err := NormalizeClassName(n); err != nil || again != n {
			t.Fatalf("%q normalised to %q, which normalises to %q (%v)", s, n, again, err)
		}
	})
}
