package modelfile

import (
	"cmp"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"slices"
	"time"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/internal/atomicfile"
	"github.com/flycl/flycl/internal/codec"
	"github.com/flycl/flycl/internal/sumtree"
	"github.com/flycl/flycl/projection"
	"github.com/flycl/flycl/ridge"
)

const (
	statsMagic = "FLYCLSTA"
	// StatsVersion is the statistics format version this package writes.
	// LoadStats reads versions 1 and 2 (version 1 fingerprints W by a
	// CRC-32C, w_crc32c, instead of its Digest, w_sha256).
	StatsVersion = 2
	// MaxStatsSamples bounds the samples one statistics file may claim.
	MaxStatsSamples = 1 << 34
)

// StatsConfig is what must agree for statistics to merge and to be
// learned by a model: the feature dimension and the expansion (W and
// top-k).
type StatsConfig struct {
	InputDim int    `json:"d"`
	M        int    `json:"m"`
	P        int    `json:"p"`
	K        int    `json:"k"`
	Seed     uint64 `json:"seed"`
	W        string `json:"w"`                  // "seed" or "explicit"
	WSHA256  string `json:"w_sha256,omitempty"` // fingerprint of W (projection.Matrix.Digest)
	WCRC     uint32 `json:"w_crc32c,omitempty"` // fingerprint of W in version-1 files (instead of WSHA256)
	TopK     string `json:"topk"`               // "signed" or "magnitude"
	// InputScale is the power of two inputs are multiplied by before W
	// (codec.InputScale: 1 unless the λ grid is relative).
	InputScale float64 `json:"input_scale"`
}

// StatsConfigOf returns the statistics configuration of a model.
func StatsConfigOf(m *flycl.Model) StatsConfig {
	cfg := m.Config()
	w := codec.Projection(m)
	c := StatsConfig{InputDim: m.InputDim(), M: cfg.M, P: cfg.P, K: cfg.K, Seed: cfg.Seed,
		W: "seed", WSHA256: w.Digest(), TopK: cfg.TopK.String(), InputScale: codec.InputScale(m)}
	if w.Seed == nil {
		c.W, c.Seed = "explicit", 0
	}
	return c
}

// legacy reports whether c fingerprints W the way version-1 files do
// (a CRC-32C, no Digest).
func (c StatsConfig) legacy() bool { return c.WSHA256 == "" }

// configOf returns the statistics configuration of model m fingerprinted
// as like is (a version-1 file's CRC-32C, or the Digest), for comparing
// with it.
func configOf(m *flycl.Model, like StatsConfig) StatsConfig {
	c := StatsConfigOf(m)
	if like.legacy() {
		c.WSHA256, c.WCRC = "", legacyCRC(codec.Projection(m))
	}
	return c
}

// Shard says which part of a task's data a statistics file holds.
type Shard struct {
	Index   int    `json:"index"`            // 0-based
	Count   int    `json:"count"`            // the shards the data was split into
	Samples int    `json:"samples"`          // samples in this shard
	Source  string `json:"source,omitempty"` // what was split (data set or feature file)
}

// StatsFile is the content of a statistics file.
type StatsFile struct {
	Config StatsConfig
	// Pipeline is how the features were made (backbone identity); nil for
	// features given directly.
	Pipeline *Pipeline
	// Stats are G, S and the class counts; rows of S follow Stats.Labels.
	Stats *ridge.Stats
	// Names is the class name of each of Stats.Labels.
	Names []string
	// Shards are the parts of the data these statistics hold (one for a
	// worker's file, several after a merge).
	Shards []Shard
	// IDs are the sample identities (SampleID), strictly ascending, one
	// per sample.
	IDs []uint64
	// Created is when the statistics were computed (UTC).
	Created time.Time
}

// StatsHeader is the JSON header of a statistics file.
type StatsHeader struct {
	Format   string      `json:"format"` // "flycl-stats"
	Config   StatsConfig `json:"config"`
	Pipeline *Pipeline   `json:"pipeline,omitempty"`
	Labels   []int       `json:"labels"` // class labels, ascending
	Names    []string    `json:"names"`  // name of each label
	Counts   []int       `json:"counts"` // samples of each label
	Samples  int         `json:"samples"`
	Shards   []Shard     `json:"shards"`
	Created  time.Time   `json:"created"`
}

// SampleID is the identity of a sample: the FNV-1a 64-bit hash of its key
// (for example the data set's identity and the sample's path or index).
func SampleID(key string) uint64 {
	h := fnv.New64a()
	io.WriteString(h, key)
	return h.Sum64()
}

// NewStatsFile wraps a shard's statistics computed by model m (for
// example m.TaskStats on the shard's features). names[i] is the class name
// of st.Labels[i], stored in Unicode NFC (flycl.NormalizeClassNames: two
// labels named alike are an error); keys identify the shard's samples
// (SampleID of each), in any order; shard says which part of which source
// (Shard.Source: CheckComplete compares it across shards). pipeline may
// be nil.
func NewStatsFile(m *flycl.Model, pipeline *Pipeline, st *ridge.Stats, names []string, keys []string, shard Shard) (*StatsFile, error) {
	if len(names) != len(st.Labels) {
		return nil, fmt.Errorf("modelfile: %d class names for %d classes", len(names), len(st.Labels))
	}
	names, err := flycl.NormalizeClassNames(names)
	if err != nil {
		return nil, fmt.Errorf("modelfile: %w", err)
	}
	if len(keys) != st.N {
		return nil, fmt.Errorf("modelfile: %d sample keys for %d samples", len(keys), st.N)
	}
	ids := make([]uint64, len(keys))
	for i, k := range keys {
		ids[i] = SampleID(k)
	}
	slices.Sort(ids)
	for i := 1; i < len(ids); i++ {
		if ids[i] == ids[i-1] {
			return nil, fmt.Errorf("modelfile: two samples of the shard have the same identity (keys must be distinct)")
		}
	}
	shard.Samples = st.N
	f := &StatsFile{Config: StatsConfigOf(m), Pipeline: pipeline, Stats: st, Names: names,
		Shards: []Shard{shard}, IDs: ids, Created: time.Now().UTC()}
	if err := f.check(); err != nil {
		return nil, err
	}
	return f, nil
}

// check verifies that the parts of f fit together.
func (f *StatsFile) check() error {
	c := f.Config
	switch {
	case c.M <= 0 || c.M > MaxM:
		return fmt.Errorf("m=%d outside [1, %d]", c.M, MaxM)
	case c.InputDim <= 0 || c.InputDim > MaxD:
		return fmt.Errorf("d=%d outside [1, %d]", c.InputDim, MaxD)
	case c.P <= 0 || c.P > c.InputDim:
		return fmt.Errorf("p=%d outside [1, d=%d]", c.P, c.InputDim)
	case c.K <= 0 || c.K > c.M:
		return fmt.Errorf("k=%d outside [1, m=%d]", c.K, c.M)
	case c.W != "seed" && c.W != "explicit":
		return fmt.Errorf("w=%q, want seed or explicit", c.W)
	case !(c.InputScale > 0) || math.IsInf(c.InputScale, 0):
		return fmt.Errorf("input scale %g is not a positive finite number", c.InputScale)
	case f.Stats == nil:
		return fmt.Errorf("no statistics")
	case f.Stats.M != c.M:
		return fmt.Errorf("statistics of dimension %d, configuration m=%d", f.Stats.M, c.M)
	case len(f.Names) != len(f.Stats.Labels):
		return fmt.Errorf("%d class names for %d classes", len(f.Names), len(f.Stats.Labels))
	case len(f.IDs) != f.Stats.N:
		return fmt.Errorf("%d sample identities for %d samples", len(f.IDs), f.Stats.N)
	case len(f.Shards) == 0:
		return fmt.Errorf("no shard description")
	}
	if _, err := projection.ParseTopKMode(c.TopK); err != nil {
		return fmt.Errorf("topk: %v", err)
	}
	if err := f.Stats.Check(); err != nil {
		return err
	}
	// the rule of every learn (flycl learn, the server): valid names,
	// none given to two labels (also in Unicode NFC)
	if err := flycl.CheckClassNames(f.Names); err != nil {
		return err
	}
	for i := 1; i < len(f.IDs); i++ {
		if f.IDs[i] <= f.IDs[i-1] {
			return fmt.Errorf("sample identities not strictly ascending at %d", i)
		}
	}
	total := 0
	for _, s := range f.Shards {
		if s.Count <= 0 || s.Index < 0 || s.Index >= s.Count || s.Samples < 0 {
			return fmt.Errorf("shard %d/%d with %d samples", s.Index, s.Count, s.Samples)
		}
		total += s.Samples
	}
	if total != f.Stats.N {
		return fmt.Errorf("shards hold %d samples, the statistics %d", total, f.Stats.N)
	}
	if f.Pipeline != nil {
		if err := f.Pipeline.validate(); err != nil {
			return fmt.Errorf("pipeline: %v", err)
		}
		if f.Pipeline.Dim != 0 && f.Pipeline.Dim != c.InputDim {
			return fmt.Errorf("pipeline: backbone dimension %d, d=%d", f.Pipeline.Dim, c.InputDim)
		}
	}
	return nil
}

// EncodeStats writes f to w.
func EncodeStats(w io.Writer, f *StatsFile) error {
	if err := f.check(); err != nil {
		return fmt.Errorf("modelfile: encode statistics: %w", err)
	}
	st := f.Stats
	hdr := StatsHeader{Format: "flycl-stats", Config: f.Config, Pipeline: f.Pipeline, Labels: st.Labels,
		Names: f.Names, Counts: st.Counts, Samples: st.N, Shards: f.Shards, Created: f.Created}
	if hdr.Labels == nil {
		hdr.Labels, hdr.Names, hdr.Counts = []int{}, []string{}, []int{}
	}
	hj, err := json.Marshal(hdr)
	if err != nil {
		return fmt.Errorf("modelfile: encode statistics: %w", err)
	}
	err = writeFrame(w, statsKind, StatsVersion, hj, func(bw io.Writer) {
		writeUint64s(bw, len(st.G), func(i int) uint64 { return math.Float64bits(st.G[i]) })
		writeUint64s(bw, len(st.S), func(i int) uint64 { return math.Float64bits(st.S[i]) })
		writeUint64s(bw, len(f.IDs), func(i int) uint64 { return f.IDs[i] })
	})
	if err != nil {
		return fmt.Errorf("modelfile: encode statistics: %w", err)
	}
	return nil
}

func writeUint64s(w io.Writer, n int, at func(int) uint64) {
	b := make([]byte, 8*min(n, chunk))
	for lo := 0; lo < n; lo += chunk {
		hi := min(n, lo+chunk)
		for i := lo; i < hi; i++ {
			binary.LittleEndian.PutUint64(b[8*(i-lo):], at(i))
		}
		w.Write(b[:8*(hi-lo)])
	}
}

func (r *reader) uint64s(n int) []uint64 {
	out := make([]uint64, 0, min(n, chunk))
	for len(out) < n && r.err == nil {
		k := min(n-len(out), chunk)
		b := r.bytes(8 * k)
		if b == nil {
			return nil
		}
		for i := 0; i < k; i++ {
			out = append(out, binary.LittleEndian.Uint64(b[8*i:]))
		}
	}
	return out
}

func (r *reader) float64s(n int) []float64 {
	u := r.uint64s(n)
	if u == nil {
		return nil
	}
	out := make([]float64, len(u))
	for i, v := range u {
		out[i] = math.Float64frombits(v)
	}
	return out
}

// DecodeStats reads a statistics file from r. Like Decode it allocates
// only for data it has read, and checks meaning as well as bytes: sizes
// within bounds, labels ascending, counts that add up, finite G and S,
// ascending distinct sample identities, the checksum.
func DecodeStats(r io.Reader) (*StatsFile, error) {
	return decodeStats(r, -1)
}

func decodeStats(rd io.Reader, size int64) (*StatsFile, error) {
	fail := func(format string, a ...any) (*StatsFile, error) { return nil, fmt.Errorf(format, a...) }
	fr, err := readFrame(rd, size, statsKind)
	if err != nil {
		return nil, err
	}
	r := fr.data
	var hdr StatsHeader
	if err := json.Unmarshal(fr.header, &hdr); err != nil {
		return fail("corrupt header: %v", err)
	}
	if hdr.Format != "flycl-stats" {
		return fail("header format %q, want flycl-stats", hdr.Format)
	}
	c := hdr.Config
	switch {
	case c.M <= 0 || c.M > MaxM:
		return fail("corrupt header: m=%d outside [1, %d]", c.M, MaxM)
	case len(hdr.Labels) > MaxClasses:
		return fail("corrupt header: %d classes, at most %d", len(hdr.Labels), MaxClasses)
	case len(hdr.Names) != len(hdr.Labels) || len(hdr.Counts) != len(hdr.Labels):
		return fail("corrupt header: %d labels, %d names, %d counts", len(hdr.Labels), len(hdr.Names), len(hdr.Counts))
	case hdr.Samples < 0 || hdr.Samples > MaxStatsSamples:
		return fail("corrupt header: sample count %d", hdr.Samples)
	}
	m, nc, n := int64(c.M), int64(len(hdr.Labels)), int64(hdr.Samples)
	if err := fr.checkSize(8*m*(m+1)/2 + 8*nc*m + 8*n); err != nil {
		return nil, err
	}
	g := r.float64s(int(m * (m + 1) / 2))
	s := r.float64s(int(nc * m))
	ids := r.uint64s(int(n))
	if err := fr.finish(); err != nil {
		return nil, err
	}
	if g == nil {
		g = []float64{}
	}
	f := &StatsFile{Config: c, Pipeline: hdr.Pipeline, Names: hdr.Names, Shards: hdr.Shards, IDs: ids, Created: hdr.Created,
		Stats: &ridge.Stats{M: c.M, N: hdr.Samples, Labels: hdr.Labels, Counts: hdr.Counts, G: g, S: s}}
	if f.Stats.S == nil {
		f.Stats.S = []float64{}
	}
	if err := f.check(); err != nil {
		return fail("%v", err)
	}
	return f, nil
}

// SaveStats writes f to path atomically.
func SaveStats(path string, f *StatsFile) error {
	err := atomicfile.WriteFile(path, func(w io.Writer) error { return EncodeStats(w, f) })
	if err != nil {
		return fmt.Errorf("save: %w", err)
	}
	return nil
}

// LoadStats reads a statistics file.
func LoadStats(path string) (*StatsFile, error) {
	return loadFile(path, decodeStats, func(string) string {
		return "it was cut or changed since flycl stats wrote it: compute it again with flycl stats"
	})
}

// MergeStats adds up the statistics of the shards of one task. They must
// have the same configuration (d, m, p, k, W, top-k) and pipeline, give
// each class name the same label, and hold disjoint samples: the same
// shard twice, or overlapping shards, is an error naming both. The parts
// are added in a fixed binary tree (internal/sumtree), so the result does
// not depend on the order they are given in: when every part holds shards
// of one split (i/N of one source) that make up a node of the tree over
// the N shards (one shard, two neighbours 2j and 2j+1, four aligned ones,
// ...), the tree is the one over the shards, so nested merges and the Beam
// pipeline (which adds its shards' statistics in the same tree) give the
// same bits as one merge of all the shards; other parts are the leaves of
// a tree in the order of their smallest sample identity. The parts are
// not modified. The result records the shards of every part; whether
// they make up one whole split of one source (no shard missing, no two
// sources or shard counts mixed) is CheckComplete's question, which
// flycl merge asks before it learns or writes the merged statistics.
func MergeStats(parts ...*StatsFile) (*StatsFile, error) {
	if len(parts) == 0 {
		return nil, fmt.Errorf("modelfile: no statistics to merge")
	}
	first := parts[0]
	for i, p := range parts {
		if err := p.check(); err != nil {
			return nil, fmt.Errorf("modelfile: merge: part %d: %w", i+1, err)
		}
		if i == 0 {
			continue
		}
		if p.Config.legacy() != first.Config.legacy() {
			return nil, flycl.Input(fmt.Errorf("modelfile: merge: part %d and part 1 fingerprint W differently (one was written by an older flycl, with a CRC-32C): compute the older statistics again", i+1))
		}
		if p.Config != first.Config {
			return nil, flycl.Input(fmt.Errorf("modelfile: merge: part %d has configuration %+v, part 1 %+v (different W, top-k, input scale or dimensions: statistics of different expansions cannot be added)", i+1, p.Config, first.Config))
		}
		switch {
		case (p.Pipeline == nil) != (first.Pipeline == nil):
			return nil, flycl.Input(fmt.Errorf("modelfile: merge: part %d and part 1 differ in backbone (one has none: features from a backbone and given directly cannot be mixed)", i+1))
		case p.Pipeline != nil:
			if err := first.Pipeline.Check(p.Pipeline); err != nil {
				return nil, flycl.Input(fmt.Errorf("modelfile: merge: part %d: %w", i+1, err))
			}
		}
	}
	// names <-> labels must agree across parts (names compared and
	// written in NFC: files from before names were normalised may hold
	// another form; check has made sure each normalises)
	byName, byLabel := map[string]int{}, map[int]string{}
	for i, p := range parts {
		for c, l := range p.Stats.Labels {
			n, _ := flycl.NormalizeClassName(p.Names[c])
			if ol, ok := byName[n]; ok && ol != l {
				return nil, flycl.Input(fmt.Errorf("modelfile: merge: part %d gives class %q label %d, an earlier part %d", i+1, n, l, ol))
			}
			if on, ok := byLabel[l]; ok && on != n {
				return nil, flycl.Input(fmt.Errorf("modelfile: merge: part %d names label %d %q, an earlier part %q", i+1, l, n, on))
			}
			byName[n], byLabel[l] = l, n
		}
	}
	// shards given twice
	type key struct {
		idx, count int
		src        string
	}
	seen := map[key]int{}
	for i, p := range parts {
		for _, s := range p.Shards {
			k := key{s.Index, s.Count, s.Source}
			if j, ok := seen[k]; ok {
				return nil, flycl.Input(fmt.Errorf("modelfile: merge: shard %d/%d of %q is in part %d and part %d (the same shard twice)", s.Index, s.Count, s.Source, j+1, i+1))
			}
			seen[k] = i
		}
	}
	order := make([]int, len(parts))
	for i := range order {
		order[i] = i
	}
	firstID := func(i int) uint64 {
		if len(parts[i].IDs) == 0 {
			return math.MaxUint64
		}
		return parts[i].IDs[0]
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(firstID(a), firstID(b)) })
	// overlapping samples: merge the sorted identity lists
	var ids []uint64
	owner := []int{}
	for _, i := range order {
		ids2 := make([]uint64, 0, len(ids)+len(parts[i].IDs))
		own2 := make([]int, 0, cap(ids2))
		a, b := 0, 0
		for a < len(ids) || b < len(parts[i].IDs) {
			switch {
			case b == len(parts[i].IDs) || a < len(ids) && ids[a] < parts[i].IDs[b]:
				ids2, own2 = append(ids2, ids[a]), append(own2, owner[a])
				a++
			case a == len(ids) || parts[i].IDs[b] < ids[a]:
				ids2, own2 = append(ids2, parts[i].IDs[b]), append(own2, i)
				b++
			default:
				return nil, flycl.Input(fmt.Errorf("modelfile: merge: part %d and part %d hold the same sample (overlapping shards, or the same data twice)", owner[a]+1, i+1))
			}
		}
		ids, owner = ids2, own2
	}
	total, err := treeSum(parts, order)
	if err != nil {
		return nil, err
	}
	var shards []Shard
	for _, i := range order {
		shards = append(shards, parts[i].Shards...)
	}
	names := make([]string, len(total.Labels))
	for c, l := range total.Labels {
		names[c] = byLabel[l]
	}
	out := &StatsFile{Config: first.Config, Pipeline: first.Pipeline, Stats: total, Names: names,
		Shards: shards, IDs: ids, Created: time.Now().UTC()}
	if err := out.check(); err != nil {
		return nil, fmt.Errorf("modelfile: merge: %w", err)
	}
	return out, nil
}

// CheckModel reports whether the statistics can be learned by model m,
// whose pipeline is p (nil when it learns features given directly): same
// configuration (d, m, p, k, W, top-k) and the same backbone and
// transform.
func (f *StatsFile) CheckModel(m *flycl.Model, p *Pipeline) error {
	return flycl.Input(f.checkModel(m, p))
}

func (f *StatsFile) checkModel(m *flycl.Model, p *Pipeline) error {
	if mc := configOf(m, f.Config); mc != f.Config {
		return fmt.Errorf("statistics configuration %+v, the model's %+v (different W, top-k, input scale or dimensions)", f.Config, mc)
	}
	switch {
	case p == nil && f.Pipeline != nil && m.Classes().Len() > 0:
		return fmt.Errorf("statistics come from backbone %s, the model learned from features given directly", f.Pipeline.Backbone)
	case p != nil && f.Pipeline == nil:
		return fmt.Errorf("statistics come from features given directly, the model uses backbone %s", p.Backbone)
	case p != nil:
		return p.Check(f.Pipeline)
	}
	return nil
}

// LearnStats teaches model m (whose pipeline is p) the task whose
// statistics are f: classes are matched by name (new names get new
// labels, see flycl.Model.LabelsFor), λ is chosen by GCV on the
// statistics (flycl.Model.Learn with LearnOptions.Stats; or fixed when lambda > 0), and the
// classifier is re-solved. The model is unchanged when f does not fit it.
func LearnStats(ctx context.Context, m *flycl.Model, p *Pipeline, f *StatsFile, lambda float64) (flycl.TaskRecord, error) {
	if err := f.check(); err != nil {
		return flycl.TaskRecord{}, fmt.Errorf("modelfile: statistics: %w", err)
	}
	if err := f.CheckModel(m, p); err != nil {
		return flycl.TaskRecord{}, fmt.Errorf("modelfile: %w", err)
	}
	labels, err := m.LabelsFor(f.Names)
	if err != nil {
		return flycl.TaskRecord{}, err
	}
	src := f.Stats
	order := make([]int, len(labels))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(labels[a], labels[b]) })
	mm := src.M
	st := &ridge.Stats{M: mm, N: src.N, G: src.G, Labels: make([]int, len(order)), Counts: make([]int, len(order)), S: make([]float64, len(src.S))}
	for r, i := range order {
		st.Labels[r], st.Counts[r] = labels[i], src.Counts[i]
		copy(st.S[r*mm:(r+1)*mm], src.S[i*mm:(i+1)*mm])
	}
	return m.Learn(ctx, nil, nil, &flycl.LearnOptions{Stats: st, Lambda: lambda})
}

// treePositions returns the tree the parts are added in and each part's
// node: the tree over the N shards of one split when every part holds
// shards i/N of one source that make up a node of it; otherwise the tree
// over the parts themselves, in order (by smallest sample identity).
func treePositions(parts []*StatsFile, order []int) (int, []sumtree.Node) {
	pos := make([]sumtree.Node, len(parts))
	if s0 := parts[0].Shards; len(s0) > 0 {
		count, src := s0[0].Count, s0[0].Source
		split := true
		for i, p := range parts {
			idx := make([]int, 0, len(p.Shards))
			for _, s := range p.Shards {
				if s.Count != count || s.Source != src {
					split = false
				}
				idx = append(idx, s.Index)
			}
			slices.Sort(idx)
			v, ok := sumtree.Node{}, len(idx) > 0
			for k := 1; ok && k < len(idx); k++ {
				ok = idx[k] == idx[0]+k
			}
			if ok {
				v, ok = sumtree.Covering(idx[0], idx[0]+len(idx), count)
			}
			if !split || !ok {
				split = false
				break
			}
			pos[i] = v
		}
		if split {
			return count, pos
		}
	}
	for k, i := range order {
		pos[i] = sumtree.Leaf(k)
	}
	return len(parts), pos
}

// treeSum adds the parts' statistics in the tree of treePositions. The
// parts' statistics are not modified: a node's sum starts as a copy of
// its left child's.
func treeSum(parts []*StatsFile, order []int) (*ridge.Stats, error) {
	type sum struct {
		st    *ridge.Stats
		owned bool // st is a copy this merge made
		part  int
	}
	add := func(l, r sum) (sum, error) {
		if !l.owned {
			l = sum{l.st.Clone(), true, l.part}
		}
		if err := l.st.Merge(r.st); err != nil {
			return l, fmt.Errorf("modelfile: merge: part %d: %w", r.part+1, err)
		}
		return l, nil
	}
	n, pos := treePositions(parts, order)
	f, err := sumtree.NewForest(n, add)
	if err != nil {
		return nil, err
	}
	for _, i := range order {
		if err := f.Put(pos[i], sum{st: parts[i].Stats, part: i}); err != nil {
			return nil, fmt.Errorf("modelfile: merge: part %d: %w", i+1, err)
		}
	}
	// a partial merge whose parts leave gaps: the nodes held, from the left
	var held []sum
	for _, v := range f.Nodes() {
		x, _ := f.Value(v)
		held = append(held, x)
	}
	total, err := sumtree.Sum(held, add)
	if err != nil {
		return nil, err
	}
	if !total.owned {
		total.st = total.st.Clone()
	}
	return total.st, nil
}
