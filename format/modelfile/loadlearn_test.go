package modelfile

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/internal/codec"
)

// sameFile requires the model of a (read by Decode) and of b (read by
// LoadForLearning, a view of its model) to agree bit for bit: state, G,
// S and C.
func sameFile(t *testing.T, a, b *File) {
	t.Helper()
	sa, sb := a.Snapshot, b.Snapshot
	ta, tb := sa.State(), sb.State()
	if !slices.Equal(ta.Labels, tb.Labels) || !slices.Equal(ta.Counts, tb.Counts) || ta.Version != tb.Version ||
		ta.Lambda != tb.Lambda || ta.InputScale != tb.InputScale || len(ta.History) != len(tb.History) ||
		sa.Samples() != sb.Samples() || !sameBits(sa.S(), sb.S()) || !sameBits(sa.Coef(), sb.Coef()) {
		t.Fatalf("states differ: %+v\n%+v", ta, tb)
	}
	for i := range ta.Config.M {
		if !sameBits(codec.LowerRow(sa, i), codec.LowerRow(sb, i)) {
			t.Fatalf("G row %d differs", i)
		}
	}
	if (a.Pipeline == nil) != (b.Pipeline == nil) || (a.Pipeline != nil && *a.Pipeline != *b.Pipeline) {
		t.Fatalf("pipelines differ: %+v %+v", a.Pipeline, b.Pipeline)
	}
}

// loadBoth reads the bytes b as a file both ways: Decode (G as a packed
// copy) and LoadForLearning (G read straight into a model).
func loadBoth(t *testing.T, b []byte) (*File, error, *File, error) {
	fa, errA, fb, _, errB := loadBothModel(t, b)
	return fa, errA, fb, errB
}

func loadBothModel(t *testing.T, b []byte) (*File, error, *File, *flycl.Model, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "m.flycl")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	fa, errA := Decode(bytes.NewReader(b))
	fb, m, errB := LoadForLearning(path)
	if errB == nil && (m == nil || fb.Snapshot.Version() != m.Version()) {
		t.Fatal("LoadForLearning gave no model, or a view of another")
	}
	return fa, errA, fb, m, errB
}

// TestLoadForLearning: reading G straight into a model gives the model
// Decode gives (a model with a pipeline, and the format-1 fixture), and a
// model that learns on as the one Snapshot.Model builds.
func TestLoadForLearning(t *testing.T) {
	v1, err := os.ReadFile("testdata/v1.flycl")
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"current": goodFile(t), "format 1": v1} {
		fa, errA, fb, mb, errB := loadBothModel(t, b)
		if errA != nil || errB != nil {
			t.Fatalf("%s: %v / %v", name, errA, errB)
		}
		sameFile(t, fa, fb)
		ma, err := fa.Snapshot.Model()
		if err != nil {
			t.Fatal(err)
		}
		d := ma.InputDim()
		r := rand.New(rand.NewPCG(7, 8))
		x := make([]float32, 20*d)
		for i := range x {
			x[i] = float32(r.NormFloat64())
		}
		y := []int{}
		for i := range 20 {
			y = append(y, 90+i%2)
		}
		for _, m := range []*flycl.Model{ma, mb} {
			if _, err := m.Learn(context.Background(), x, y, nil); err != nil {
				t.Fatal(err)
			}
		}
		if !sameBits(ma.Snapshot().Coef(), mb.Snapshot().Coef()) || ma.Lambda() != mb.Lambda() {
			t.Fatalf("%s: the two models learn on differently", name)
		}
	}
}

// FuzzLoadForLearning: LoadForLearning accepts exactly the files Decode
// accepts, with the same content.
func FuzzLoadForLearning(f *testing.F) {
	good := goodFile(f)
	f.Add(good)
	if v1, err := os.ReadFile("testdata/v1.flycl"); err == nil {
		f.Add(v1)
	}
	f.Add(good[:len(good)-20])
	f.Fuzz(func(t *testing.T, b []byte) {
		fa, errA, fb, errB := loadBoth(t, b)
		if (errA == nil) != (errB == nil) {
			t.Fatalf("Decode: %v, LoadForLearning: %v", errA, errB)
		}
		if errA == nil {
			sameFile(t, fa, fb)
		}
	})
}
