package modelfile

import (
	"bufio"
	"context"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/internal/codec"
	"github.com/flycl/flycl/projection"
)

const d = 12

var cfg = flycl.Config{M: 300, P: 5, K: 90, Seed: 11, Lambdas: []float64{1, 10, 100, 1000}}

func task(seed uint64, labels []int, n int) ([]float32, []int) {
	r := rand.New(rand.NewPCG(seed, 3))
	x := make([]float32, n*d)
	y := make([]int, n)
	for i := 0; i < n; i++ {
		y[i] = labels[i%len(labels)]
		mr := rand.New(rand.NewPCG(uint64(y[i]), 5))
		for j := 0; j < d; j++ {
			x[i*d+j] = float32(mr.NormFloat64() + 0.7*r.NormFloat64())
		}
	}
	return x, y
}

var tasks = [][]int{{5, 1}, {9, 2, 7}, {30}}

func learn(t *testing.T, m *flycl.Model, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		x, y := task(uint64(i), tasks[i], 60)
		if _, err := m.Learn(context.Background(), x, y, nil); err != nil {
			t.Fatal(err)
		}
	}
}

func sameBits(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

// TestResumeIsBitExact: a model saved after task 1, loaded, and taught
// tasks 2 and 3 equals the model taught all three without a break, bit for
// bit (G, S, C and the scores).
func TestResumeIsBitExact(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.flycl")
	full, _ := flycl.New(cfg, d)
	learn(t, full, 0, 3)

	part, _ := flycl.New(cfg, d)
	learn(t, part, 0, 1)
	if err := SaveModel(path, part); err != nil {
		t.Fatal(err)
	}
	resumed, err := LoadModel(path)
	if err != nil {
		t.Fatal(err)
	}
	if !sameBits(codec.State(resumed).Coef, codec.State(part).Coef) || !slices.Equal(resumed.Classes().Labels(), part.Classes().Labels()) {
		t.Fatal("loaded model differs from the saved one")
	}
	learn(t, resumed, 1, 3)

	a, b := codec.State(full), codec.State(resumed)
	if !sameBits(a.Coef, b.Coef) {
		t.Fatal("resumed classifier differs from the uninterrupted one")
	}
	if !slices.Equal(a.Labels, b.Labels) || a.Lambda != b.Lambda || len(b.History) != 3 {
		t.Fatalf("state differs: %v/%v %g/%g %d", a.Labels, b.Labels, a.Lambda, b.Lambda, len(b.History))
	}
	for i, r := range a.History {
		if r.Lambda != b.History[i].Lambda || !slices.Equal(r.GCV, b.History[i].GCV) {
			t.Fatalf("history %d differs", i)
		}
	}
	ga, gb := full.Snapshot(), resumed.Snapshot()
	for i := 0; i < cfg.M; i++ {
		if !sameBits(codec.LowerRow(ga, i), codec.LowerRow(gb, i)) {
			t.Fatalf("G row %d differs", i)
		}
	}
	x, _ := task(99, []int{1, 2, 5, 7, 9, 30}, 30)
	sa, _ := full.Predictor().Scores(context.Background(), x)
	sb, _ := resumed.Predictor().Scores(context.Background(), x)
	if !sameBits(sa, sb) {
		t.Fatal("scores differ")
	}
}

func TestExplicitProjectionRoundTrip(t *testing.T) {
	dir := t.TempDir()
	w, err := ImportProjection("testdata/dense_w.npz")
	if err != nil {
		t.Fatal(err)
	}
	c := cfg
	c.K = 3
	m, err := flycl.NewWithProjection(c, w)
	if err != nil {
		t.Fatal(err)
	}
	x, y := task(1, []int{1, 2}, 20)
	if _, err := m.Learn(context.Background(), x[:101], y, nil); err == nil {
		t.Fatal("101 values with d=5: no error")
	}
	x5 := make([]float32, 20*5)
	for i := range x5 {
		x5[i] = x[i]
	}
	if _, err := m.Learn(context.Background(), x5, y, nil); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "explicit.flycl")
	if err := SaveModel(path, m); err != nil {
		t.Fatal(err)
	}
	back, err := LoadModel(path)
	if err != nil {
		t.Fatal(err)
	}
	if codec.Projection(back).Seed != nil || !slices.Equal(codec.Projection(back).Vals, w.Vals) {
		t.Fatal("explicit W not preserved")
	}
	if !sameBits(codec.State(back).Coef, codec.State(m).Coef) {
		t.Fatal("classifier not preserved")
	}
}

func TestImportProjectionFromNumPy(t *testing.T) {
	want := readText(t, "testdata/dense_w.txt")
	for _, f := range []string{"testdata/dense_w.npz", "testdata/sparse_w.npz"} {
		w, err := ImportProjection(f)
		if err != nil {
			t.Fatal(err)
		}
		if w.M != 6 || w.D != 5 || w.P != 2 {
			t.Fatalf("%s: shape %d×%d p=%d", f, w.M, w.D, w.P)
		}
		for i, v := range w.Dense() {
			if float64(v) != float64(float32(want[i])) {
				t.Fatalf("%s: W[%d]=%g want %g", f, i, v, want[i])
			}
		}
	}
	if _, err := ImportProjection("testdata/ragged_w.npz"); err == nil || !strings.Contains(err.Error(), "non-zeros") {
		t.Errorf("ragged W: %v", err)
	}
}

func readText(t *testing.T, path string) []float64 {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []float64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		for _, s := range strings.Fields(sc.Text()) {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, v)
		}
	}
	return out
}

func TestExportImportSeeded(t *testing.T) {
	w, _ := projection.Generate(40, 9, 3, 77)
	path := filepath.Join(t.TempDir(), "w.npz")
	if err := ExportProjection(path, w); err != nil {
		t.Fatal(err)
	}
	back, err := ImportProjection(path)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(back.Cols, w.Cols) || !slices.Equal(back.Vals, w.Vals) || back.Seed == nil || *back.Seed != 77 {
		t.Fatal("round trip changed W")
	}
}

// TestCorruptFiles damages a saved model in every way we can think of; each
// must give an error naming the file, never a panic or a wrong model.
func TestCorruptFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "good.flycl")
	m, _ := flycl.New(cfg, d)
	learn(t, m, 0, 2)
	if err := SaveModel(path, m); err != nil {
		t.Fatal(err)
	}
	good, _ := os.ReadFile(path)
	hlen := int(good[12]) | int(good[13])<<8
	cases := map[string]struct {
		data []byte
		want string
	}{
		"empty":        {nil, "too short"},
		"magic":        {append([]byte("NOTAFLYC"), good[8:]...), "not a Fly-CL model"},
		"version":      {patch(good, 8, 9), "version 9"},
		"header json":  {patch(good, 16, '#'), "corrupt header"},
		"header only":  {good[:16+hlen], "truncated"},
		"half":         {good[:len(good)/2], "truncated"},
		"no end":       {good[:len(good)-3], "truncated"},
		"trailing":     {append(slices.Clone(good), 0), "trailing"},
		"G bit flip":   {patch(good, 16+hlen+100, good[16+hlen+100]^4), "checksum mismatch"},
		"S bit flip":   {patch(good, len(good)-200, good[len(good)-200]^1), "checksum mismatch"},
		"crc bit flip": {patch(good, len(good)-12, good[len(good)-12]^1), "checksum mismatch"},
	}
	for name, tc := range cases {
		p := filepath.Join(dir, strings.ReplaceAll(name, " ", "_"))
		os.WriteFile(p, tc.data, 0o644)
		_, err := Load(p)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: got %v, want an error naming the file and saying %q", name, err, tc.want)
			continue
		}
		// a damaged file says the way out; another format or version
		// (a photo given as --model, a newer flycl's file) is not damaged
		wayOut := "learn anew with flycl learn --model " + p
		if other, given := name == "magic" || name == "version", strings.Contains(err.Error(), wayOut); given == other {
			t.Errorf("%s: %v: the way out (%q) given: %v, want %v", name, err, wayOut, given, !other)
		}
	}
	if _, err := Load(filepath.Join(dir, "missing")); err == nil {
		t.Error("missing file: no error")
	}
}

func patch(b []byte, at int, v byte) []byte {
	c := slices.Clone(b)
	c[at] = v
	return c
}

func TestSaveNeverLeavesPartialFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.flycl")
	m, _ := flycl.New(cfg, d)
	learn(t, m, 0, 1)
	if err := SaveModel(path, m); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	// Saving into a missing directory fails without touching anything.
	if err := SaveModel(filepath.Join(dir, "no", "such", "dir", "m.flycl"), m); err == nil {
		t.Fatal("no error")
	}
	learn(t, m, 1, 2)
	if err := SaveModel(path, m); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(path)
	if slices.Equal(before, after) {
		t.Fatal("second save did not replace the file")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("temporary files left: %v", ents)
	}
}
