package configflag

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/format/modelfile"
	"github.com/flycl/flycl/internal/flagbind"
	"github.com/flycl/flycl/projection"
)

// TestNewConfig: a new model's sizes from the flags, against the numbers
// worked out by hand from the rule (images: m = 10000, k = 0.3·m, p = 300
// of d = 768 scaled to d, the relative grid with widening, the dual form
// up to m/10 samples; features: the paper's defaults, m = 10000, p = 300,
// k = 3000, always primal).
func TestNewConfig(t *testing.T) {
	rel := flycl.DefaultRelativeLambdas
	for _, tc := range []struct {
		args        []string
		d           int
		images      bool
		m, p, k     int
		lambdas     []float64
		scale       flycl.LambdaScale
		widen       bool
		dual        int
		wantErrFlag string // the flag an error names ("" none)
	}{
		{nil, 512, false, 10000, 300, 3000, flycl.DefaultLambdas, flycl.LambdaAbsolute, false, 0, ""},
		{nil, 512, true, 10000, 200, 3000, rel, flycl.LambdaRelative, true, 2500, ""},  // p = round(300·512/768)
		{nil, 1000, true, 10000, 391, 3000, rel, flycl.LambdaRelative, true, 2500, ""}, // round(390.6)
		{nil, 2, true, 10000, 1, 3000, rel, flycl.LambdaRelative, true, 2500, ""},      // at least 1
		{[]string{"--m", "1000"}, 768, true, 1000, 300, 300, rel, flycl.LambdaRelative, true, 250, ""},
		{[]string{"--m", "1000", "--k", "50"}, 768, true, 1000, 300, 50, rel, flycl.LambdaRelative, true, 250, ""},
		{[]string{"--p", "7"}, 768, true, 10000, 7, 3000, rel, flycl.LambdaRelative, true, 2500, ""},
		{[]string{"--lambdas", "1,2"}, 768, true, 10000, 300, 3000, []float64{1, 2}, flycl.LambdaAbsolute, false, 2500, ""},
		{[]string{"--dual", "0"}, 768, true, 10000, 300, 3000, rel, flycl.LambdaRelative, true, 0, ""},
		{[]string{"--dual", "40"}, 768, false, 10000, 300, 3000, flycl.DefaultLambdas, flycl.LambdaAbsolute, false, 40, ""},
		{[]string{"--m", "100"}, 512, false, 100, 300, 3000, nil, 0, false, 0, "--k"}, // k > m
		{[]string{"--k", "12000"}, 512, true, 10000, 200, 12000, nil, 0, false, 0, "--k"},
	} {
		cfg, err := parse(t, tc.args...).NewConfig(tc.d, tc.images)
		if tc.wantErrFlag != "" {
			var fe *Error
			if !errors.As(err, &fe) || fe.Error()[:len(tc.wantErrFlag)] != tc.wantErrFlag {
				t.Errorf("%v d=%d images=%v: %v, want an error naming %s", tc.args, tc.d, tc.images, err, tc.wantErrFlag)
			}
			continue
		}
		if err != nil {
			t.Errorf("%v: %v", tc.args, err)
			continue
		}
		if cfg.Dual != tc.dual {
			t.Errorf("%v d=%d images=%v: dual %d, want %d", tc.args, tc.d, tc.images, cfg.Dual, tc.dual)
		}
		if cfg.M != tc.m || cfg.P != tc.p || cfg.K != tc.k || !slices.Equal(cfg.Lambdas, tc.lambdas) || cfg.LambdaScale != tc.scale || cfg.WidenGrid != tc.widen {
			t.Errorf("%v d=%d images=%v: m=%d p=%d k=%d λ=%v %v widen=%v, want m=%d p=%d k=%d λ=%v %v widen=%v", tc.args, tc.d, tc.images,
				cfg.M, cfg.P, cfg.K, cfg.Lambdas, cfg.LambdaScale, cfg.WidenGrid, tc.m, tc.p, tc.k, tc.lambdas, tc.scale, tc.widen)
		}
	}
}

// TestAgreeW: W fixes m and p and has no seed; the errors quote the flag
// and W's value.
func TestAgreeW(t *testing.T) {
	w := &projection.Matrix{M: 200, P: 10, D: 64}
	for _, tc := range []struct {
		args []string
		want string // "" agrees
	}{
		{nil, ""},
		{[]string{"--m", "200", "--p", "10", "--k", "60"}, ""},
		{[]string{"--m", "300"}, "--m 300, but W from w.npz has m = 200"},
		{[]string{"--p", "11"}, "--p 11, but W from w.npz has p = 10"},
		{[]string{"--m", "200", "--p", "3"}, "--p 3, but W from w.npz has p = 10"},
		{[]string{"--w-seed", "0"}, "--w-seed and --w: W is given (w.npz), there is no seed to generate it from"},
	} {
		err := parse(t, tc.args...).AgreeW(w, "w.npz")
		if got := errText(err); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.args, got, tc.want)
		}
	}
}

// TestAgreeStats: only what statistics fix is compared (m, p, k, seed,
// top-k); the λ grid and GCV flags are the new model's.
func TestAgreeStats(t *testing.T) {
	sc := modelfile.StatsConfig{InputDim: 16, M: 200, P: 5, K: 60, Seed: 7, W: "seed", TopK: "magnitude"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, ""},
		{[]string{"--m", "200", "--p", "5", "--k", "60", "--w-seed", "7", "--topk", "magnitude"}, ""},
		{[]string{"--lambdas", "1,2", "--gcv-scope", "all", "--widen-grid"}, ""},
		{[]string{"--m", "201"}, "--m 201, but the statistics have 200"},
		{[]string{"--k", "61"}, "--k 61, but the statistics have 60"},
		{[]string{"--w-seed", "8"}, "--w-seed 8, but the statistics have 7"},
		{[]string{"--topk", "signed"}, "--topk signed, but the statistics have magnitude"},
	} {
		err := parse(t, tc.args...).AgreeStats(sc)
		if got := errText(err); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.args, got, tc.want)
		}
		var me *flagbind.MismatchError
		if err != nil && !errors.As(err, &me) {
			t.Errorf("%v: %v is not a *flagbind.MismatchError", tc.args, err)
		}
	}
}

// TestAgreeModel: a mismatch names the flag and says why.
func TestAgreeModel(t *testing.T) {
	have := flycl.Config{M: 200, P: 3, K: 60, Lambdas: []float64{1, 10}}
	err := parse(t, "--m", "300").AgreeModel(have)
	want := "--m 300, but the model has 200: a model's configuration is fixed when it is created"
	if errText(err) != want || !errors.Is(err, ErrFixed) {
		t.Errorf("%v, want %q wrapping ErrFixed", err, want)
	}
	if err := parse(t, "--m", "200").AgreeModel(have); err != nil {
		t.Error(err)
	}
}

// TestNewModel: with --w the model's W is the file's, bit for bit, and its
// sizes are W's; contradicting flags are refused before a model is made.
func TestNewModel(t *testing.T) {
	w, err := projection.Generate(40, 16, 4, 99)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "w.npz")
	if err := modelfile.ExportProjection(file, w); err != nil {
		t.Fatal(err)
	}
	m, err := parse(t, "--k", "12").NewModel(16, file, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c := m.Model.Config(); c.M != 40 || c.P != 4 || c.K != 12 {
		t.Errorf("model m=%d p=%d k=%d, want W's m=40 p=4 and --k 12", c.M, c.P, c.K)
	}
	if got, want := modelfile.StatsConfigOf(m.Model).WSHA256, w.Digest(); got != want {
		t.Errorf("W digest %s, want the file's %s", got, want)
	}
	if _, err := parse(t, "--m", "50", "--k", "12").NewModel(16, file, nil); errText(err) != "--m 50, but W from "+file+" has m = 40" {
		t.Errorf("--m 50 with a 40-row W: %v", err)
	}
	// without W: the seeded W of the flags
	m, err = parse(t, "--m", "30", "--p", "3", "--k", "9", "--w-seed", "5").NewModel(16, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	g, _ := projection.Generate(30, 16, 3, 5)
	if modelfile.StatsConfigOf(m.Model).WSHA256 != g.Digest() {
		t.Errorf("W is not projection.Generate(30, 16, 3, 5)")
	}
}

// TestNewModelAhead: the W StartNewModel starts for images of d
// dimensions is the one NewModelAhead's model takes (the same matrix, not
// generated again) for features through a backbone, the W the flags give
// it (projection.Generate of the image defaults' m and p and the flags'
// seed); given a W file, NewModelAhead takes the file's W instead.
func TestNewModelAhead(t *testing.T) {
	ctx := context.Background()
	const d = 16
	pipe := &modelfile.Pipeline{Backbone: "squeezenet", Name: "squeezenet1.1", Output: "features", Dim: d}
	f := parse(t, "--m", "60", "--w-seed", "5")
	a := f.StartNewModel(ctx, d)
	m, err := f.NewModelAhead(ctx, d, "", pipe, a)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := f.NewConfig(d, true)
	if err != nil {
		t.Fatal(err)
	}
	w, err := a.W(ctx, cfg, d)
	if err != nil || w == nil || m.Model.Snapshot().Projection() != w {
		t.Errorf("the model's W is not the one started ahead (%v)", err)
	}
	g, _ := projection.Generate(60, d, cfg.P, 5)
	if got := modelfile.StatsConfigOf(m.Model).WSHA256; got != g.Digest() {
		t.Errorf("W digest %s, want projection.Generate(60, %d, %d, 5)'s %s", got, d, cfg.P, g.Digest())
	}

	wf, _ := projection.Generate(40, d, 4, 99)
	file := filepath.Join(t.TempDir(), "w.npz")
	if err := modelfile.ExportProjection(file, wf); err != nil {
		t.Fatal(err)
	}
	f = parse(t, "--k", "12")
	m, err = f.NewModelAhead(ctx, d, file, pipe, f.StartNewModel(ctx, d))
	if err != nil {
		t.Fatal(err)
	}
	if got := modelfile.StatsConfigOf(m.Model).WSHA256; got != wf.Digest() {
		t.Errorf("with a W file: W digest %s, want the file's %s", got, wf.Digest())
	}
}

// TestNewModelConfig: NewModelConfig is the configuration of NewModel's
// model (what flycl learn and stats create, and flycl-beam takes): the
// image defaults for features with a pipeline and no W, the flags' alone
// for features without one.
func TestNewModelConfig(t *testing.T) {
	pipe := &modelfile.Pipeline{Backbone: "squeezenet", Name: "squeezenet1.1", Output: "features", Dim: 16}
	for _, tc := range []struct {
		args   []string
		p      *modelfile.Pipeline
		images bool
	}{
		{nil, pipe, true},
		{[]string{"--m", "60", "--p", "4", "--k", "18"}, nil, false}, // the paper's p = 300, k = 3000 exceed d, m
		{[]string{"--m", "60"}, pipe, true},
		{[]string{"--m", "60", "--p", "4", "--k", "20"}, nil, false},
	} {
		got, err := parse(t, tc.args...).NewModelConfig(16, "", tc.p)
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		want, err := parse(t, tc.args...).NewConfig(16, tc.images)
		if err != nil {
			t.Fatal(err)
		}
		m, err := parse(t, tc.args...).NewModel(16, "", tc.p)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(got, m.Model.Config()) {
			t.Errorf("%v pipeline %v: %+v, want NewConfig(16, %v) %+v, NewModel's %+v", tc.args, tc.p != nil, got, tc.images, want, m.Model.Config())
		}
	}
}

// TestNewFromStats: flycl merge's new model from statistics has the
// statistics' expansion and the λ settings of the model flycl learn would
// create from the same features (NewModelConfig): the image defaults'
// relative grid with widening for features through a backbone, the
// paper's grid for features without one.
func TestNewFromStats(t *testing.T) {
	pipe := &modelfile.Pipeline{Backbone: "squeezenet", Name: "squeezenet1.1", Output: "features", Dim: 16}
	sc := modelfile.StatsConfig{InputDim: 16, M: 40, P: 5, K: 12, Seed: 3, W: "seed", TopK: "signed", InputScale: 1}
	for _, tc := range []struct {
		p    *modelfile.Pipeline
		args []string
	}{
		{pipe, nil},
		{nil, nil},
		{pipe, []string{"--lambdas", "1,10"}},
		{pipe, []string{"--m", "40"}},
	} {
		m, err := parse(t, tc.args...).NewFromStats(&modelfile.StatsFile{Config: sc, Pipeline: tc.p}, "")
		if err != nil {
			t.Fatalf("pipeline %v %v: %v", tc.p != nil, tc.args, err)
		}
		want, err := parse(t, tc.args...).NewModelConfig(16, "", tc.p)
		if err != nil {
			t.Fatal(err)
		}
		got := m.Model.Config()
		if got.M != sc.M || got.P != sc.P || got.K != sc.K || got.Seed != sc.Seed {
			t.Errorf("pipeline %v %v: m, p, k, seed %d %d %d %d, want the statistics' %d %d %d %d", tc.p != nil, tc.args, got.M, got.P, got.K, got.Seed, sc.M, sc.P, sc.K, sc.Seed)
		}
		if !slices.Equal(got.Lambdas, want.Lambdas) || got.LambdaScale != want.LambdaScale || got.WidenGrid != want.WidenGrid {
			t.Errorf("pipeline %v %v: λ %v %v widen %v, want a new model's %v %v widen %v", tc.p != nil, tc.args,
				got.Lambdas, got.LambdaScale, got.WidenGrid, want.Lambdas, want.LambdaScale, want.WidenGrid)
		}
	}
	// the grids differ between the two kinds, so the test tells them apart
	img, _ := parse(t).NewModelConfig(16, "", pipe)
	plain, _ := parse(t).NewModelConfig(16, "", nil)
	if slices.Equal(img.Lambdas, plain.Lambdas) && img.LambdaScale == plain.LambdaScale {
		t.Fatalf("image and plain configurations have the same λ grid %v: the test cannot tell them apart", img.Lambdas)
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
