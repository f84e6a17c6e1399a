package modelfile

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/internal/codec"
	"github.com/flycl/flycl/projection"
	"github.com/flycl/flycl/ridge"
)

// contents reads a "key value" file written beside a golden file
// (testdata/gen_v3): what the writing code had in memory.
func contents(t *testing.T, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, " "); ok && k != "#" {
			out[k] = v
		}
	}
	return out
}

func sha(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

func bits32(v []float32) []byte {
	var b []byte
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	return b
}

func bits64(v []float64) []byte {
	var b []byte
	for _, x := range v {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
	}
	return b
}

// TestReadsVersion3: testdata/v3.flycl was written by the format-3 code
// (testdata/gen_v3), whose W fingerprint is a CRC-32C; it loads, its W
// (regenerated from the seed) is verified against that fingerprint, and
// it holds to the bit the G, S and classifier the writing code had
// (testdata/v3_contents.txt).
func TestReadsVersion3(t *testing.T) {
	want := contents(t, "testdata/v3_contents.txt")
	f, err := Load("testdata/v3.flycl")
	if err != nil {
		t.Fatal(err)
	}
	if f.Format != 3 || f.Pipeline == nil || f.Pipeline.Name != "squeezenet1.1" {
		t.Fatalf("format %d pipeline %+v", f.Format, f.Pipeline)
	}
	s := f.Snapshot
	var g []byte
	for i := range s.State().Config.M {
		g = append(g, bits32(codec.LowerRow(s, i))...)
	}
	st := s.State()
	for _, c := range [][2]string{
		{"G", sha(g)}, {"S", sha(bits32(s.S()))}, {"C", sha(bits32(s.Coef()))},
		{"lambda", fmt.Sprint(st.Lambda)}, {"names", strings.Join(st.Names, ",")},
		{"version", fmt.Sprint(s.Version())}, {"samples", fmt.Sprint(s.Samples())},
	} {
		if want[c[0]] != c[1] {
			t.Errorf("%s: %s, the writing code had %s", c[0], c[1], want[c[0]])
		}
	}
	// a W that is not the file's fails the old fingerprint
	b, err := os.ReadFile("testdata/v3.flycl")
	if err != nil {
		t.Fatal(err)
	}
	h, data := split(t, b)
	h["seed"] = 6
	if _, err := Decode(strings.NewReader(string(forge(t, 3, h, data)))); err == nil || !strings.Contains(err.Error(), "fingerprint") {
		t.Errorf("format-3 file with another seed: %v, want a fingerprint mismatch", err)
	}
}

// TestReadsStatsVersion1: testdata/v1.stats was written by the
// statistics-format-1 code (testdata/gen_v3); it loads with the G, S,
// counts, names and sample identities the writing code had
// (testdata/v1_stats_contents.txt), and teaches the model whose W it was
// computed with (its CRC-32C fingerprint checked) but not another.
func TestReadsStatsVersion1(t *testing.T) {
	want := contents(t, "testdata/v1_stats_contents.txt")
	sf, err := LoadStats("testdata/v1.stats")
	if err != nil {
		t.Fatal(err)
	}
	var ids []byte
	for _, id := range sf.IDs {
		ids = binary.LittleEndian.AppendUint64(ids, id)
	}
	st := sf.Stats
	for _, c := range [][2]string{
		{"G", sha(bits64(st.G))}, {"S", sha(bits64(st.S))}, {"IDs", sha(ids)},
		{"n", fmt.Sprint(st.N)}, {"counts", fmt.Sprint(st.Counts)}, {"names", strings.Join(sf.Names, ",")},
	} {
		if want[c[0]] != c[1] {
			t.Errorf("%s: %s, the writing code had %s", c[0], c[1], want[c[0]])
		}
	}
	f, err := Load("testdata/v3.flycl") // the model the statistics were computed for
	if err != nil {
		t.Fatal(err)
	}
	m, err := f.Snapshot.Model()
	if err != nil {
		t.Fatal(err)
	}
	if err := sf.CheckModel(m, f.Pipeline); err != nil {
		t.Errorf("statistics and the model they were computed with: %v", err)
	}
	if !sf.Config.legacy() || sf.Config.WCRC == 0 {
		t.Fatalf("version-1 statistics: config %+v, want a CRC-32C fingerprint", sf.Config)
	}
	other := *sf
	other.Config.WCRC ^= 1 // the fingerprint of another W
	if err := other.CheckModel(m, f.Pipeline); err == nil {
		t.Error("statistics of another W: accepted")
	}
	// a version-1 part does not merge with a part of today's format
	if _, err := MergeStats(sf, newStats(t, m, sf)); err == nil || !strings.Contains(err.Error(), "older flycl") {
		t.Errorf("merge of a version-1 and a version-2 part: %v", err)
	}
	// once learned, the model's file records the one digest
	var b strings.Builder
	if err := Encode(&b, &File{Snapshot: f.Snapshot, Pipeline: f.Pipeline}); err != nil {
		t.Fatal(err)
	}
	h, _ := split(t, []byte(b.String()))
	if h["w_sha256"] != codec.Projection(m).Digest() || h["w_crc32c"] != nil {
		t.Errorf("re-encoded header: w_sha256 %v, w_crc32c %v; want the digest alone", h["w_sha256"], h["w_crc32c"])
	}
}

// newStats returns statistics of today's format for model m with the
// names of like (one sample, a new identity).
func newStats(t *testing.T, m *flycl.Model, like *StatsFile) *StatsFile {
	t.Helper()
	labels, err := m.LabelsFor(like.Names[:1])
	if err != nil {
		t.Fatal(err)
	}
	st, err := m.TaskStats(context.Background(), make([]float32, m.InputDim()), labels)
	if err != nil {
		t.Fatal(err)
	}
	sf, err := NewStatsFile(m, like.Pipeline, st, like.Names[:1], []string{"another sample"}, Shard{Index: 0, Count: 1, Source: "new"})
	if err != nil {
		t.Fatal(err)
	}
	if sf.Config.legacy() {
		t.Fatalf("new statistics: config %+v, want the digest", sf.Config)
	}
	return sf
}

// TestHeaderConfig: the configuration a header embeds is written under
// the keys and names every format version used ("topk": "magnitude",
// "gcv_scope" only when not the task's, ...), which the format-1 and
// format-3 files above are read by, and comes back equal.
func TestHeaderConfig(t *testing.T) {
	for _, tc := range []struct {
		cfg  flycl.Config
		want map[string]any // header values; nil: key absent
	}{
		{flycl.Config{M: 40, P: 3, K: 12, Seed: 5, Lambdas: []float64{1, 10}},
			map[string]any{"m": 40.0, "p": 3.0, "k": 12.0, "seed": 5.0, "topk": "signed", "gcv": "auto", "projection": "auto",
				"gcv_scope": nil, "lambda_scale": nil}},
		{flycl.Config{M: 40, P: 3, K: 12, Seed: 5, Lambdas: []float64{0.5}, TopK: projection.Magnitude, GCV: ridge.GCVEigen,
			Projection: projection.Dense, GCVScope: flycl.GCVAll, LambdaScale: flycl.LambdaRelative},
			map[string]any{"topk": "magnitude", "gcv": "eigen", "projection": "dense", "gcv_scope": "all", "lambda_scale": "relative"}},
	} {
		m, err := flycl.New(tc.cfg, d)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		if err := Encode(&b, &File{Snapshot: m.Snapshot()}); err != nil {
			t.Fatal(err)
		}
		h, _ := split(t, []byte(b.String()))
		for k, v := range tc.want {
			if fmt.Sprint(h[k]) != fmt.Sprint(v) {
				t.Errorf("%+v: header %q = %v, want %v", tc.cfg, k, h[k], v)
			}
		}
		if fmt.Sprint(h["lambdas"]) != fmt.Sprint(tc.cfg.Lambdas) {
			t.Errorf("%+v: header lambdas %v", tc.cfg, h["lambdas"])
		}
		back, err := Decode(strings.NewReader(b.String()))
		if err != nil {
			t.Fatal(err)
		}
		got := back.Snapshot.State().Config
		if fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", m.Config()) {
			t.Errorf("decoded configuration %+v, want %+v", got, m.Config())
		}
	}
}
