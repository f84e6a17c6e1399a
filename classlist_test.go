package flycl

import (
	"context"
	"slices"
	"testing"
)

// TestClassList: the classes a model and its predictor report at one
// version agree (labels in class-index order, names, counts, the label of
// a name), they are copies that later naming and learning do not change,
// a label named but not learned yet has its name and no class, and
// counts a model does not know (a model from an old file) read -1. The
// truths are the labels and names given and the samples counted here.
func TestClassList(t *testing.T) {
	ctx := context.Background()
	const d = 6
	m, err := New(Config{M: 80, P: 3, K: 20}, d)
	if err != nil {
		t.Fatal(err)
	}
	x, y := clusters(3, 30, d, []int{7, 2, 7}, 0.5) // 20 of class 7, 10 of class 2
	if err := m.SetClassName(7, "seven"); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Learn(ctx, x, y, nil); err != nil {
		t.Fatal(err)
	}
	count := map[int]int{}
	for _, l := range y {
		count[l]++
	}
	labels := m.Classes().Labels() // class-index order: first seen first
	wantNames, wantCounts := []string{}, []int{}
	for _, l := range labels {
		wantNames = append(wantNames, map[int]string{7: "seven", 2: "2"}[l])
		wantCounts = append(wantCounts, count[l])
	}
	p := m.Predictor()
	before := m.Classes()
	for name, c := range map[string]ClassList{"model": before, "predictor": p.Classes()} {
		if c.Len() != 2 || !slices.Equal(c.Labels(), labels) || !slices.Equal(c.Names(), wantNames) || !slices.Equal(c.Counts(), wantCounts) {
			t.Fatalf("%s: %d classes %v names %v counts %v; want %v %v %v", name, c.Len(), c.Labels(), c.Names(), c.Counts(), labels, wantNames, wantCounts)
		}
		if l, ok := c.LabelOf("seven"); !ok || l != 7 {
			t.Errorf("%s: LabelOf(seven) = %d, %v", name, l, ok)
		}
		if l, ok := c.LabelOf("2"); !ok || l != 2 {
			t.Errorf("%s: LabelOf(2) = %d, %v", name, l, ok)
		}
		if _, ok := c.LabelOf("eight"); ok {
			t.Errorf("%s: LabelOf(eight) found a class", name)
		}
	}
	// a copy: changing what it returned, naming and learning leave it be
	before.Labels()[0], before.Names()[0], before.Counts()[0] = -5, "x", -5
	if err := m.SetClassName(2, "two"); err != nil {
		t.Fatal(err)
	}
	if err := m.SetClassName(9, "nine"); err != nil { // named, not learned
		t.Fatal(err)
	}
	if !slices.Equal(before.Labels(), labels) || !slices.Equal(before.Names(), wantNames) || !slices.Equal(before.Counts(), wantCounts) {
		t.Fatalf("the list changed: %v %v %v", before.Labels(), before.Names(), before.Counts())
	}
	after := m.Classes()
	if after.Name(2) != "two" || after.Name(9) != "nine" || after.Name(4) != "4" || after.Len() != 2 {
		t.Errorf("after naming: names %q %q %q, %d classes", after.Name(2), after.Name(9), after.Name(4), after.Len())
	}
	if _, ok := after.LabelOf("nine"); ok {
		t.Errorf("LabelOf finds a class not learned yet")
	}
	// counts unknown (a model restored from a file without them)
	st := m.Snapshot().State()
	st.Counts = nil
	old, err := newSnapshot(st, m.w, m.acc.PackedLower(), slices.Clone(m.acc.S()), m.acc.Samples())
	if err != nil {
		t.Fatal(err)
	}
	if c := old.Predictor().Classes().Counts(); !slices.Equal(c, []int{-1, -1}) {
		t.Errorf("unknown counts read %v, want [-1 -1]", c)
	}
	var zero ClassList
	if zero.Len() != 0 || len(zero.Names()) != 0 || zero.Name(3) != "3" {
		t.Errorf("zero ClassList: %d classes, names %v, Name(3) %q", zero.Len(), zero.Names(), zero.Name(3))
	}
}
