package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flycl/flycl/app/deploy"
	"github.com/flycl/flycl/format/modelfile"
	"github.com/flycl/flycl/reject"
)

// TestLearnNew: a missing model file is created by Make for the data's
// dimension and pipeline, and taught; an existing one is taught as it is,
// Make not called; W for an existing file is refused before anything, as
// an *OptionError wrapping ErrCreateOnly that a Name turns into a flag.
// Extracting starts the W of a missing model without a W file (Start,
// for the features' dimension), which Make is given; for an existing
// model or a W file it starts nothing.
func TestLearnNew(t *testing.T) {
	ctx := context.Background()
	data := LearnData{X: []float32{1, 2, 3, 3, 2, 1, 1, 1, 2, 2, 1, 1}, D: 3, Names: []string{"a", "b", "a", "b"}, Source: "t.npz"}
	for _, tc := range []struct {
		name    string
		exists  bool
		w       string
		wantErr string // "" succeeds
		made    bool   // Make called
	}{
		{"created", false, "", "", true},
		{"created with W", false, "w.npz", "", true},
		{"exists", true, "", "", false},
		{"W for an existing model", true, "w.npz", "--w applies when a model is created; ", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "m.flycl")
			if tc.exists {
				st := create(t, path, false)
				if err := st.Update(ctx, learn(ctx, "z", 0)); err != nil {
					t.Fatal(err)
				}
				st.Close()
			}
			st, err := Open(ctx, path, &Options{Command: t.Name()})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			var made struct {
				d     int
				w     string
				ahead *deploy.Ahead
			}
			var started []*deploy.Ahead
			n := NewModel{W: tc.w, Make: func(ctx context.Context, d int, w string, p *modelfile.Pipeline, ahead *deploy.Ahead) (*deploy.Model, error) {
				made.d, made.w, made.ahead = d, w, ahead
				return ahead.New(ctx, cfg, d, p)
			}, Start: func(ctx context.Context, d int) *deploy.Ahead {
				if d != data.D {
					t.Errorf("Start for d = %d, want %d", d, data.D)
				}
				a := deploy.StartNew(ctx, cfg, d)
				started = append(started, a)
				return a
			}}
			defer n.Stop()
			st.Extracting(ctx, &n, data.D)
			st.Extracting(ctx, &n, data.D) // once
			want := 0
			if !tc.exists && tc.w == "" {
				want = 1
			}
			if len(started) != want {
				t.Fatalf("Extracting started %d W, want %d", len(started), want)
			}
			got, err := st.LearnNew(ctx, data, n, deploy.LearnOptions{}, nil)
			if tc.wantErr != "" {
				var oe *OptionError
				if !errors.As(err, &oe) || !errors.Is(err, ErrCreateOnly) || oe.Field != "W" {
					t.Fatalf("%v, want an *OptionError of W wrapping ErrCreateOnly", err)
				}
				oe.Name = func(string) string { return "--w" }
				if !strings.HasPrefix(err.Error(), tc.wantErr) || !strings.HasSuffix(err.Error(), path+" exists") {
					t.Fatalf("%q, want %q...%s exists", err, tc.wantErr, path)
				}
				if made.d != 0 {
					t.Fatal("Make called")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (made.d != 0) != tc.made || tc.made && (made.d != data.D || made.w != tc.w) {
				t.Fatalf("Make called with d %d, w %q; want called %v with %d, %q", made.d, made.w, tc.made, data.D, tc.w)
			}
			if len(started) > 0 && made.ahead != started[0] {
				t.Fatal("Make was not given the W Extracting started")
			}
			if !slices.Contains(got.Added, "a") || !hasClass(st.model, "a") {
				t.Fatalf("learned %v, the store's model has classes %v", got.Added, st.model.Model.Classes().Names())
			}
			if _, err := os.Stat(path); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestRecalibration: nothing given changes nothing; the share given, or
// the model's when only the score is given; every refusal an *OptionError
// naming Keep or Score, the share quoted.
func TestRecalibration(t *testing.T) {
	for _, tc := range []struct {
		name      string
		r         Recalibration
		modelKeep float64 // the model's share before (0: none)
		wantNil   bool
		wantErr   string // with the field's own name
		keep      float64
		score     reject.Score
	}{
		{"nothing given", Recalibration{Keep: reject.DefaultKeep}, 0, true, "", 0, ""},
		{"keep", Recalibration{Keep: 0.5, KeepGiven: true}, 0, false, "", 0.5, reject.ScoreTopCosine},
		{"keep 1", Recalibration{Keep: 1, KeepGiven: true}, 0.3, false, "", 1, reject.ScoreTopCosine},
		{"score keeps the model's share", Recalibration{Keep: reject.DefaultKeep, Score: "top", ScoreGiven: true}, 0.3, false, "", 0.3, reject.ScoreTop},
		{"score, no share yet", Recalibration{Keep: reject.DefaultKeep, Score: "margin", ScoreGiven: true}, 0, false, "", reject.DefaultKeep, reject.ScoreMargin},
		{"keep 0", Recalibration{Keep: 0, KeepGiven: true}, 0, false, "Keep 0: want a share in (0, 1]", 0, ""},
		{"keep above 1", Recalibration{Keep: 1.5, KeepGiven: true}, 0, false, "Keep 1.5: want a share in (0, 1]", 0, ""},
		{"unknown score", Recalibration{Keep: reject.DefaultKeep, Score: "bogus", ScoreGiven: true}, 0, false, `Score: reject: unknown open-set score "bogus"`, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prepare := tc.r.Prepare()
			if (prepare == nil) != tc.wantNil {
				t.Fatalf("Prepare() nil: %v, want %v", prepare == nil, tc.wantNil)
			}
			if prepare == nil {
				return
			}
			m, err := deploy.New(cfg, 3, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			data := []float32{1, 2, 3, 3, 2, 1, 1, 1, 2, 2, 1, 1, 2, 1, 1, 1, 2, 1}
			names := []string{"a", "b", "a", "b", "a", "b"}
			if tc.modelKeep > 0 { // a share the model keeps from an earlier learn
				if err := (Recalibration{Keep: tc.modelKeep, KeepGiven: true}).Prepare()(m); err != nil {
					t.Fatal(err)
				}
				if _, err := m.Learn(context.Background(), data, names, nil, deploy.LearnOptions{}); err != nil {
					t.Fatal(err)
				}
				if k := m.Model.Rejection().Keep; k != tc.modelKeep {
					t.Fatalf("the model keeps %g, want %g", k, tc.modelKeep)
				}
			}
			err = prepare(m)
			if tc.wantErr != "" {
				var oe *OptionError
				if !errors.As(err, &oe) || !strings.HasPrefix(err.Error(), tc.wantErr) {
					t.Fatalf("%v, want an *OptionError %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			// the calibration set shows in the next learn's rejection
			if _, err := m.Learn(context.Background(), data, names, nil, deploy.LearnOptions{}); err != nil {
				t.Fatal(err)
			}
			if rej := m.Model.Rejection(); rej.Keep != tc.keep || rej.Score != tc.score {
				t.Fatalf("rejection keep %g score %q, want %g %q", rej.Keep, rej.Score, tc.keep, tc.score)
			}
		})
	}
}

func hasClass(m *deploy.Model, name string) bool {
	_, ok := m.Model.Classes().LabelOf(name)
	return ok
}
