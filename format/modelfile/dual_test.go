package modelfile

import (
	"bytes"
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flycl/flycl"
)

// dualModel returns a model in the dual form that learned n samples of
// three classes.
func dualModel(t testing.TB, cfg flycl.Config, n int) *flycl.Model {
	t.Helper()
	m, err := flycl.New(cfg, d)
	if err != nil {
		t.Fatal(err)
	}
	labels, err := m.LabelsFor([]string{"cat", "dog", "bench"})
	if err != nil {
		t.Fatal(err)
	}
	x, y := task(3, labels, n)
	if _, err := m.Learn(context.Background(), x, y, nil); err != nil {
		t.Fatal(err)
	}
	if f, _ := m.Form(); f != "dual" {
		t.Fatalf("form %s", f)
	}
	return m
}

var dualCfg = flycl.Config{M: 60, P: 4, K: 18, Seed: 5, LambdaScale: flycl.LambdaRelative, WidenGrid: true, Dual: 100}

func dualFile(t testing.TB) []byte {
	var b bytes.Buffer
	if err := Encode(&b, &File{Snapshot: dualModel(t, dualCfg, 12).Snapshot()}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestDualFileRoundTrip: a model in the dual form is written as version
// 5 and read back in the dual form, with the same classifier, learning on
// as the original does (by Load and by LoadForLearning).
func TestDualFileRoundTrip(t *testing.T) {
	ctx := context.Background()
	m := dualModel(t, dualCfg, 12)
	path := filepath.Join(t.TempDir(), "m.flycl")
	if err := SaveModel(path, m); err != nil {
		t.Fatal(err)
	}
	f, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if f.Format != Version || Version != 5 {
		t.Errorf("dual model written as version %d", f.Format)
	}
	_, lm, err := LoadForLearning(path)
	if err != nil {
		t.Fatal(err)
	}
	sm, err := f.Snapshot.Model()
	if err != nil {
		t.Fatal(err)
	}
	x, y := task(4, []int{0, 1, 2}, 6)
	m.Learn(ctx, x, y, nil)
	for _, other := range []*flycl.Model{lm, sm} {
		if form, _ := other.Form(); form != "dual" {
			t.Fatalf("loaded model in form %s", form)
		}
		if _, err := other.Learn(ctx, x, y, nil); err != nil {
			t.Fatal(err)
		}
		a, _ := m.Predictor().Scores(ctx, x)
		b, _ := other.Predictor().Scores(ctx, x)
		if !slices.Equal(a, b) {
			t.Error("a loaded dual model learns on differently from the original")
		}
	}
	// a primal model is still written as version 4
	p, _ := flycl.New(flycl.Config{M: 40, P: 3, K: 12, Lambdas: []float64{1}}, d)
	p.Learn(ctx, x, y, nil)
	if err := SaveModel(path, p); err != nil {
		t.Fatal(err)
	}
	if f, err := Load(path); err != nil || f.Format != PrimalVersion {
		t.Errorf("primal model: %v, version %d", err, f.Format)
	}
}

// TestDualFileSize: 15 samples at m = 10000, k = 3000 in the dual form
// fit in 1 MiB (15·3000 non-zeros of 8 bytes and 3 classifier rows of
// 40 kB), where the primal G alone is 200 MB.
func TestDualFileSize(t *testing.T) {
	cfg := flycl.Config{M: 10000, P: 5, K: 3000, LambdaScale: flycl.LambdaRelative, WidenGrid: true, Dual: 100}
	var b bytes.Buffer
	if err := Encode(&b, &File{Snapshot: dualModel(t, cfg, 15).Snapshot()}); err != nil {
		t.Fatal(err)
	}
	if b.Len() > 1<<20 {
		t.Errorf("file of %d bytes, more than 1 MiB", b.Len())
	}
	t.Logf("%d bytes", b.Len())
}

// TestDualFileBad: headers that do not fit the dual data are refused with
// a message naming the field.
func TestDualFileBad(t *testing.T) {
	good := dualFile(t)
	for _, c := range []struct {
		name    string
		version uint32
		edit    func(h map[string]any)
		want    string
	}{
		{"rows", Version, func(h map[string]any) { h["dual_rows"] = 11.0 }, "samples"},
		{"nonzeros", Version, func(h map[string]any) { h["dual_nonzeros"] = h["dual_nonzeros"].(float64) - 1 }, "non-zeros"},
		{"huge", Version, func(h map[string]any) { h["dual_rows"], h["samples"] = float64(1<<30), float64(1<<30) }, "dual_rows"},
		{"form", Version, func(h map[string]any) { h["form"] = "primal" }, "form"},
		{"old", PrimalVersion, func(h map[string]any) {}, "version 4"},
	} {
		h, data := split(t, good)
		c.edit(h)
		_, err := Decode(bytes.NewReader(forge(t, c.version, h, data)))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one naming %q", c.name, err, c.want)
		}
	}
}
