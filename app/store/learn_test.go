package store

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flycl/flycl/app/deploy"
	"github.com/flycl/flycl/reject"
)

// TestLearn: Store.Learn against deploy.Model.Learn called directly on an
// identical model (the reference): the same classes, λ and scores, saved
// in the file and recorded so that an undo puts back the model as it was,
// the prepare step included; a refused input leaves the file's bytes as
// they were and names the data.
func TestLearn(t *testing.T) {
	ctx := context.Background()
	x := []float32{1, 2, 3, 3, 2, 1, 1, 1, 2, 2, 1, 1}
	names := []string{"a", "b", "a", "b"}
	keep := 0.5
	prepare := func(m *deploy.Model) error {
		return m.Model.SetCalibration(&reject.Calibration{Score: m.Model.Rejection().Score, Keep: keep})
	}
	for _, tc := range []struct {
		name    string
		data    LearnData
		prepare func(*deploy.Model) error
		wantErr string // "" succeeds
	}{
		{"learn", LearnData{X: x, D: 3, Names: names, Source: "t.npz"}, nil, ""},
		{"prepared", LearnData{X: x, D: 3, Names: names, Source: "t.npz"}, prepare, ""},
		{"bad names", LearnData{X: x, D: 3, Names: names[:3], Source: "t.npz"}, nil, "learn t.npz ("},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "m.flycl")
			st := create(t, path, true)
			if err := st.Update(ctx, learn(ctx, "z", 0)); err != nil { // a first version on disk
				t.Fatal(err)
			}
			st.Close()
			st = create(t, path, true) // the store's model and the reference both read from the file
			defer st.Close()
			was, _ := os.ReadFile(path)
			wasKeep := st.model.Model.Rejection().Keep
			ref, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			got, err := st.Learn(ctx, tc.data, deploy.LearnOptions{}, tc.prepare)
			if tc.wantErr != "" {
				now, _ := os.ReadFile(path)
				if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) || !bytes.Equal(now, was) {
					t.Fatalf("%v (file unchanged: %v), want an error starting %q", err, bytes.Equal(now, was), tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.prepare != nil {
				if err := tc.prepare(ref); err != nil {
					t.Fatal(err)
				}
			}
			want, err := ref.Learn(ctx, tc.data.X, tc.data.Names, nil, deploy.LearnOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got.Lambda != want.Lambda || got.Samples != want.Samples || !slices.Equal(got.Added, want.Added) {
				t.Errorf("λ %g, %d samples, added %v; reference λ %g, %d, %v", got.Lambda, got.Samples, got.Added, want.Lambda, want.Samples, want.Added)
			}
			// in memory the store's model is the reference bit for bit; the
			// file keeps G in float32, so the model read back scores within
			// float32 rounding amplified by this small ridge's conditioning
			// (below 100 on the grid 0.1..10): 1e-5 relative.
			onDisk, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			probe := []float32{1, 2, 2}
			a, _ := st.model.Model.Snapshot().Predictor().Scores(ctx, probe)
			b, _ := ref.Model.Snapshot().Predictor().Scores(ctx, probe)
			c, _ := onDisk.Model.Snapshot().Predictor().Scores(ctx, probe)
			if !slices.Equal(a, b) || st.model.Model.Rejection().Keep != ref.Model.Rejection().Keep || onDisk.Model.Rejection().Keep != ref.Model.Rejection().Keep {
				t.Errorf("scores %v keep %g (file: keep %g), reference %v keep %g", a, st.model.Model.Rejection().Keep, onDisk.Model.Rejection().Keep, b, ref.Model.Rejection().Keep)
			}
			for i := range b {
				if d := math.Abs(float64(c[i] - b[i])); d > 1e-5*math.Abs(float64(b[i]))+1e-7 {
					t.Errorf("score %d read back %g, reference %g", i, c[i], b[i])
				}
			}
			if _, err := st.Undo(ctx, nil); err != nil {
				t.Fatal(err)
			}
			if n := st.model.Model.Classes().Names(); !slices.Equal(n, []string{"z", "z2"}) || st.model.Model.Rejection().Keep != wasKeep {
				t.Errorf("after undo: classes %v keep %g, want [z z2] keep %g", n, st.model.Model.Rejection().Keep, wasKeep)
			}
		})
	}
}
