package flycl

import (
	"fmt"
	"maps"
	"strconv"
	"unicode"
	"unicode/utf8"
)

// Class names. A model's classes are integer labels; each may also carry a
// name (a folder name, a user's label such as "forklift"). A label without
// a name is named by its decimal number, and a name that is a decimal
// number must be its own label's, so names never collide.

// MaxNameLen bounds the length of a class name in bytes.
const MaxNameLen = 256

// ClassName returns the name of label (its decimal number when it has none).
func (m *Model) ClassName(label int) string {
	if n, ok := m.names[label]; ok {
		return n
	}
	return strconv.Itoa(label)
}

// ClassNames returns the class names in Classes() order.
func (m *Model) ClassNames() []string {
	out := make([]string, len(m.labels))
	for i, l := range m.labels {
		out[i] = m.ClassName(l)
	}
	return out
}

// LabelOf returns the label of a learned class by name.
func (m *Model) LabelOf(name string) (int, bool) {
	for _, l := range m.labels {
		if m.ClassName(l) == name {
			return l, true
		}
	}
	return 0, false
}

// CheckClassName reports whether name can name a class: non-empty, at most
// MaxNameLen bytes of UTF-8 without control characters.
func CheckClassName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("flycl: empty class name")
	case len(name) > MaxNameLen:
		return fmt.Errorf("flycl: class name of %d bytes, at most %d allowed", len(name), MaxNameLen)
	case !utf8.ValidString(name):
		return fmt.Errorf("flycl: class name %q is not valid UTF-8", name)
	}
	for _, r := range name {
		if unicode.IsControl(r) {
			return fmt.Errorf("flycl: class name %q contains a control character", name)
		}
	}
	return nil
}

// SetClassName names label (learned already, or to be learned next). A
// name used by another label, or a decimal number other than the label's
// own, is an error.
func (m *Model) SetClassName(label int, name string) error {
	if err := CheckClassName(name); err != nil {
		return err
	}
	if label < 0 {
		return fmt.Errorf("flycl: negative label %d", label)
	}
	if v, err := strconv.Atoi(name); err == nil && strconv.Itoa(v) == name {
		if v != label {
			return fmt.Errorf("flycl: class name %q is a number other than its label %d", name, label)
		}
		delete(m.names, label)
		return nil
	}
	for l, n := range m.names {
		if n == name && l != label {
			return fmt.Errorf("flycl: class name %q already names label %d", name, l)
		}
	}
	if m.names == nil {
		m.names = map[int]string{}
	}
	m.names[label] = name
	return nil
}

// LabelsFor maps class names to labels: a known name gives its label, a
// decimal number gives that label, and any other new name gets the next
// free label (one more than the largest label known or named) and is
// attached to it, so that learning with the returned labels adds the
// class under that name.
func (m *Model) LabelsFor(names []string) (_ []int, err error) {
	// On error no name stays attached: undo the names set so far.
	old := maps.Clone(m.names)
	defer func() {
		if err != nil {
			m.names = old
		}
	}()
	byName := map[string]int{}
	next := 0
	for l, n := range m.names {
		byName[n] = l
		next = max(next, l+1)
	}
	for _, l := range m.labels {
		byName[m.ClassName(l)] = l
		next = max(next, l+1)
	}
	out := make([]int, len(names))
	for i, n := range names {
		if l, ok := byName[n]; ok {
			out[i] = l
			continue
		}
		if err := CheckClassName(n); err != nil {
			return nil, err
		}
		l := next
		if v, err := strconv.Atoi(n); err == nil && strconv.Itoa(v) == n && v >= 0 {
			if other, ok := m.names[v]; ok {
				return nil, fmt.Errorf("flycl: class name %q is a number, but label %d is named %q", n, v, other)
			}
			l = v
		} else if err := m.SetClassName(l, n); err != nil {
			return nil, err
		}
		byName[n] = l
		next = max(next, l+1)
		out[i] = l
	}
	return out, nil
}
