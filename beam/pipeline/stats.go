package pipeline

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/flycl/flycl/linalg"
	"github.com/flycl/flycl/ridge"
)

// Partial is one piece of the training statistics of a task, the unit the
// pipeline shuffles and sums. A G piece (Block >= 0) holds rows [Lo,Hi) of
// the upper triangle of G = Σ hᵀh, packed row by row (row i has the m-i
// values G[i][i..m)); the S piece (Block == SBlock) holds S = Σ hᵀy, one
// row of m per class in Classes (ascending labels), and the per-class
// sample counts. Every piece also carries the number of samples it sums
// and two checksums of their ids, so the final step can prove that each
// sample was counted exactly once in every piece (no bundle lost, none
// counted twice).
//
// All sums are float64: products of float32 codes are exact in float64,
// so the only rounding is in the additions, about 1e-16 relative per
// addition instead of float32's 6e-8, and the result does not depend on
// how the runner splits and orders bundles beyond that.
type Partial struct {
	Block   int
	M       int
	Lo, Hi  int
	G       []float64
	Classes []int
	Counts  []int64
	S       []float64
	N       int64
	IDSum   uint64 // Σ id (mod 2^64)
	IDSq    uint64 // Σ id² (mod 2^64)
}

// SBlock is the Block number of the S piece.
const SBlock = -1

// packedLen is the number of values of rows [lo,hi) of an m×m upper triangle.
func packedLen(m, lo, hi int) int {
	// Σ_{i=lo}^{hi-1} (m-i)
	return (hi-lo)*m - (hi*(hi-1)/2 - lo*(lo-1)/2)
}

// Merge adds q into p (same piece of the same statistics).
func (p *Partial) Merge(q *Partial) error {
	if p.Block != q.Block || p.M != q.M || p.Lo != q.Lo || p.Hi != q.Hi || len(p.G) != len(q.G) {
		return fmt.Errorf("merge statistics pieces: block %d m=%d rows [%d,%d) with block %d m=%d rows [%d,%d)",
			p.Block, p.M, p.Lo, p.Hi, q.Block, q.M, q.Lo, q.Hi)
	}
	for i, v := range q.G {
		p.G[i] += v
	}
	if p.Block == SBlock {
		if err := p.mergeS(q); err != nil {
			return err
		}
	}
	p.N += q.N
	p.IDSum += q.IDSum
	p.IDSq += q.IDSq
	return nil
}

func (p *Partial) mergeS(q *Partial) error {
	m := p.M
	if len(q.S) != len(q.Classes)*m || len(q.Counts) != len(q.Classes) {
		return fmt.Errorf("merge statistics: S piece has %d values and %d counts for %d classes of m=%d", len(q.S), len(q.Counts), len(q.Classes), m)
	}
	classes := slices.Clone(p.Classes)
	classes = append(classes, q.Classes...)
	slices.Sort(classes)
	classes = slices.Compact(classes)
	if len(classes) == len(p.Classes) {
		for qi, c := range q.Classes {
			pi, _ := slices.BinarySearch(p.Classes, c)
			addTo(p.S[pi*m:(pi+1)*m], q.S[qi*m:(qi+1)*m])
			p.Counts[pi] += q.Counts[qi]
		}
		return nil
	}
	s := make([]float64, len(classes)*m)
	counts := make([]int64, len(classes))
	for _, src := range []*Partial{p, q} {
		for si, c := range src.Classes {
			i, _ := slices.BinarySearch(classes, c)
			addTo(s[i*m:(i+1)*m], src.S[si*m:(si+1)*m])
			counts[i] += src.Counts[si]
		}
	}
	p.Classes, p.S, p.Counts = classes, s, counts
	return nil
}

func addTo(dst, src []float64) {
	for i, v := range src {
		dst[i] += v
	}
}

// Accumulator sums the codes of one bundle in float64: G (m×m, upper
// triangle, one BLAS syrk per batch) and S. It is reused across bundles.
type Accumulator struct {
	m      int
	g      []float64
	h64    []float64
	s      map[int][]float64
	counts map[int]int64
	n      int64
	idSum  uint64
	idSq   uint64
}

// NewAccumulator returns empty float64 statistics for m-dimensional codes.
func NewAccumulator(m int) *Accumulator {
	return &Accumulator{m: m, g: make([]float64, m*m), s: map[int][]float64{}, counts: map[int]int64{}}
}

// Reset empties the statistics, keeping the memory.
func (a *Accumulator) Reset() {
	clear(a.g)
	clear(a.s)
	clear(a.counts)
	a.n, a.idSum, a.idSq = 0, 0, 0
}

// Samples returns the number of samples added since the last Reset.
func (a *Accumulator) Samples() int64 { return a.n }

// Add adds the n×m codes h of the samples with the given labels and ids.
func (a *Accumulator) Add(h []float32, labels []int, ids []int64) error {
	n, m := len(labels), a.m
	if len(h) != n*m || len(ids) != n {
		return fmt.Errorf("accumulate: %d values, %d labels and %d ids, want n×%d, n, n", len(h), len(labels), len(ids), m)
	}
	if n == 0 {
		return nil
	}
	if cap(a.h64) < n*m {
		a.h64 = make([]float64, n*m)
	}
	h64 := a.h64[:n*m]
	for i, v := range h {
		h64[i] = float64(v)
	}
	linalg.Dsyrk(true, m, n, 1, h64, m, 1, a.g, m)
	for i, l := range labels {
		row, ok := a.s[l]
		if !ok {
			row = make([]float64, m)
			a.s[l] = row
		}
		addTo(row, h64[i*m:(i+1)*m])
		a.counts[l]++
		id := uint64(ids[i])
		a.idSum += id
		a.idSq += id * id
	}
	a.n += int64(n)
	return nil
}

// Pieces cuts the statistics into the S piece and G pieces of blockRows
// rows each (nothing if no sample was added).
func (a *Accumulator) Pieces(blockRows int) []*Partial {
	if a.n == 0 {
		return nil
	}
	m := a.m
	classes := make([]int, 0, len(a.s))
	for c := range a.s {
		classes = append(classes, c)
	}
	slices.Sort(classes)
	sp := &Partial{Block: SBlock, M: m, Classes: classes, Counts: make([]int64, len(classes)), S: make([]float64, len(classes)*m)}
	for i, c := range classes {
		copy(sp.S[i*m:], a.s[c])
		sp.Counts[i] = a.counts[c]
	}
	out := []*Partial{sp}
	for b, lo := 0, 0; lo < m; b, lo = b+1, lo+blockRows {
		hi := min(m, lo+blockRows)
		p := &Partial{Block: b, M: m, Lo: lo, Hi: hi, G: make([]float64, 0, packedLen(m, lo, hi))}
		for i := lo; i < hi; i++ {
			p.G = append(p.G, a.g[i*m+i:(i+1)*m]...)
		}
		out = append(out, p)
	}
	for _, p := range out {
		p.N, p.IDSum, p.IDSq = a.n, a.idSum, a.idSq
	}
	return out
}

// IDChecksums returns the sample count and id checksums of ids, what every
// piece of the complete statistics must carry.
func IDChecksums(ids []int64) (n int64, sum, sq uint64) {
	for _, id := range ids {
		u := uint64(id)
		sum += u
		sq += u * u
	}
	return int64(len(ids)), sum, sq
}

// Totals is the complete statistics of a task assembled from its pieces.
type Totals struct {
	M       int
	G       []float64 // m×m, upper triangle valid
	Classes []int
	Counts  []int64
	S       []float64 // len(Classes)×m
	N       int64
}

// Assemble checks that the pieces are exactly the blocks of the statistics
// of the expected samples (each sample once in every piece) and assembles
// them.
func Assemble(pieces []*Partial, m, blockRows int, wantN int64, wantSum, wantSq uint64) (*Totals, error) {
	nb := (m + blockRows - 1) / blockRows
	t := &Totals{M: m, G: make([]float64, m*m), N: wantN}
	seen := make([]bool, nb)
	var haveS bool
	for _, p := range pieces {
		if p.M != m {
			return nil, fmt.Errorf("statistics piece %d has m=%d, want %d", p.Block, p.M, m)
		}
		if p.N != wantN || p.IDSum != wantSum || p.IDSq != wantSq {
			return nil, fmt.Errorf("statistics piece %d sums %d samples (id checksums %d, %d), want %d (%d, %d): a bundle was lost or counted twice",
				p.Block, p.N, p.IDSum, p.IDSq, wantN, wantSum, wantSq)
		}
		if p.Block == SBlock {
			if haveS {
				return nil, fmt.Errorf("statistics: two S pieces")
			}
			haveS = true
			if len(p.S) != len(p.Classes)*m || len(p.Counts) != len(p.Classes) {
				return nil, fmt.Errorf("statistics: S piece has %d values for %d classes of m=%d", len(p.S), len(p.Classes), m)
			}
			var total int64
			for _, c := range p.Counts {
				total += c
			}
			if total != wantN {
				return nil, fmt.Errorf("statistics: class counts sum to %d, want %d samples", total, wantN)
			}
			t.Classes, t.Counts, t.S = p.Classes, p.Counts, p.S
			continue
		}
		lo, hi := p.Block*blockRows, min(m, (p.Block+1)*blockRows)
		if p.Block < 0 || p.Block >= nb || p.Lo != lo || p.Hi != hi || len(p.G) != packedLen(m, lo, hi) {
			return nil, fmt.Errorf("statistics: G piece %d has rows [%d,%d) and %d values, want rows [%d,%d) of m=%d", p.Block, p.Lo, p.Hi, len(p.G), lo, hi, m)
		}
		if seen[p.Block] {
			return nil, fmt.Errorf("statistics: G piece %d twice", p.Block)
		}
		seen[p.Block] = true
		off := 0
		for i := lo; i < hi; i++ {
			off += copy(t.G[i*m+i:(i+1)*m], p.G[off:off+m-i])
		}
	}
	if !haveS {
		return nil, fmt.Errorf("statistics: S piece missing")
	}
	for b, ok := range seen {
		if !ok {
			return nil, fmt.Errorf("statistics: G piece %d missing", b)
		}
	}
	return t, nil
}

// GCV returns the GCV score of each λ in grid for ridge regression of the
// one-hot targets on the task whose statistics are t, computed from G and
// S alone (primal form, float64):
//
//	B = (G+λI)⁻¹ Sᵀ,  RSS = ‖Y‖² − 2 tr(BᵀSᵀ) + tr(BᵀGB) = n − tr(BᵀSᵀ) − λ‖B‖²
//	1 − df/n = (n − m + λ tr((G+λI)⁻¹)) / n,  tr((G+λI)⁻¹) = ‖U⁻¹‖²_F
//
// using G B = Sᵀ − λB and ‖Y‖² = n for one-hot rows. It is the quantity
// ridge.GCV computes from the codes themselves.
func (t *Totals) GCV(ctx context.Context, grid []float64) ([]float64, error) {
	m, nc, n := t.M, len(t.Classes), float64(t.N)
	if t.N == 0 || nc == 0 {
		return nil, errors.New("GCV: empty statistics")
	}
	a := make([]float64, m*m)
	b := make([]float64, nc*m)
	scores := make([]float64, len(grid))
	for gi, lambda := range grid {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		for i := 0; i < m; i++ {
			copy(a[i*m+i:(i+1)*m], t.G[i*m+i:(i+1)*m])
			a[i*m+i] += lambda
		}
		if err := linalg.Dpotrf(m, a, m); err != nil {
			scores[gi] = math.Inf(1)
			continue
		}
		copy(b, t.S)
		linalg.Dpotrs(m, nc, a, m, b, m)
		var tr, bn float64
		for i, v := range b {
			tr += v * t.S[i]
			bn += v * v
		}
		rss := n - tr - lambda*bn
		if err := linalg.Dtrtri(m, a, m); err != nil {
			scores[gi] = math.Inf(1)
			continue
		}
		var inv float64
		for i := 0; i < m; i++ {
			for _, v := range a[i*m+i : (i+1)*m] {
				inv += v * v
			}
		}
		den := (n - float64(m) + lambda*inv) / n
		scores[gi] = (rss / n) / (den * den)
	}
	if math.IsInf(scores[ridge.BestLambda(scores)], 1) {
		return nil, fmt.Errorf("GCV: no lambda in %v gives a positive definite system", grid)
	}
	return scores, nil
}

// Binary coding of Partial for the runner (the default coders would spend
// reflection and varints on hundreds of megabytes of floats).

const partialMagic = "FCP1"

// EncodePartial writes p to w.
func EncodePartial(w io.Writer, p *Partial) error {
	var buf bytes.Buffer
	buf.WriteString(partialMagic)
	hdr := []int64{int64(p.Block), int64(p.M), int64(p.Lo), int64(p.Hi), int64(len(p.G)), int64(len(p.Classes)), int64(len(p.S)), p.N, int64(p.IDSum), int64(p.IDSq)}
	binary.Write(&buf, binary.LittleEndian, hdr)
	for _, c := range p.Classes {
		binary.Write(&buf, binary.LittleEndian, int64(c))
	}
	binary.Write(&buf, binary.LittleEndian, p.Counts)
	binary.Write(&buf, binary.LittleEndian, p.G)
	binary.Write(&buf, binary.LittleEndian, p.S)
	_, err := w.Write(buf.Bytes())
	return err
}

// DecodePartial reads a Partial written by EncodePartial from b, checking
// every length against the bytes actually present.
func DecodePartial(b []byte) (*Partial, error) {
	if len(b) < len(partialMagic)+80 || string(b[:4]) != partialMagic {
		return nil, errors.New("decode statistics piece: bad header")
	}
	r := bytes.NewReader(b[4:])
	hdr := make([]int64, 10)
	if err := binary.Read(r, binary.LittleEndian, hdr); err != nil {
		return nil, fmt.Errorf("decode statistics piece: %w", err)
	}
	ng, nc, ns := hdr[4], hdr[5], hdr[6]
	if ng < 0 || nc < 0 || ns < 0 || (ng+2*nc+ns)*8 != int64(r.Len()) {
		return nil, fmt.Errorf("decode statistics piece: header claims %d+%d+%d values, %d bytes present", ng, nc, ns, r.Len())
	}
	p := &Partial{Block: int(hdr[0]), M: int(hdr[1]), Lo: int(hdr[2]), Hi: int(hdr[3]), N: hdr[7], IDSum: uint64(hdr[8]), IDSq: uint64(hdr[9])}
	cls := make([]int64, nc)
	p.Counts = make([]int64, nc)
	p.G = make([]float64, ng)
	p.S = make([]float64, ns)
	for _, v := range []any{cls, p.Counts, p.G, p.S} {
		if err := binary.Read(r, binary.LittleEndian, v); err != nil {
			return nil, fmt.Errorf("decode statistics piece: %w", err)
		}
	}
	p.Classes = make([]int, nc)
	for i, c := range cls {
		p.Classes[i] = int(c)
	}
	return p, nil
}
