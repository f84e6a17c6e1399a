package flycl

import (
	"slices"
	"strconv"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// ClassList is the classes of a model or a predictor at one version:
// their labels in class-index order, their names and how many samples
// each learned. It is a copy: later learning and naming do not change it,
// and its methods return copies. The zero value is a list of no classes.
type ClassList struct {
	labels []int
	counts []int          // per class index, -1: unknown; nil: all unknown
	names  map[int]string // labels with a name other than their number (learned or to be learned next)
}

// Len returns the number of classes.
func (c ClassList) Len() int { return len(c.labels) }

// Labels returns the labels in class-index order.
func (c ClassList) Labels() []int { return slices.Clone(c.labels) }

// Name returns the name of label (its decimal number when it has none).
// A label that is named but not learned yet has its name too.
func (c ClassList) Name(label int) string {
	if n, ok := c.names[label]; ok {
		return n
	}
	return strconv.Itoa(label)
}

// Names returns the class names in Labels() order.
func (c ClassList) Names() []string {
	out := make([]string, len(c.labels))
	for i, l := range c.labels {
		out[i] = c.Name(l)
	}
	return out
}

// Counts returns the number of samples learned per class, in Labels()
// order (-1 where unknown: a model restored from an old file).
func (c ClassList) Counts() []int {
	out := make([]int, len(c.labels))
	for i := range out {
		if i < len(c.counts) {
			out[i] = c.counts[i]
		} else {
			out[i] = -1
		}
	}
	return out
}

// LabelOf returns the label of a learned class by name: the class named
// exactly name, else the one whose name is the same in Unicode NFC.
func (c ClassList) LabelOf(name string) (int, bool) {
	for _, l := range c.labels {
		if c.Name(l) == name {
			return l, true
		}
	}
	if !utf8.ValidString(name) {
		return 0, false
	}
	v := norm.NFC.String(name)
	for _, l := range c.labels {
		if norm.NFC.String(c.Name(l)) == v {
			return l, true
		}
	}
	return 0, false
}
