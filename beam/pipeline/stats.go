package pipeline

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/flycl/flycl/internal/sumtree"
	"github.com/flycl/flycl/ridge"
)

// Partial is one piece of the training statistics of a task (ridge.Stats),
// the unit the pipeline shuffles and sums. A G piece (Block >= 0) holds rows
// [Lo,Hi) of G's packed lower triangle (ridge.Stats.G[Lo(Lo+1)/2 :
// Hi(Hi+1)/2]); the S piece (Block == SBlock) holds S, the class labels and
// counts, and the identities of its samples (ascending). Every piece
// carries the number of samples it sums and two checksums of their
// identities, so the final step proves that each sample was counted
// exactly once in every piece: no bundle lost, none counted twice.
//
// Sums are float64 as in ridge.Stats: products of float32 codes are exact
// in float64, and the only rounding is in the additions. A piece also
// carries its position in the tree the shards are added in
// (internal/sumtree): a shard's own statistics are leaf (0, shard ID),
// and a piece of node (l, j) sums the shards [j·2ˡ, (j+1)·2ˡ), its left
// child plus its right child. The tree's shape depends on the number of
// shards alone, so the sums are the same bits however the runner spreads
// the shards over bundles and workers and in whatever order the pieces
// arrive, and the same bits as flycl merge of the shards' statistics.
type Partial struct {
	Block  int
	Level  int // tree position: level (0: one shard's statistics)
	Node   int // and index at that level (the shard ID at level 0)
	M      int
	Lo, Hi int
	G      []float64
	Labels []int
	Counts []int
	S      []float64
	IDs    []uint64 // S piece only: the samples' identities, ascending
	N      int64
	IDSum  uint64 // Σ id (mod 2⁶⁴)
	IDSq   uint64 // Σ id² (mod 2⁶⁴)
}

// SBlock is the Block number of the S piece.
const SBlock = -1

// Merge adds q into p (the same piece of the statistics of disjoint
// samples), in p's memory. A sample present in both is an error. It
// leaves the tree position alone: AddChildren places the sum.
func (p *Partial) Merge(q *Partial) error {
	if p.Block != q.Block || p.M != q.M || p.Lo != q.Lo || p.Hi != q.Hi || len(p.G) != len(q.G) {
		return fmt.Errorf("merge statistics pieces: block %d m=%d rows [%d,%d) with block %d m=%d rows [%d,%d)",
			p.Block, p.M, p.Lo, p.Hi, q.Block, q.M, q.Lo, q.Hi)
	}
	if p.Block == SBlock {
		ids, err := mergeIDs(p.IDs, q.IDs)
		if err != nil {
			return err
		}
		if err := p.mergeS(q); err != nil {
			return err
		}
		p.IDs = ids
	}
	for i, v := range q.G {
		p.G[i] += v
	}
	p.N += q.N
	p.IDSum += q.IDSum
	p.IDSq += q.IDSq
	return nil
}

// mergeS adds q's S rows and counts into p's, by label (ascending).
func (p *Partial) mergeS(q *Partial) error {
	m := p.M
	for _, x := range []*Partial{p, q} {
		if len(x.S) != len(x.Labels)*m || len(x.Counts) != len(x.Labels) || !slices.IsSorted(x.Labels) {
			return fmt.Errorf("merge statistics: S piece has %d values and %d counts for %d labels of m=%d", len(x.S), len(x.Counts), len(x.Labels), m)
		}
	}
	labels := slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(p.Labels), q.Labels...))))
	s := make([]float64, len(labels)*m)
	counts := make([]int, len(labels))
	for _, x := range []*Partial{p, q} {
		for xi, l := range x.Labels {
			i, _ := slices.BinarySearch(labels, l)
			row := s[i*m : (i+1)*m]
			for j, v := range x.S[xi*m : (xi+1)*m] {
				row[j] += v
			}
			counts[i] += x.Counts[xi]
		}
	}
	p.Labels, p.S, p.Counts = labels, s, counts
	return nil
}

// AddChildren returns the piece of tree node parent from the pieces of
// its children (one: a left child whose right sibling covers no shard;
// two: left plus right, added in that order into the left child's
// memory), in whatever order they are given.
func AddChildren(parent sumtree.Node, leaves int, in []Partial) (Partial, error) {
	if len(in) == 0 || len(in) > 2 {
		return Partial{}, fmt.Errorf("statistics tree: node (%d, %d) has %d pieces, want 1 or 2", parent.Level, parent.Index, len(in))
	}
	if len(in) == 2 && in[1].Node < in[0].Node {
		in[0], in[1] = in[1], in[0]
	}
	left, right := sumtree.Node{Level: parent.Level - 1, Index: 2 * parent.Index}, sumtree.Node{Level: parent.Level - 1, Index: 2*parent.Index + 1}
	want := []sumtree.Node{left}
	if right.In(leaves) {
		want = append(want, right)
	}
	if !parent.In(leaves) || len(in) != len(want) {
		return Partial{}, fmt.Errorf("statistics tree: node (%d, %d) of %d shards has %d pieces, want %d (a piece lost or delivered twice)", parent.Level, parent.Index, leaves, len(in), len(want))
	}
	for k, p := range in {
		if p.Level != want[k].Level || p.Node != want[k].Index || p.Block != in[0].Block {
			return Partial{}, fmt.Errorf("statistics tree: node (%d, %d) got the piece of block %d at (%d, %d), want block %d at (%d, %d)",
				parent.Level, parent.Index, p.Block, p.Level, p.Node, in[0].Block, want[k].Level, want[k].Index)
		}
	}
	sum := in[0]
	if len(in) == 2 {
		if err := sum.Merge(&in[1]); err != nil {
			return Partial{}, err
		}
	}
	sum.Level, sum.Node = parent.Level, parent.Index
	return sum, nil
}

func mergeIDs(a, b []uint64) ([]uint64, error) {
	out := make([]uint64, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] < b[j]:
			out = append(out, a[i])
			i++
		case a[i] > b[j]:
			out = append(out, b[j])
			j++
		default:
			return nil, fmt.Errorf("merge statistics: sample %016x counted twice (a bundle's output was delivered twice)", a[i])
		}
	}
	out = append(out, a[i:]...)
	return append(out, b[j:]...), nil
}

// Accumulator sums the codes of one bundle into ridge.Stats (float64) and
// keeps their identities. It is reused across shards.
type Accumulator struct {
	st  *ridge.Stats
	ids []uint64
}

// NewAccumulator returns empty statistics for m-dimensional codes.
func NewAccumulator(m int) (*Accumulator, error) {
	st, err := ridge.NewStats(m)
	if err != nil {
		return nil, err
	}
	return &Accumulator{st: st}, nil
}

// Reset empties the statistics, keeping G's memory.
func (a *Accumulator) Reset() {
	clear(a.st.G)
	a.st.N, a.st.Labels, a.st.Counts, a.st.S = 0, nil, nil, nil
	a.ids = a.ids[:0]
}

// Samples returns the number of samples added since the last Reset.
func (a *Accumulator) Samples() int { return a.st.N }

// Add adds the n×m codes h of the samples with the given labels and ids.
func (a *Accumulator) Add(h []float32, labels []int, ids []uint64) error {
	if len(ids) != len(labels) {
		return fmt.Errorf("accumulate: %d ids for %d labels", len(ids), len(labels))
	}
	if err := a.st.Add(h, len(labels), labels); err != nil {
		return err
	}
	a.ids = append(a.ids, ids...)
	return nil
}

// Pieces cuts the statistics into the S piece and G pieces of blockRows
// rows each (nothing if no sample was added). Two samples with the same
// identity in the bundle are an error.
func (a *Accumulator) Pieces(blockRows int) ([]*Partial, error) {
	st := a.st
	if st.N == 0 {
		return nil, nil
	}
	ids := slices.Clone(a.ids)
	slices.Sort(ids)
	for i := 1; i < len(ids); i++ {
		if ids[i] == ids[i-1] {
			return nil, fmt.Errorf("statistics: sample %016x twice in one bundle", ids[i])
		}
	}
	n, sum, sq := IDChecksums(ids)
	m := st.M
	out := []*Partial{{Block: SBlock, M: m, Labels: slices.Clone(st.Labels), Counts: slices.Clone(st.Counts), S: slices.Clone(st.S), IDs: ids}}
	for b, lo := 0, 0; lo < m; b, lo = b+1, lo+blockRows {
		hi := min(m, lo+blockRows)
		out = append(out, &Partial{Block: b, M: m, Lo: lo, Hi: hi, G: slices.Clone(st.G[lo*(lo+1)/2 : hi*(hi+1)/2])})
	}
	for _, p := range out {
		p.N, p.IDSum, p.IDSq = n, sum, sq
	}
	return out, nil
}

// IDChecksums returns the count and checksums of ids that every piece of
// the complete statistics must carry.
func IDChecksums(ids []uint64) (n int64, sum, sq uint64) {
	for _, u := range ids {
		sum += u
		sq += u * u
	}
	return int64(len(ids)), sum, sq
}

// Assemble checks that the pieces are exactly the blocks of the statistics
// of the expected samples, each counted once in every piece, and returns
// the statistics and the samples' identities (ascending).
func Assemble(pieces []*Partial, m, blockRows int, wantN int64, wantSum, wantSq uint64) (*ridge.Stats, []uint64, error) {
	nb := (m + blockRows - 1) / blockRows
	st, err := ridge.NewStats(m)
	if err != nil {
		return nil, nil, err
	}
	var ids []uint64
	seen := make([]bool, nb)
	haveS := false
	for _, p := range pieces {
		if p.M != m {
			return nil, nil, fmt.Errorf("statistics piece %d has m=%d, want %d", p.Block, p.M, m)
		}
		if p.N != wantN || p.IDSum != wantSum || p.IDSq != wantSq {
			return nil, nil, fmt.Errorf("statistics piece %d sums %d samples (id checksums %x, %x), want %d (%x, %x): a bundle was lost or counted twice",
				p.Block, p.N, p.IDSum, p.IDSq, wantN, wantSum, wantSq)
		}
		if p.Block == SBlock {
			if haveS {
				return nil, nil, errors.New("statistics: two S pieces")
			}
			haveS = true
			if n, sum, sq := IDChecksums(p.IDs); n != wantN || sum != wantSum || sq != wantSq {
				return nil, nil, fmt.Errorf("statistics: the S piece lists %d samples, want %d (or other samples)", n, wantN)
			}
			ids = p.IDs
			st.Labels, st.Counts, st.S, st.N = p.Labels, p.Counts, p.S, int(p.N)
			continue
		}
		lo, hi := p.Block*blockRows, min(m, (p.Block+1)*blockRows)
		if p.Block < 0 || p.Block >= nb || p.Lo != lo || p.Hi != hi || len(p.G) != hi*(hi+1)/2-lo*(lo+1)/2 {
			return nil, nil, fmt.Errorf("statistics: G piece %d has rows [%d,%d) and %d values, want rows [%d,%d) of m=%d", p.Block, p.Lo, p.Hi, len(p.G), lo, hi, m)
		}
		if seen[p.Block] {
			return nil, nil, fmt.Errorf("statistics: G piece %d twice", p.Block)
		}
		seen[p.Block] = true
		copy(st.G[lo*(lo+1)/2:], p.G)
	}
	if !haveS {
		return nil, nil, errors.New("statistics: S piece missing")
	}
	for b, ok := range seen {
		if !ok {
			return nil, nil, fmt.Errorf("statistics: G piece %d missing", b)
		}
	}
	if err := st.Check(); err != nil {
		return nil, nil, fmt.Errorf("statistics: %w", err)
	}
	return st, ids, nil
}

// Binary coding of Partial for the runner (the default coders would spend
// reflection and varints on hundreds of megabytes of floats).

const partialMagic = "FCP2"

// EncodePartial writes p to w.
func EncodePartial(w io.Writer, p *Partial) error {
	var buf bytes.Buffer
	buf.WriteString(partialMagic)
	hdr := []int64{int64(p.Block), int64(p.M), int64(p.Lo), int64(p.Hi), int64(len(p.G)), int64(len(p.Labels)), int64(len(p.S)), int64(len(p.IDs)), p.N, int64(p.IDSum), int64(p.IDSq), int64(p.Level), int64(p.Node)}
	binary.Write(&buf, binary.LittleEndian, hdr)
	for _, v := range [][]int{p.Labels, p.Counts} {
		for _, c := range v {
			binary.Write(&buf, binary.LittleEndian, int64(c))
		}
	}
	binary.Write(&buf, binary.LittleEndian, p.G)
	binary.Write(&buf, binary.LittleEndian, p.S)
	binary.Write(&buf, binary.LittleEndian, p.IDs)
	_, err := w.Write(buf.Bytes())
	return err
}

// DecodePartial reads a Partial written by EncodePartial from b, checking
// every length against the bytes actually present before allocating.
func DecodePartial(b []byte) (*Partial, error) {
	const nh = 13
	if len(b) < len(partialMagic)+8*nh || string(b[:len(partialMagic)]) != partialMagic {
		return nil, errors.New("decode statistics piece: bad header")
	}
	r := bytes.NewReader(b[len(partialMagic):])
	hdr := make([]int64, nh)
	if err := binary.Read(r, binary.LittleEndian, hdr); err != nil {
		return nil, fmt.Errorf("decode statistics piece: %w", err)
	}
	ng, nc, ns, ni := hdr[4], hdr[5], hdr[6], hdr[7]
	rest := int64(r.Len()) / 8
	if ng < 0 || nc < 0 || ns < 0 || ni < 0 || ng > rest || nc > rest || ns > rest || ni > rest || (ng+2*nc+ns+ni)*8 != int64(r.Len()) {
		return nil, fmt.Errorf("decode statistics piece: header claims %d+2×%d+%d+%d values, %d bytes present", ng, nc, ns, ni, r.Len())
	}
	p := &Partial{Block: int(hdr[0]), M: int(hdr[1]), Lo: int(hdr[2]), Hi: int(hdr[3]), N: hdr[8], IDSum: uint64(hdr[9]), IDSq: uint64(hdr[10]),
		Level: int(hdr[11]), Node: int(hdr[12])}
	lc := make([]int64, 2*nc)
	p.G = make([]float64, ng)
	p.S = make([]float64, ns)
	p.IDs = make([]uint64, ni)
	for _, v := range []any{lc, p.G, p.S, p.IDs} {
		if err := binary.Read(r, binary.LittleEndian, v); err != nil {
			return nil, fmt.Errorf("decode statistics piece: %w", err)
		}
	}
	p.Labels, p.Counts = make([]int, nc), make([]int, nc)
	for i := range nc {
		p.Labels[i], p.Counts[i] = int(lc[i]), int(lc[nc+i])
	}
	if ni == 0 {
		p.IDs = nil
	}
	return p, nil
}
