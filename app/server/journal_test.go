package server

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/deploy"
	"github.com/flycl/flycl/app/store"
	"github.com/flycl/flycl/format/modelfile"
	"github.com/flycl/flycl/internal/codec"
)

// TestJournalledBackend: with Checkpoints, a change is made durable by
// appending it to the journal; the model file is rewritten only at a
// checkpoint (every Entries changes) and at Close. A reader of the file
// at any moment (as after a kill -9) gets exactly the acknowledged model:
// the same classes, version, λ and G and S to the bit as a backend that
// rewrote the file at every change, and the same predictions. A record
// torn by a kill mid-append is ignored.
func TestJournalledBackend(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "j.flycl")
	// λ ≥ 0.1: the replay on load refactors G + λI where the live model
	// updated its factor; with κ ≤ (trace G + λ)/λ small the two solves
	// agree far below the scores' tolerance (see sameLoaded)
	cfg := testConfig()
	cfg.Lambdas = []float64{0.1, 1, 10}
	create := func() (*flycl.Model, error) { return flycl.New(cfg, testDim) }
	jb, err := OpenFileWith(context.Background(), path, FileOptions{Create: create, Checkpoints: Checkpoints{Entries: 3}})
	if err != nil {
		t.Fatal(err)
	}
	ref, err := OpenFileWith(context.Background(), filepath.Join(dir, "ref.flycl"), FileOptions{Create: create})
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	r := rand.New(rand.NewPCG(70, 71))
	var idents []modelfile.Ident
	var learned []float32
	var learnedNames []string
	for step := range 6 {
		x, y := clusters(r, []int{step % 4, (step + 1) % 4}, 5)
		names := make([]string, len(y))
		for i, c := range y {
			names[i] = className(c) + string(rune('0'+step/4))
		}
		flat := slices.Concat(x...)
		learned, learnedNames = append(learned, flat...), append(learnedNames, names...)
		for _, b := range []*FileBackend{jb, ref} {
			if _, _, err := b.Learn(context.Background(), flat, names, deploy.LearnOptions{}); err != nil {
				t.Fatalf("step %d: %v", step, err)
			}
		}
		if step == 4 {
			// without data, exact from the journal (which holds the
			// class's samples), as the other backend's forget with them
			class := className(0) + "0"
			xs := deploy.Select(learned, testDim, learnedNames, class)
			if _, n, err := jb.ForgetExact(context.Background(), class, nil); err != nil || n != len(xs)/testDim {
				t.Fatalf("forget from the journal: %d samples, want %d: %v", n, len(xs)/testDim, err)
			}
			if _, err := ref.Forget(context.Background(), class, xs); err != nil {
				t.Fatal(err)
			}
		}
		id, err := modelfile.IdentOf(path)
		if err != nil {
			t.Fatal(err)
		}
		idents = append(idents, id)
		// what a reader (or a restart after kill -9) sees now
		sameLoaded(t, path, ref.path)
	}
	// the file was written at the first learn and at the checkpoints
	// only: changes 1 (creation), 4 (the journal held 2 = Entries-1) and
	// 7 (the forget was change 6)
	rewritten := 0
	for i := 1; i < len(idents); i++ {
		if !idents[i].Same(idents[i-1]) {
			rewritten++
		}
	}
	if rewritten != 2 {
		t.Errorf("the model file was rewritten %d times over 6 learns and a forget, want 2 (checkpoints)", rewritten)
	}
	// a record torn by a kill mid-append: ignored
	jf, err := os.OpenFile(modelfile.JournalPath(path), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	jf.Write([]byte{200, 0, 0, 0, 1, 2, 3, 4, 5})
	jf.Close()
	sameLoaded(t, path, ref.path)
	// Close writes a checkpoint: the journal is empty after it
	if err := jb.Close(); err != nil {
		t.Fatal(err)
	}
	m, err := store.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if m.CheckpointVersion() != m.Model.Version() {
		t.Fatalf("after Close: checkpoint version %d, model %d", m.CheckpointVersion(), m.Model.Version())
	}
	sameLoaded(t, path, ref.path)
}

// sameLoaded compares two model files as a reader loads them (journal
// replayed): classes, version, λ, G and S to the bit, and top-1 and
// scores of probe vectors (C may differ in rounding: the journalled file
// solves its last changes again on load, where the other kept its factor).
func sameLoaded(t *testing.T, a, b string) {
	t.Helper()
	ma, err := store.Load(a)
	if err != nil {
		t.Fatal(err)
	}
	mb, err := store.Load(b)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ma.Model.Classes().Names(), mb.Model.Classes().Names()) || ma.Model.Version() != mb.Model.Version() || ma.Model.Lambda() != mb.Model.Lambda() || ma.Model.Samples() != mb.Model.Samples() {
		t.Fatalf("loaded: %v v%d λ=%g n=%d, want %v v%d λ=%g n=%d", ma.Model.Classes().Names(), ma.Model.Version(), ma.Model.Lambda(), ma.Model.Samples(),
			mb.Model.Classes().Names(), mb.Model.Version(), mb.Model.Lambda(), mb.Model.Samples())
	}
	sa, sb := ma.Model.Snapshot(), mb.Model.Snapshot()
	for i := range ma.Model.Config().M {
		if !slices.Equal(codec.LowerRow(sa, i), codec.LowerRow(sb, i)) {
			t.Fatalf("G row %d differs", i)
		}
	}
	if !slices.Equal(sa.S(), sb.S()) {
		t.Fatal("S differs")
	}
	r := rand.New(rand.NewPCG(5, 5))
	x, _ := clusters(r, []int{0, 1, 2, 3}, 5)
	pa, err := ma.Model.Predictor().Scores(context.Background(), slices.Concat(x...))
	if err != nil {
		t.Fatal(err)
	}
	pb, err := mb.Model.Predictor().Scores(context.Background(), slices.Concat(x...))
	if err != nil {
		t.Fatal(err)
	}
	trace := 0.0
	for i := range ma.Model.Config().M {
		row := codec.LowerRow(sa, i)
		trace += float64(row[len(row)-1])
	}
	tol := float64(ma.Model.Config().M) * 0x1p-24 * (trace + ma.Model.Lambda()) / ma.Model.Lambda()
	scale := 0.0
	for _, v := range pb {
		scale = math.Max(scale, math.Abs(float64(v)))
	}
	c := len(ma.Model.Classes().Names())
	for i := 0; i < len(pa)/c; i++ {
		ra, rb := pa[i*c:(i+1)*c], pb[i*c:(i+1)*c]
		if slices.Index(ra, slices.Max(ra)) != slices.Index(rb, slices.Max(rb)) {
			t.Fatalf("probe %d: top-1 differs: %v vs %v", i, ra, rb)
		}
		for j := range ra {
			// two Cholesky solves of one float32 system: a relative error
			// of about m·ε₃₂·κ, κ ≤ (trace G + λ)/λ
			if d := math.Abs(float64(ra[j] - rb[j])); d > tol*scale {
				t.Fatalf("probe %d class %d: %g vs %g (tolerance %g)", i, j, ra[j], rb[j], tol*scale)
			}
		}
	}
}
