package sumtree

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// ref is the tree's sum written out from its definition, recursively:
// node (l, j) is leaf j at level 0, else its left child plus its right
// child, or its left child alone when the right one covers no leaf.
func ref(xs []float64, v Node) float64 {
	if v.Level == 0 {
		return xs[v.Index]
	}
	l, r := Node{v.Level - 1, 2 * v.Index}, Node{v.Level - 1, 2*v.Index + 1}
	if r.Index<<r.Level >= len(xs) {
		return ref(xs, l)
	}
	return ref(xs, l) + ref(xs, r)
}

func addF(a, b float64) (float64, error) { return a + b, nil }

// values of very different magnitudes, so that the order of float64
// additions shows in the last bits.
func values(rng *rand.Rand, n int) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = rng.NormFloat64() * math.Pow(10, float64(rng.IntN(12)-6))
	}
	return xs
}

func TestShape(t *testing.T) {
	for _, c := range []struct{ n, levels int }{{1, 0}, {2, 1}, {3, 2}, {4, 2}, {5, 3}, {8, 3}, {9, 4}, {1000, 10}} {
		if got := Levels(c.n); got != c.levels {
			t.Errorf("Levels(%d) = %d, want %d", c.n, got, c.levels)
		}
		if lo, hi := Root(c.n).Span(c.n); lo != 0 || hi != c.n {
			t.Errorf("root of %d leaves spans [%d,%d)", c.n, lo, hi)
		}
	}
	// every node of the trees up to 40 leaves: its span is the leaves
	// whose ancestor it is (brute force), and Covering finds the lowest
	// node of each span.
	for n := 1; n <= 40; n++ {
		for l := 0; l <= Levels(n)+1; l++ {
			for j := 0; j <= n; j++ {
				v := Node{l, j}
				lo, hi := -1, -1
				for i := 0; i < n; i++ {
					u := Leaf(i)
					for u.Level < l {
						u = u.Parent()
					}
					if u == v {
						if lo < 0 {
							lo = i
						}
						hi = i + 1
					}
				}
				in := lo >= 0 && l <= Levels(n)
				if v.In(n) != in {
					t.Fatalf("n=%d node %v: In = %v, want %v", n, v, v.In(n), in)
				}
				if !in {
					continue
				}
				if a, b := v.Span(n); a != lo || b != hi {
					t.Fatalf("n=%d node %v spans [%d,%d), want [%d,%d)", n, v, a, b, lo, hi)
				}
				c, ok := Covering(lo, hi, n)
				if !ok || c.Level > l {
					t.Fatalf("n=%d: Covering(%d,%d) = %v, %v; node %v covers it", n, lo, hi, c, ok, v)
				}
				if a, b := c.Span(n); a != lo || b != hi {
					t.Fatalf("n=%d: Covering(%d,%d) = %v spans [%d,%d)", n, lo, hi, c, a, b)
				}
			}
		}
		if n >= 3 {
			if _, ok := Covering(1, 3, n); ok {
				t.Errorf("n=%d: leaves [1,3) are no node's", n)
			}
		}
	}
}

// TestForestAnyOrder: leaves, or nodes summed beforehand, put into a
// forest in random orders give bit for bit the tree's sum written out
// from its definition; adding the same values from left to right does
// not (so the values do show the order of additions).
func TestForestAnyOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	differs := 0
	for n := 1; n <= 40; n++ {
		xs := values(rng, n)
		want := ref(xs, Root(n))
		seq := 0.0
		for _, x := range xs {
			seq += x
		}
		if seq != want {
			differs++
		}
		for trial := 0; trial < 20; trial++ {
			// a random cut of the leaves into tree nodes: walk from the
			// left, each time taking a random node that starts there.
			type part struct {
				v Node
				x float64
			}
			var parts []part
			for lo := 0; lo < n; {
				var cands []Node
				for l := 0; l <= Levels(n); l++ {
					v := Node{l, lo >> l}
					if a, _ := v.Span(n); a == lo {
						cands = append(cands, v)
					} else {
						break
					}
				}
				v := cands[rng.IntN(len(cands))]
				parts = append(parts, part{v, ref(xs, v)})
				_, lo = v.Span(n)
			}
			rng.Shuffle(len(parts), func(i, j int) { parts[i], parts[j] = parts[j], parts[i] })
			f, err := NewForest(n, addF)
			if err != nil {
				t.Fatal(err)
			}
			for i, p := range parts {
				if _, ok := f.Root(); ok {
					t.Fatalf("n=%d: root complete after %d of %d parts", n, i, len(parts))
				}
				if err := f.Put(p.v, p.x); err != nil {
					t.Fatal(err)
				}
			}
			got, ok := f.Root()
			if !ok || math.Float64bits(got) != math.Float64bits(want) {
				t.Fatalf("n=%d, %d parts in random order: %v (complete %v), want %v", n, len(parts), got, ok, want)
			}
			if nodes := f.Nodes(); len(nodes) != 1 || nodes[0] != Root(n) {
				t.Fatalf("n=%d: forest holds %v after every leaf", n, nodes)
			}
		}
		if got, err := Sum(xs, addF); err != nil || got != want {
			t.Fatalf("n=%d: Sum = %v, %v; want %v", n, got, err, want)
		}
	}
	if differs == 0 {
		t.Fatal("the left-to-right sums equal the tree's for every n: the values do not test the order")
	}
}

func TestForestErrors(t *testing.T) {
	f, err := NewForest(5, addF)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Put(Node{1, 0}, 1); err != nil {
		t.Fatal(err)
	}
	for _, v := range []Node{{0, 1}, {1, 0}, {2, 0}} {
		if err := f.Put(v, 1); !errors.Is(err, ErrOverlap) {
			t.Errorf("put %v over node (1, 0): %v, want ErrOverlap", v, err)
		}
	}
	for _, v := range []Node{{0, 5}, {4, 0}, {2, 2}, {-1, 0}, {0, -1}} {
		if err := f.Put(v, 1); err == nil || errors.Is(err, ErrOverlap) {
			t.Errorf("put %v into the tree of 5 leaves: %v, want an error naming the node", v, err)
		}
	}
	if _, err := NewForest(0, addF); err == nil {
		t.Error("a forest of no leaves was made")
	}
	fail := errors.New("add failed")
	f, _ = NewForest(2, func(a, b float64) (float64, error) { return 0, fail })
	f.Put(Leaf(1), 1)
	if err := f.Put(Leaf(0), 1); !errors.Is(err, fail) {
		t.Errorf("add's error: %v", err)
	}
}
