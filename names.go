package flycl

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"unicode"
	"unicode/utf8"

	"github.com/flycl/flycl/internal/classindex"
	"golang.org/x/text/unicode/norm"
)

// Class names. A model's classes are integer labels; each may also carry a
// name (a folder name, a user's label such as "forklift"). A label without
// a name is named by its decimal number, and a name that is a decimal
// number must be its own label's, so names never collide. Names are
// compared and stored in Unicode NFC (NormalizeClassName): a name learned
// as "e" plus a combining accent is stored as "é", and finds that class
// again in either form. Names stored by an older version in another form,
// or breaking a rule added since, still load and still find their class.

// MaxNameLen bounds the length of a class name in bytes.
const MaxNameLen = 256

// Classes returns the model's classes: labels learned so far in
// class-index order, their names and sample counts (a copy).
func (m *Model) Classes() ClassList {
	return ClassList{labels: slices.Clone(m.labels), counts: slices.Clone(m.counts), names: maps.Clone(m.names)}
}

// className returns the name of label (its decimal number when it has none).
func (m *Model) className(label int) string {
	if n, ok := m.names[label]; ok {
		return n
	}
	return strconv.Itoa(label)
}

// NameError reports a class name that breaks one of the rules of
// NormalizeClassName, or two labels given one name (CheckClassNames).
type NameError struct {
	Name string // the name as given
	Rule string // the rule it breaks, in words ("ends with white space")
}

func (e *NameError) Error() string { return fmt.Sprintf("flycl: class name %q %s", e.Name, e.Rule) }

// NormalizeClassName returns name in Unicode normalization form C (NFC),
// the form a model stores and compares names in, or a *NameError when it
// cannot name a class. The rules make names that look alike be alike:
//
//   - not empty, valid UTF-8, at most MaxNameLen bytes (in NFC);
//   - no white space at the start or the end ("a " and "a" would be two
//     classes that print the same);
//   - no control characters (Unicode category Cc: newlines, tabs, NUL),
//     no format characters (Cf: zero-width space U+200B, joiners, the
//     right-to-left override U+202E and other direction marks, the soft
//     hyphen) and no line or paragraph separators (U+2028, U+2029):
//     characters that are invisible or change how the rest is shown.
//
// Names that differ only in their Unicode composition ("é" as one code
// point or as "e" plus a combining accent) are the same name.
func NormalizeClassName(name string) (string, error) {
	fail := func(format string, a ...any) (string, error) {
		return "", &NameError{Name: name, Rule: fmt.Sprintf(format, a...)}
	}
	if name == "" {
		return fail("is empty")
	}
	if len(name) > 4*MaxNameLen {
		// bound the work of normalising; NFC never shrinks a name 4-fold
		return fail("has %d bytes, at most %d allowed", len(name), MaxNameLen)
	}
	if !utf8.ValidString(name) {
		return fail("is not valid UTF-8")
	}
	n := norm.NFC.String(name)
	if len(n) > MaxNameLen {
		return fail("has %d bytes, at most %d allowed", len(n), MaxNameLen)
	}
	if r, _ := utf8.DecodeRuneInString(n); unicode.IsSpace(r) {
		return fail("starts with white space (U+%04X): names that print alike must be alike", r)
	}
	if r, _ := utf8.DecodeLastRuneInString(n); unicode.IsSpace(r) {
		return fail("ends with white space (U+%04X): names that print alike must be alike", r)
	}
	for _, r := range n {
		switch {
		case unicode.Is(unicode.Cc, r):
			return fail("contains the control character U+%04X", r)
		case unicode.Is(unicode.Cf, r):
			return fail("contains the invisible format character U+%04X (zero-width characters and direction marks are refused: names that print alike must be alike)", r)
		case unicode.In(r, unicode.Zl, unicode.Zp):
			return fail("contains the line or paragraph separator U+%04X", r)
		}
	}
	return n, nil
}

// CheckClassName reports whether name can name a class: nil, or the
// *NameError of NormalizeClassName.
func CheckClassName(name string) error {
	_, err := NormalizeClassName(name)
	return err
}

// NormalizeClassNames normalises the class names of distinct labels
// (a feature file's class_names, the names of a statistics file's
// classes): each as NormalizeClassName, and no two the same once
// normalised, which would merge two labels into one class. It returns
// the names in NFC, in a new slice.
func NormalizeClassNames(names []string) ([]string, error) {
	out := make([]string, len(names))
	first := make(map[string]int, len(names))
	for i, n := range names {
		v, err := NormalizeClassName(n)
		if err != nil {
			return nil, err
		}
		if j, ok := first[v]; ok {
			rule := fmt.Sprintf("is given to two labels (%d and %d): they would become one class", j, i)
			if names[j] != n {
				rule = fmt.Sprintf("is given to two labels (%d and %d), as %q and %q, the same name in Unicode NFC: they would become one class", j, i, names[j], n)
			}
			return nil, &NameError{Name: n, Rule: rule}
		}
		first[v], out[i] = i, v
	}
	return out, nil
}

// CheckClassNames reports whether names can name distinct labels (see
// NormalizeClassNames).
func CheckClassNames(names []string) error {
	_, err := NormalizeClassNames(names)
	return err
}

// SetClassName names label (learned already, or to be learned next) with
// name in Unicode NFC (NormalizeClassName). A name used by another label,
// or a decimal number other than the label's own, is an error.
func (m *Model) SetClassName(label int, name string) error {
	name, err := NormalizeClassName(name)
	if err != nil {
		return err
	}
	if label < 0 {
		return fmt.Errorf("flycl: negative label %d", label)
	}
	if v, err := strconv.Atoi(name); err == nil && strconv.Itoa(v) == name {
		if v != label {
			return &NameError{Name: name, Rule: fmt.Sprintf("is a number other than its label %d", label)}
		}
		delete(m.names, label)
		return nil
	}
	for l, n := range m.names {
		if (n == name || norm.NFC.String(n) == name) && l != label {
			return fmt.Errorf("flycl: class name %q already names label %d", name, l)
		}
	}
	if m.names == nil {
		m.names = map[int]string{}
	}
	m.names[label] = name
	return nil
}

// LabelsFor maps class names to labels: a known name gives its label
// (compared as ClassList.LabelOf does: exactly, else in Unicode NFC), a decimal
// number gives that label, and any other new name gets the next free
// label (one more than the largest label known or named) and is attached
// to it in NFC, so that learning with the returned labels adds the class
// under that name. A new name that breaks a rule of NormalizeClassName is
// a *NameError.
func (m *Model) LabelsFor(names []string) (_ []int, err error) {
	// On error no name stays attached: undo the names set so far.
	old := maps.Clone(m.names)
	defer func() {
		if err != nil {
			m.names = old
		}
	}()
	// byName: exact names; byNFC: the same in NFC (an exact match wins,
	// for names stored in another form by an older version)
	byName, byNFC := map[string]int{}, map[string]int{}
	next := 0
	add := func(n string, l int) {
		byName[n] = l
		if utf8.ValidString(n) {
			if _, ok := byNFC[norm.NFC.String(n)]; !ok {
				byNFC[norm.NFC.String(n)] = l
			}
		}
	}
	for _, l := range slices.Sorted(maps.Keys(m.names)) {
		add(m.names[l], l)
		next = max(next, l+1)
	}
	for _, l := range m.labels {
		add(m.className(l), l)
		next = max(next, l+1)
	}
	out := make([]int, len(names))
	for i, n := range names {
		if l, ok := byName[n]; ok {
			out[i] = l
			continue
		}
		v, err := NormalizeClassName(n)
		if err != nil {
			return nil, err
		}
		l, ok := byNFC[v]
		if !ok {
			l = next
			if num, err := strconv.Atoi(v); err == nil && strconv.Itoa(num) == v && num >= 0 {
				if other, ok := m.names[num]; ok {
					return nil, &NameError{Name: v, Rule: fmt.Sprintf("is a number, but label %d is named %q", num, other)}
				}
				l = num
			} else if err := m.SetClassName(l, v); err != nil {
				return nil, err
			}
			next = max(next, l+1)
		}
		byName[n], byNFC[v] = l, l
		out[i] = l
	}
	return out, nil
}

// classIndices maps labels to class indices, registering unseen labels
// (in ascending order) and returning them.
func (m *Model) classIndices(labels []int) (idx []int, fresh []int) {
	return classindex.Register(&m.labels, m.index, labels)
}

// addCounts adds the samples of a learned step to the counts: k[i]
// samples to class index idx[i], or one each when k is nil (a count that
// is unknown, -1, stays unknown).
func (m *Model) addCounts(idx, k []int) {
	for len(m.counts) < len(m.labels) {
		m.counts = append(m.counts, 0)
	}
	for i, c := range idx {
		if m.counts[c] >= 0 {
			if k == nil {
				m.counts[c]++
			} else {
				m.counts[c] += k[i]
			}
		}
	}
}
