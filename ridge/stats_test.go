package ridge

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// shardStats splits the samples into nshards contiguous shards, computes
// each shard's statistics, and merges them in the order perm.
func shardStats(t *testing.T, h []float32, n, m int, labels []int, nshards int, perm []int) *Stats {
	t.Helper()
	parts := make([]*Stats, nshards)
	for i := range parts {
		lo, hi := i*n/nshards, (i+1)*n/nshards
		parts[i], _ = NewStats(m)
		if err := parts[i].Add(h[lo*m:hi*m], hi-lo, labels[lo:hi]); err != nil {
			t.Fatal(err)
		}
	}
	total, _ := NewStats(m)
	for _, i := range perm {
		if err := total.Merge(parts[i]); err != nil {
			t.Fatal(err)
		}
	}
	return total
}

// TestStatsExactAcrossShards: statistics of 1, 2 and 7 shards merged in
// shuffled orders agree with a brute-force float64 G within the rounding
// bound of float64 sums (|ΔG_ij| ≤ γ_n Σ_k |h_ki h_kj|, γ_n = n·2⁻⁵³/(1−n·2⁻⁵³):
// every product of float32 codes is exact in float64, only the n additions
// round); S and the counts are exact; rounded to float32 (what a model
// keeps) the merged G's agree bit for bit, and so do their GCV argmins.
func TestStatsExactAcrossShards(t *testing.T) {
	const n, m, nc = 230, 70, 6
	h, labels := classData(11, n, m, nc)
	sparseCodes(h, n, m, 25)
	// brute force
	g := make([]float64, m*m)
	ab := make([]float64, m*m)
	for k := 0; k < n; k++ {
		row := h[k*m : (k+1)*m]
		for i := 0; i < m; i++ {
			for j := 0; j <= i; j++ {
				p := float64(row[i]) * float64(row[j])
				g[i*m+j] += p
				ab[i*m+j] += math.Abs(p)
			}
		}
	}
	gamma := float64(n) * u64 / (1 - float64(n)*u64)
	grid := []float64{1, 10, 100, 1e3, 1e4, 1e5}
	var ref32 []float32
	var refBest int
	r := rand.New(rand.NewPCG(5, 5))
	for _, ns := range []int{1, 2, 7} {
		for trial := 0; trial < 3; trial++ {
			perm := r.Perm(ns)
			t.Run(fmt.Sprintf("shards%d_%v", ns, perm), func(t *testing.T) {
				st := shardStats(t, h, n, m, labels, ns, perm)
				if st.N != n {
					t.Fatalf("n = %d, want %d", st.N, n)
				}
				g32 := make([]float32, len(st.G))
				for i := 0; i < m; i++ {
					for j := 0; j <= i; j++ {
						v := st.G[i*(i+1)/2+j]
						if d := math.Abs(v - g[i*m+j]); d > gamma*ab[i*m+j] {
							t.Fatalf("G[%d][%d] = %.17g, brute force %.17g (error %g > %g)", i, j, v, g[i*m+j], d, gamma*ab[i*m+j])
						}
						g32[i*(i+1)/2+j] = float32(v)
					}
				}
				// S: sums of float32 values in float64, exact at these sizes
				for c, l := range st.Labels {
					for j := 0; j < m; j++ {
						var want float64
						cnt := 0
						for k := 0; k < n; k++ {
							if labels[k] == l {
								want += float64(h[k*m+j])
								if j == 0 {
									cnt++
								}
							}
						}
						if st.S[c*m+j] != want {
							t.Fatalf("S[%d][%d] = %g, want %g", l, j, st.S[c*m+j], want)
						}
						if j == 0 && st.Counts[c] != cnt {
							t.Fatalf("count of %d = %d, want %d", l, st.Counts[c], cnt)
						}
					}
				}
				scores, err := st.GCV(context.Background(), grid)
				if err != nil {
					t.Fatal(err)
				}
				if ref32 == nil {
					ref32, refBest = g32, BestLambda(scores)
					return
				}
				for i := range g32 {
					if g32[i] != ref32[i] {
						t.Fatalf("float32 G value %d: %g here, %g with one shard", i, g32[i], ref32[i])
					}
				}
				if b := BestLambda(scores); b != refBest {
					t.Fatalf("λ = %g, one shard chose %g", grid[b], grid[refBest])
				}
			})
		}
	}
}

// TestAddStatsMatchesAdd: adding a task's statistics to an accumulator
// gives the G and S of adding its codes directly, within float32
// accumulation error (γ_n of float32, relative to Σ|h h|).
func TestAddStatsMatchesAdd(t *testing.T) {
	const m, nc = 50, 4
	direct, _ := NewAccumulator(m)
	viaStats, _ := NewAccumulator(m)
	for task, n := range []int{40, 90} {
		h, labels := classData(uint64(task+20), n, m, nc)
		for i := range labels {
			labels[i] += 3 * task // new classes per task, some shared
		}
		if err := direct.Add(h, n, labels); err != nil {
			t.Fatal(err)
		}
		st, _ := NewStats(m)
		if err := st.Add(h, n, labels); err != nil {
			t.Fatal(err)
		}
		idx := make([]int, len(st.Labels))
		copy(idx, st.Labels) // labels are their own class indices here
		if err := viaStats.AddStats(st, idx); err != nil {
			t.Fatal(err)
		}
	}
	if direct.Classes() != viaStats.Classes() || direct.Samples() != viaStats.Samples() {
		t.Fatalf("classes/samples %d/%d vs %d/%d", direct.Classes(), direct.Samples(), viaStats.Classes(), viaStats.Samples())
	}
	gamma := 130 * float64(u32) * 1.01
	for i := 0; i < m; i++ {
		for j := 0; j <= i; j++ {
			a, b := float64(direct.G(i, j)), float64(viaStats.G(i, j))
			scale := math.Sqrt(float64(direct.G(i, i)) * float64(direct.G(j, j)))
			if math.Abs(a-b) > gamma*scale {
				t.Fatalf("G[%d][%d]: Add %g, AddStats %g", i, j, a, b)
			}
		}
	}
	for i, v := range direct.S() {
		if d := math.Abs(float64(v - viaStats.S()[i])); d > 1e-4*math.Abs(float64(v))+1e-3 {
			t.Fatalf("S value %d: %g vs %g", i, v, viaStats.S()[i])
		}
	}
}

// TestAddStatsBeyondFloat32: statistics whose sum float32 cannot hold (a
// merged file may carry any finite float64; here an off-diagonal of 1e39
// next to small diagonals, and an S value of 1e39) are refused and leave
// the accumulator exactly as it was; SubStats undoes AddStats.
func TestAddStatsBeyondFloat32(t *testing.T) {
	const m = 4
	a, _ := NewAccumulator(m)
	h := []float32{1, 2, 0, 0, 0, 1, 3, 0}
	if err := a.Add(h, 2, []int{0, 1}); err != nil {
		t.Fatal(err)
	}
	before := a.PackedLower()
	sBefore := append([]float32(nil), a.S()...)
	for _, tc := range []struct {
		name string
		set  func(s *Stats)
	}{
		{"G off-diagonal", func(s *Stats) { s.G[1] = 1e39 }},
		{"G diagonal", func(s *Stats) { s.G[2] = 1e39 }},
		{"S", func(s *Stats) { s.S[1] = 1e39 }},
	} {
		s, _ := NewStats(m)
		if err := s.Add([]float32{1, 1, 1, 1}, 1, []int{7}); err != nil {
			t.Fatal(err)
		}
		tc.set(s)
		if err := a.AddStats(s, []int{1}); err == nil || !strings.Contains(err.Error(), "beyond float32") {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !slices.Equal(a.PackedLower(), before) || !slices.Equal(a.S(), sBefore) || a.Classes() != 2 || a.Samples() != 2 {
			t.Fatalf("%s: a refused AddStats changed the accumulator", tc.name)
		}
	}
	s, _ := NewStats(m)
	s.Add([]float32{1, 1, 1, 1}, 1, []int{7})
	if err := a.AddStats(s, []int{2}); err != nil {
		t.Fatal(err)
	}
	if err := a.SubStats(s, []int{2}); err != nil {
		t.Fatal(err)
	}
	// Small integers: every sum is exact in float32.
	if !slices.Equal(a.PackedLower(), before) || !slices.Equal(a.S()[:2*m], sBefore) || a.Samples() != 2 {
		t.Fatalf("SubStats did not undo AddStats: G %v (was %v)", a.PackedLower(), before)
	}
}
