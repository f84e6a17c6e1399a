package modelfile

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/internal/codec"
)

// goodFile returns the bytes of a small valid model file with names,
// counts and a pipeline.
func goodFile(t testing.TB) []byte {
	t.Helper()
	m, err := flycl.New(flycl.Config{M: 40, P: 3, K: 12, Seed: 5, Lambdas: []float64{1, 10}}, d)
	if err != nil {
		t.Fatal(err)
	}
	labels, err := m.LabelsFor([]string{"cat", "dog"})
	if err != nil {
		t.Fatal(err)
	}
	x, y := task(1, labels, 12)
	if _, err := m.Learn(context.Background(), x, y, nil); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	f := &File{Snapshot: m.Snapshot(), Pipeline: &Pipeline{Backbone: "squeezenet", Name: "squeezenet1.1", WeightsHash: "abc", Output: "features", Dim: d,
		Transform: Transform{Preset: "imagenet", Resize: 256, Filter: "bilinear", Crop: 224, Mean: [3]float32{0.4, 0.4, 0.4}, Std: [3]float32{0.2, 0.2, 0.2}}}}
	if err := Encode(&b, f); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// split returns a file's header (as a JSON object) and its data block
// (between the header and the CRC).
func split(t testing.TB, file []byte) (map[string]any, []byte) {
	hlen := int(binary.LittleEndian.Uint32(file[12:]))
	var h map[string]any
	if err := json.Unmarshal(file[16:16+hlen], &h); err != nil {
		t.Fatal(err)
	}
	return h, slices.Clone(file[16+hlen : len(file)-12])
}

// forge assembles a file with a valid CRC from a header and a data block.
func forge(t testing.TB, version uint32, h map[string]any, data []byte) []byte {
	hj, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	var pre [16]byte
	copy(pre[:], magic)
	binary.LittleEndian.PutUint32(pre[8:], version)
	binary.LittleEndian.PutUint32(pre[12:], uint32(len(hj)))
	b.Write(pre[:])
	b.Write(hj)
	b.Write(data)
	var tail [12]byte
	binary.LittleEndian.PutUint32(tail[:], crc32.Checksum(b.Bytes(), castagnoli))
	copy(tail[4:], endMark)
	b.Write(tail[:])
	return b.Bytes()
}

func setFloat(data []byte, i int, v float32) []byte {
	out := slices.Clone(data)
	binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(v))
	return out
}

// TestForgedFilesRejected: files whose bytes are intact (valid CRC) but
// whose content makes no sense are refused with an error naming the
// field, before any allocation of what the header claims (a header with
// d = 2^40 used to exhaust memory in projection.Generate).
func TestForgedFilesRejected(t *testing.T) {
	good := goodFile(t)
	if h, data := split(t, good); true {
		if _, err := Decode(bytes.NewReader(forge(t, Version, h, data))); err != nil {
			t.Fatalf("re-forged good file: %v", err)
		}
	}
	const m, nc = 40, 2
	gLen := m * (m + 1) / 2
	cases := []struct {
		name string
		edit func(h map[string]any, data []byte) []byte
		want string
	}{
		{"d=2^40", func(h map[string]any, data []byte) []byte { h["d"] = 1 << 40; return data }, "d=1099511627776"},
		{"m=2^40", func(h map[string]any, data []byte) []byte { h["m"] = 1 << 40; return data }, "m=1099511627776"},
		{"m=0", func(h map[string]any, data []byte) []byte { h["m"] = 0; return data }, "m=0"},
		{"p>d", func(h map[string]any, data []byte) []byte { h["p"] = d + 1; return data }, "p=13"},
		{"k>m", func(h map[string]any, data []byte) []byte { h["k"] = m + 1; return data }, "k=41"},
		{"d=MaxD+1", func(h map[string]any, data []byte) []byte { h["d"] = MaxD + 1; return data }, "d=65537 outside [1, 65536]"},
		{"negative samples", func(h map[string]any, data []byte) []byte { h["samples"] = -5; return data }, "negative sample count"},
		{"negative count", func(h map[string]any, data []byte) []byte { h["counts"] = []int{-3, 6}; return data }, "negative sample count -3"},
		{"counts exceed samples", func(h map[string]any, data []byte) []byte { h["counts"] = []int{600, 6}; return data }, "add up to 606"},
		{"negative label", func(h map[string]any, data []byte) []byte { h["labels"] = []int{-7, 1}; return data }, "negative label -7"},
		{"duplicate label", func(h map[string]any, data []byte) []byte { h["labels"] = []int{1, 1}; return data }, "label 1 appears twice"},
		{"duplicate name", func(h map[string]any, data []byte) []byte { h["names"] = []string{"x", "x"}; return data }, "same name"},
		{"empty lambda grid", func(h map[string]any, data []byte) []byte { h["lambdas"] = []float64{}; return data }, "empty lambda grid"},
		{"negative grid lambda", func(h map[string]any, data []byte) []byte { h["lambdas"] = []float64{-1}; return data }, "lambdas [-1]: -1 is not a positive"},
		{"negative history lambda", func(h map[string]any, data []byte) []byte {
			h["history"].([]any)[0].(map[string]any)["lambda"] = -2.0
			return data
		}, "history step 0 has lambda -2"},
		{"zero classifier lambda", func(h map[string]any, data []byte) []byte { h["lambda"] = 0; return data }, "lambda of the classifier is 0"},
		{"NaN in G", func(h map[string]any, data []byte) []byte { return setFloat(data, 7, float32(math.NaN())) }, "is NaN"},
		{"Inf in G", func(h map[string]any, data []byte) []byte { return setFloat(data, 3, float32(math.Inf(1))) }, "G[2][0] is +Inf"},
		{"negative G diagonal", func(h map[string]any, data []byte) []byte { return setFloat(data, 2, -1) }, "G[1][1] = -1"},
		{"NaN in S", func(h map[string]any, data []byte) []byte { return setFloat(data, gLen+5, float32(math.NaN())) }, "S[0][5] is NaN"},
		{"NaN in C", func(h map[string]any, data []byte) []byte { return setFloat(data, gLen+nc*m+m+1, float32(math.NaN())) }, "classifier value 41 (class 1) is NaN"},
		{"unknown W kind", func(h map[string]any, data []byte) []byte { h["w"] = "magic"; return data }, "w=\"magic\""},
		{"W fingerprint", func(h map[string]any, data []byte) []byte { h["w_sha256"] = strings.Repeat("0", 64); return data }, "fingerprint"},
		{"no W fingerprint", func(h map[string]any, data []byte) []byte { delete(h, "w_sha256"); return data }, "no fingerprint"},
		{"CRC-32C in a format-4 file", func(h map[string]any, data []byte) []byte {
			delete(h, "w_sha256")
			h["w_crc32c"] = 1
			return data
		}, "no fingerprint"},
		{"bad pipeline", func(h map[string]any, data []byte) []byte {
			h["pipeline"].(map[string]any)["weights_hash"] = ""
			return data
		}, "pipeline: no weights hash"},
		{"pipeline dim", func(h map[string]any, data []byte) []byte { h["pipeline"].(map[string]any)["dim"] = 99; return data }, "dimension 99"},
		{"class without counts", func(h map[string]any, data []byte) []byte { delete(h, "counts"); return data }, "no class counts"},
		{"names count", func(h map[string]any, data []byte) []byte { h["names"] = []string{"a"}; return data }, "1 class names for 2 classes"},
	}
	dir := t.TempDir()
	for _, tc := range cases {
		h, data := split(t, good)
		file := forge(t, Version, h, tc.edit(h, data))
		_, err := Decode(bytes.NewReader(file))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Decode gave %v, want an error saying %q", tc.name, err, tc.want)
		}
		p := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_"))
		os.WriteFile(p, file, 0o644)
		if _, err := Load(p); err == nil || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: Load gave %v, want an error naming the file", tc.name, err)
		}
	}
}

// TestReadsVersion1: testdata/v1.flycl was written by the format-1 code
// (commit c2b4f4f) before this format existed; it loads, and its scores
// are those the writing code computed (testdata/v1_scores.txt), within
// the rounding of the BLAS kernels.
func TestReadsVersion1(t *testing.T) {
	f, err := Load("testdata/v1.flycl")
	if err != nil {
		t.Fatal(err)
	}
	if f.Format != 1 {
		t.Fatalf("format %d", f.Format)
	}
	p := f.Snapshot.Predictor()
	if !slices.Equal(p.Classes().Labels(), []int{1, 5, 2, 9}) || !slices.Equal(p.Classes().Names(), []string{"1", "5", "2", "9"}) {
		t.Fatalf("classes %v names %v", p.Classes().Labels(), p.Classes().Names())
	}
	if !slices.Equal(p.Classes().Counts(), []int{-1, -1, -1, -1}) || p.Version() != 2 || p.Samples() != 48 {
		t.Fatalf("counts %v version %d samples %d", p.Classes().Counts(), p.Version(), p.Samples())
	}
	want := readHex(t, "testdata/v1_scores.txt")
	x, _ := task(99, []int{1, 2, 5, 9}, 8)
	got, err := p.Scores(context.Background(), x)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d scores, want %d", len(got), len(want))
	}
	// The scores were computed by the format-1 code with this machine's
	// default OpenBLAS kernels; other kernels (OPENBLAS_CORETYPE) round
	// differently. Each score is Σ_j h_j·C_cj with h = topk(W x): two
	// evaluations differ by at most 2γ_m·Σ_j|h_j||C_cj| (the dot product)
	// plus Σ_j|Δh_j||C_cj|, |Δh_j| ≤ 2γ_d·Σ_i|W_ji||x_i| (the projection),
	// γ_n = n·u/(1−n·u), u = 2⁻²⁴.
	model, err := f.Snapshot.Model()
	if err != nil {
		t.Fatal(err)
	}
	h, _ := codec.Expand(context.Background(), model, x)
	w := f.Snapshot.Projection().Dense()
	coef := f.Snapshot.Coef()
	mm, nc := model.Config().M, p.Classes().Len()
	gamma := func(n int) float64 { u := math.Ldexp(1, -24); return float64(n) * u / (1 - float64(n)*u) }
	for i := range got {
		s, c := i/nc, i%nc
		var bound float64
		for j := 0; j < mm; j++ {
			var wx float64
			for q := 0; q < d; q++ {
				wx += math.Abs(float64(w[j*d+q]) * float64(x[s*d+q]))
			}
			cj := math.Abs(float64(coef[c*mm+j]))
			bound += 2*gamma(mm)*math.Abs(float64(h[s*mm+j]))*cj + 2*gamma(d)*wx*cj
		}
		if diff := math.Abs(float64(got[i]) - float64(math.Float32frombits(want[i]))); diff > bound {
			t.Fatalf("score %d: %v, the format-1 code computed %v (differ by %g > bound %g)", i, got[i], math.Float32frombits(want[i]), diff, bound)
		}
	}
	// Learning continues, and the rewritten file is version 2.
	x, y := task(3, []int{30}, 10)
	if _, err := model.Learn(context.Background(), x, y, nil); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "v2.flycl")
	if err := SaveModel(path, model); err != nil {
		t.Fatal(err)
	}
	back, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if back.Format != PrimalVersion || back.Snapshot.Version() != 3 || !slices.Equal(back.Snapshot.Predictor().Classes().Counts(), []int{-1, -1, -1, -1, 10}) {
		t.Fatalf("rewritten: format %d version %d counts %v", back.Format, back.Snapshot.Version(), back.Snapshot.Predictor().Classes().Counts())
	}
}

func readHex(t *testing.T, path string) []uint32 {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []uint32
	for _, line := range strings.Split(string(b), "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		v, err := strconv.ParseUint(line, 16, 32)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, uint32(v))
	}
	return out
}

// TestEncodeDecodeRoundTrip: everything the file carries comes back.
func TestEncodeDecodeRoundTrip(t *testing.T) {
	good := goodFile(t)
	f, err := Decode(bytes.NewReader(good))
	if err != nil {
		t.Fatal(err)
	}
	p := f.Snapshot.Predictor()
	if !slices.Equal(p.Classes().Names(), []string{"cat", "dog"}) || !slices.Equal(p.Classes().Counts(), []int{6, 6}) || p.Version() != 1 {
		t.Fatalf("names %v counts %v version %d", p.Classes().Names(), p.Classes().Counts(), p.Version())
	}
	if f.Pipeline == nil || f.Pipeline.Backbone != "squeezenet" || f.Pipeline.Transform.Crop != 224 || f.Created.IsZero() {
		t.Fatalf("pipeline %+v created %v", f.Pipeline, f.Created)
	}
	var b bytes.Buffer
	created := f.Created
	if err := Encode(&b, f); err != nil {
		t.Fatal(err)
	}
	g, err := Decode(&b)
	if err != nil {
		t.Fatal(err)
	}
	if !g.Created.Equal(created) || *g.Pipeline != *f.Pipeline {
		t.Fatal("created time or pipeline changed on re-encoding")
	}
	if !sameBits(g.Snapshot.Coef(), f.Snapshot.Coef()) || !sameBits(g.Snapshot.S(), f.Snapshot.S()) {
		t.Fatal("data changed on re-encoding")
	}
	// Decode from a reader notices trailing bytes too.
	if _, err := Decode(bytes.NewReader(append(slices.Clone(good), 1))); err == nil || !strings.Contains(err.Error(), "trailing") {
		t.Fatalf("trailing byte: %v", err)
	}
}

// FuzzDecode: no input makes Decode panic or allocate beyond bounds; what
// it accepts re-encodes to a file it accepts again with the same content.
func FuzzDecode(f *testing.F) {
	good := goodFile(f)
	f.Add(good)
	f.Add(calibratedFile(f))
	f.Add(dualFile(f))
	for _, p := range []string{"testdata/v1.flycl", "testdata/v3.flycl"} {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add(good[:len(good)/2])
	f.Add([]byte(magic))
	h, data := split(f, good)
	h["d"] = 1 << 40
	f.Add(forge(f, Version, h, data))
	f.Fuzz(func(t *testing.T, b []byte) {
		file, err := Decode(bytes.NewReader(b))
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := Encode(&out, file); err != nil {
			t.Fatalf("accepted file does not re-encode: %v", err)
		}
		back, err := Decode(&out)
		if err != nil {
			t.Fatalf("re-encoded file rejected: %v", err)
		}
		if !sameBits(back.Snapshot.S(), file.Snapshot.S()) || back.Snapshot.Version() != file.Snapshot.Version() ||
			back.Snapshot.State().Rejection != file.Snapshot.State().Rejection ||
			!slices.Equal(back.Snapshot.State().CalibrationPool, file.Snapshot.State().CalibrationPool) {
			t.Fatal("re-encoded file differs")
		}
	})
}

// TestGCVScopeRoundTrip: a model that chooses λ by GCV on all samples
// keeps that setting (and its steps' records) through a file.
func TestGCVScopeRoundTrip(t *testing.T) {
	c := cfg
	c.GCVScope = flycl.GCVAll
	m, err := flycl.New(c, d)
	if err != nil {
		t.Fatal(err)
	}
	learn(t, m, 0, 1)
	var b bytes.Buffer
	if err := Encode(&b, &File{Snapshot: m.Snapshot()}); err != nil {
		t.Fatal(err)
	}
	f, err := Decode(&b)
	if err != nil {
		t.Fatal(err)
	}
	back, _ := f.Snapshot.Model()
	if back.Config().GCVScope != flycl.GCVAll || back.History()[0].GCVScope != flycl.GCVAll || !slices.Equal(back.History()[0].Grid, m.History()[0].Grid) {
		t.Fatalf("scope %v, step scope %v", back.Config().GCVScope, back.History()[0].GCVScope)
	}
	learn(t, m, 1, 2)
	learn(t, back, 1, 2)
	if !sameBits(codec.State(m).Coef, codec.State(back).Coef) {
		t.Fatal("learning after the round trip differs")
	}
}

// TestEncodeRefusesWhatDecodeRefuses: Encode runs Decode's checks on the
// pipeline and the state, so it never writes a file that cannot be
// loaded again (the destination is left untouched by the refused write).
func TestEncodeRefusesWhatDecodeRefuses(t *testing.T) {
	f, err := Decode(bytes.NewReader(goodFile(t)))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		edit func(p *Pipeline)
		want string
	}{
		{"pipeline dimension", func(p *Pipeline) { p.Dim = d + 1 }, "backbone dimension"},
		{"no weights hash", func(p *Pipeline) { p.WeightsHash = "" }, "no weights hash"},
		{"precision", func(p *Pipeline) { p.Precision = "fp8" }, "precision"},
	} {
		p := *f.Pipeline
		tc.edit(&p)
		var b bytes.Buffer
		err := Encode(&b, &File{Snapshot: f.Snapshot, Pipeline: &p})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Fatalf("%s: Encode: %v", tc.name, err)
		}
		if b.Len() != 0 {
			t.Fatalf("%s: a refused Encode wrote %d bytes", tc.name, b.Len())
		}
	}
}
