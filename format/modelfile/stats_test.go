package modelfile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flycl/flycl"
)

// statsData draws n samples of d features in classes 0..nc-1 (a mean per
// class plus noise).
func statsData(seed uint64, n, d, nc int) ([]float32, []int) {
	r := rand.New(rand.NewPCG(seed, 3))
	means := make([]float64, nc*d)
	for i := range means {
		means[i] = r.NormFloat64()
	}
	x := make([]float32, n*d)
	y := make([]int, n)
	for i := range y {
		y[i] = r.IntN(nc)
		for j := 0; j < d; j++ {
			x[i*d+j] = float32(means[y[i]*d+j] + 1.2*r.NormFloat64())
		}
	}
	return x, y
}

var statsCfg = flycl.Config{M: 200, P: 6, K: 60, Seed: 9, Lambdas: []float64{0.1, 1, 10, 100, 1e3, 1e4}}

// shardFiles computes the statistics files of nshards contiguous shards of
// (x, y), named by class "c<label>", and returns them encoded.
func shardFiles(t testing.TB, m *flycl.Model, x []float32, y []int, d, nshards int, source string) [][]byte {
	t.Helper()
	n := len(y)
	var out [][]byte
	for i := 0; i < nshards; i++ {
		lo, hi := i*n/nshards, (i+1)*n/nshards
		st, err := m.TaskStats(context.Background(), x[lo*d:hi*d], y[lo:hi])
		if err != nil {
			t.Fatal(err)
		}
		names := make([]string, len(st.Labels))
		for c, l := range st.Labels {
			names[c] = fmt.Sprintf("c%d", l)
		}
		keys := make([]string, hi-lo)
		for k := range keys {
			keys[k] = fmt.Sprintf("%s#%d", source, lo+k)
		}
		f, err := NewStatsFile(m, nil, st, names, keys, Shard{Index: i, Count: nshards, Source: source})
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := EncodeStats(&b, f); err != nil {
			t.Fatal(err)
		}
		out = append(out, b.Bytes())
	}
	return out
}

func decodeAll(t testing.TB, files [][]byte) []*StatsFile {
	t.Helper()
	var out []*StatsFile
	for _, b := range files {
		f, err := DecodeStats(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, f)
	}
	return out
}

// TestStatsFilesMergeExactly: a task split into 1, 2 or 7 shards, each
// written to a statistics file and read back, merged in shuffled orders
// and learned by a fresh model, gives the same λ, the same predictions and
// bit-identical float64 statistics as in any other order (canonical
// summation order), and the same λ and predictions whatever the shard
// count (G within one float32 rounding; see ridge.TestStatsExactAcrossShards
// for the float64 bound).
func TestStatsFilesMergeExactly(t *testing.T) {
	const d = 20
	ctx := context.Background()
	base, err := flycl.New(statsCfg, d)
	if err != nil {
		t.Fatal(err)
	}
	x, y := statsData(1, 300, d, 4)
	tx, _ := statsData(2, 200, d, 4)
	r := rand.New(rand.NewPCG(7, 7))
	var refPred []int
	var refLambda float64
	for _, ns := range []int{1, 2, 7} {
		files := shardFiles(t, base, x, y, d, ns, "train")
		var refG []float64
		for trial := 0; trial < 3; trial++ {
			parts := decodeAll(t, files)
			r.Shuffle(len(parts), func(i, j int) { parts[i], parts[j] = parts[j], parts[i] })
			merged, err := MergeStats(parts...)
			if err != nil {
				t.Fatal(err)
			}
			if merged.Stats.N != len(y) || len(merged.IDs) != len(y) {
				t.Fatalf("%d shards: merged %d samples, %d ids", ns, merged.Stats.N, len(merged.IDs))
			}
			if refG == nil {
				refG = merged.Stats.G
			} else if !slices.Equal(refG, merged.Stats.G) {
				t.Fatalf("%d shards: merged G depends on the order of the parts", ns)
			}
			// through a file again, as flycl merge would save it
			var b bytes.Buffer
			if err := EncodeStats(&b, merged); err != nil {
				t.Fatal(err)
			}
			if merged, err = DecodeStats(&b); err != nil {
				t.Fatal(err)
			}
			m, _ := flycl.New(statsCfg, d)
			rec, err := LearnStats(ctx, m, nil, merged, 0)
			if err != nil {
				t.Fatal(err)
			}
			pred, err := m.Predictor().Predict(ctx, tx)
			if err != nil {
				t.Fatal(err)
			}
			if names := m.Classes().Names(); !slices.Equal(names, []string{"c0", "c1", "c2", "c3"}) {
				t.Fatalf("class names %v", names)
			}
			if refPred == nil {
				refPred, refLambda = pred, rec.Lambda
				continue
			}
			if rec.Lambda != refLambda {
				t.Errorf("%d shards: λ=%g, one shard %g", ns, rec.Lambda, refLambda)
			}
			if !slices.Equal(pred, refPred) {
				t.Errorf("%d shards: predictions differ from one shard's", ns)
			}
		}
	}
}

// TestMergeStatsRefuses: parts that cannot be added give clear errors.
func TestMergeStatsRefuses(t *testing.T) {
	const d = 20
	m, _ := flycl.New(statsCfg, d)
	other := statsCfg
	other.Seed = 10
	m2, _ := flycl.New(other, d)
	otherK := statsCfg
	otherK.K = 50
	m3, _ := flycl.New(otherK, d)
	x, y := statsData(1, 60, d, 3)
	files := shardFiles(t, m, x, y, d, 3, "train")
	parts := decodeAll(t, files)
	wrongW := decodeAll(t, shardFiles(t, m2, x, y, d, 3, "train"))
	wrongK := decodeAll(t, shardFiles(t, m3, x, y, d, 3, "train"))
	resplit := decodeAll(t, shardFiles(t, m, x, y, d, 2, "train"))
	renamed := decodeAll(t, shardFiles(t, m, x, y, d, 3, "train"))
	renamed[1].Names[0] = "other"
	for _, tc := range []struct {
		name  string
		parts []*StatsFile
		want  string
	}{
		{"same shard twice", []*StatsFile{parts[0], parts[1], parts[1]}, "same shard twice"},
		{"overlapping shards", []*StatsFile{parts[2], resplit[0], parts[1]}, "same sample"},
		{"different W", []*StatsFile{parts[0], wrongW[1]}, "different W"},
		{"different k", []*StatsFile{parts[0], wrongK[1]}, "configuration"},
		{"name and label disagree", []*StatsFile{parts[0], renamed[1]}, "label"},
		{"none", nil, "no statistics"},
	} {
		_, err := MergeStats(tc.parts...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one about %q", tc.name, err, tc.want)
		}
	}
	// a model of another configuration refuses the statistics
	merged, err := MergeStats(parts...)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := LearnStats(context.Background(), m2, nil, merged, 0); err == nil || !strings.Contains(err.Error(), "W") {
		t.Errorf("model with another W: error %v", err)
	}
	if m2.Classes().Len() != 0 {
		t.Errorf("refused statistics changed the model")
	}
}

// TestStatsFileDamage: truncation, flipped bytes and a model file given
// instead are errors naming the problem; SaveStats/LoadStats round trip.
func TestStatsFileDamage(t *testing.T) {
	const d = 20
	m, _ := flycl.New(statsCfg, d)
	x, y := statsData(3, 40, d, 2)
	b := shardFiles(t, m, x, y, d, 1, "train")[0]
	path := filepath.Join(t.TempDir(), "part.stats")
	f, err := DecodeStats(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if err := SaveStats(path, f); err != nil {
		t.Fatal(err)
	}
	g, err := LoadStats(path)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(g.Stats.G, f.Stats.G) || !slices.Equal(g.IDs, f.IDs) || !slices.Equal(g.Names, f.Names) || g.Config != f.Config {
		t.Fatal("round trip changed the statistics")
	}
	for name, data := range map[string][]byte{
		"truncated":    b[:len(b)-20],
		"flipped byte": append(append([]byte{}, b[:len(b)/2]...), append([]byte{b[len(b)/2] ^ 1}, b[len(b)/2+1:]...)...),
		"empty":        nil,
	} {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadStats(path); err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: error %v", name, err)
		}
		if _, err := DecodeStats(bytes.NewReader(data)); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
	var mb bytes.Buffer
	if err := Encode(&mb, &File{Snapshot: m.Snapshot()}); err != nil {
		t.Fatal(err)
	}
	if _, err := DecodeStats(&mb); err == nil || !strings.Contains(err.Error(), "model file") {
		t.Errorf("model file as statistics: %v", err)
	}
}

// FuzzDecodeStats: any bytes give a statistics file or an error, never a
// panic or a huge allocation; what decodes re-encodes to the same bytes.
func FuzzDecodeStats(f *testing.F) {
	const d = 8
	cfg := flycl.Config{M: 12, P: 3, K: 4, Seed: 1, Lambdas: []float64{1, 10}}
	m, _ := flycl.New(cfg, d)
	x, y := statsData(5, 9, d, 3)
	if b, err := os.ReadFile("testdata/v1.stats"); err == nil {
		f.Add(b) // version 1: W's fingerprint a CRC-32C
	}
	for _, b := range shardFiles(f, m, x, y, d, 2, "seed") {
		f.Add(b)
		f.Add(b[:len(b)/2])
	}
	// a merged file (several shards: what CheckComplete reads), and
	// shards that record no source
	parts := decodeAll(f, shardFiles(f, m, x, y, d, 3, "seed"))
	merged, err := MergeStats(parts[0], parts[2])
	if err != nil {
		f.Fatal(err)
	}
	var mb bytes.Buffer
	if err := EncodeStats(&mb, merged); err != nil {
		f.Fatal(err)
	}
	f.Add(mb.Bytes())
	for _, b := range shardFiles(f, m, x, y, d, 2, "") {
		f.Add(b)
	}
	f.Add([]byte("FLYCLSTA\x01\x00\x00\x00\x02\x00\x00\x00{}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := DecodeStats(bytes.NewReader(data))
		if err != nil {
			return
		}
		// any shard list a file can hold gets an answer, not a panic
		if err := CheckComplete(s.Shards); err != nil {
			var ie *IncompleteError
			if !errors.As(err, &ie) {
				t.Fatalf("a decoded file's shards: %v, not an *IncompleteError", err)
			}
		}
		var b bytes.Buffer
		if err := EncodeStats(&b, s); err != nil {
			t.Fatalf("decoded statistics do not encode: %v", err)
		}
		if _, err := DecodeStats(&b); err != nil {
			t.Fatalf("re-encoded statistics do not decode: %v", err)
		}
	})
}

// TestGCVScopeSaved: a model that chooses λ on all samples keeps that
// setting, and the scope of each step, through its file.
func TestGCVScopeSaved(t *testing.T) {
	const d = 20
	cfg := statsCfg
	cfg.GCVScope = flycl.GCVAll
	m, _ := flycl.New(cfg, d)
	x, y := statsData(4, 80, d, 3)
	if _, err := m.Learn(context.Background(), x, y, nil); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Encode(&b, &File{Snapshot: m.Snapshot()}); err != nil {
		t.Fatal(err)
	}
	f, err := Decode(&b)
	if err != nil {
		t.Fatal(err)
	}
	st := f.Snapshot.State()
	if st.Config.GCVScope != flycl.GCVAll || st.History[0].GCVScope != flycl.GCVAll {
		t.Fatalf("scope after a round trip: config %v, step %v", st.Config.GCVScope, st.History[0].GCVScope)
	}
	// scores that are not finite (λ not determinable) come back as NaN
	want, got := m.History()[0].GCV, st.History[0].GCV
	for i := range want {
		if want[i] != got[i] && !(math.IsInf(want[i], 1) && math.IsNaN(got[i])) {
			t.Fatalf("GCV scores after a round trip: %v, want %v", got, want)
		}
	}
}
