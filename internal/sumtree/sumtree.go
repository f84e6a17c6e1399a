package sumtree

import (
	"errors"
	"fmt"
	"math/bits"
	"slices"
)

// Node is a position in the tree: Level 0 holds the leaves, node (l, j)
// the leaves [j·2ˡ, (j+1)·2ˡ).
type Node struct {
	Level, Index int
}

// Leaf returns the position of leaf i.
func Leaf(i int) Node { return Node{0, i} }

// Levels returns the level of the root of the tree of n leaves:
// ⌈log₂ n⌉ (0 for one leaf).
func Levels(n int) int {
	if n <= 1 {
		return 0
	}
	return bits.Len(uint(n - 1))
}

// Root returns the root of the tree of n leaves.
func Root(n int) Node { return Node{Levels(n), 0} }

// Parent returns the node one level up.
func (v Node) Parent() Node { return Node{v.Level + 1, v.Index / 2} }

// Left reports whether v is its parent's left child.
func (v Node) Left() bool { return v.Index%2 == 0 }

// Sibling returns the other child of v's parent.
func (v Node) Sibling() Node { return Node{v.Level, v.Index ^ 1} }

// Span returns the leaves [lo, hi) that v covers in the tree of n leaves
// (empty when v covers none).
func (v Node) Span(n int) (lo, hi int) {
	if v.Level < 0 || v.Level >= 63 || v.Index < 0 {
		return 0, 0
	}
	lo = v.Index << v.Level
	if lo >= n || lo>>v.Level != v.Index {
		return 0, 0
	}
	return lo, min(n, lo+1<<v.Level)
}

// In reports whether v is a node of the tree of n leaves: at most the
// root's level, covering at least one leaf.
func (v Node) In(n int) bool {
	lo, hi := v.Span(n)
	return v.Level <= Levels(n) && hi > lo
}

// Covering returns the node that covers exactly the leaves [lo, hi) of
// the tree of n leaves, if there is one. (A node whose right child covers
// no leaf covers what its left child does: the lowest such node is
// returned.)
func Covering(lo, hi, n int) (Node, bool) {
	if lo < 0 || hi > n || lo >= hi {
		return Node{}, false
	}
	for l := 0; l <= Levels(n); l++ {
		v := Node{l, lo >> l}
		if a, b := v.Span(n); a == lo && b == hi {
			return v, true
		}
		if a, _ := v.Span(n); a != lo {
			break
		}
	}
	return Node{}, false
}

// ErrOverlap is returned by Forest.Put for a node that covers a leaf
// another value placed in the forest already covers.
var ErrOverlap = errors.New("sumtree: a leaf counted twice")

// Forest sums values placed at nodes of the tree of n leaves, arriving in
// any order: as soon as both children of a node are present they are
// added (left, then right) into the node's value, and a node whose right
// child covers no leaf takes its left child's value as it is. The root's
// value, once every leaf is covered, is therefore the same bits whatever
// the order of Put and whatever nodes the leaves arrived pre-summed in, as
// long as each arrived value is its node's sum as the tree defines it.
type Forest[T any] struct {
	n     int
	add   func(left, right T) (T, error)
	nodes map[Node]T
}

// NewForest returns an empty forest over n leaves; add returns left +
// right (it may reuse left's memory).
func NewForest[T any](n int, add func(left, right T) (T, error)) (*Forest[T], error) {
	if n <= 0 {
		return nil, fmt.Errorf("sumtree: %d leaves", n)
	}
	return &Forest[T]{n: n, add: add, nodes: map[Node]T{}}, nil
}

// Put places x, the sum of the leaves node v covers, and adds it up with
// what the forest holds as far as the tree allows.
func (f *Forest[T]) Put(v Node, x T) error {
	if !v.In(f.n) {
		return fmt.Errorf("sumtree: node (%d, %d) is not in the tree of %d leaves", v.Level, v.Index, f.n)
	}
	lo, hi := v.Span(f.n)
	for u := range f.nodes {
		if a, b := u.Span(f.n); a < hi && lo < b {
			return fmt.Errorf("%w: node (%d, %d) and node (%d, %d) overlap", ErrOverlap, v.Level, v.Index, u.Level, u.Index)
		}
	}
	root := Root(f.n)
	for v != root {
		s := v.Sibling()
		if !s.In(f.n) { // a left child alone: its parent has its value
			v = v.Parent()
			continue
		}
		y, ok := f.nodes[s]
		if !ok {
			break
		}
		delete(f.nodes, s)
		var err error
		if v.Left() {
			x, err = f.add(x, y)
		} else {
			x, err = f.add(y, x)
		}
		if err != nil {
			return err
		}
		v = v.Parent()
	}
	f.nodes[v] = x
	return nil
}

// Root returns the sum of all the leaves; ok is false while some leaf is
// not covered.
func (f *Forest[T]) Root() (x T, ok bool) {
	x, ok = f.nodes[Root(f.n)]
	return x, ok
}

// Nodes returns the positions the forest holds values at, in the order of
// their leaves: one, the root, once every leaf is covered.
func (f *Forest[T]) Nodes() []Node {
	out := make([]Node, 0, len(f.nodes))
	for v := range f.nodes {
		out = append(out, v)
	}
	slices.SortFunc(out, func(a, b Node) int {
		la, _ := a.Span(f.n)
		lb, _ := b.Span(f.n)
		return la - lb
	})
	return out
}

// Value returns the value held at v.
func (f *Forest[T]) Value(v Node) (T, bool) {
	x, ok := f.nodes[v]
	return x, ok
}

// Sum adds the leaves xs in the tree's order (as a Forest fed leaf by leaf
// would). The first leaf's value is passed to add as left: add may reuse
// it.
func Sum[T any](xs []T, add func(left, right T) (T, error)) (T, error) {
	var zero T
	f, err := NewForest(len(xs), add)
	if err != nil {
		return zero, err
	}
	for i, x := range xs {
		if err := f.Put(Leaf(i), x); err != nil {
			return zero, err
		}
	}
	x, _ := f.Root()
	return x, nil
}
