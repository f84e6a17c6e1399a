package export_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/export"
	"github.com/flycl/flycl/format/modelfile"
	"github.com/flycl/flycl/format/onnx"
	"github.com/flycl/flycl/internal/codec"
	"github.com/flycl/flycl/internal/ortnode"
	"github.com/flycl/flycl/projection"
	"github.com/flycl/flycl/reject"
)

// nodeRunner finds Node's ONNX Runtime: $NODE_PATH's onnxruntime-node, or
// the one `make ort` installs in this checkout. Tests that need it skip
// when it is missing.
func nodeRunner(t *testing.T) *ortnode.Runner {
	t.Helper()
	dir := os.Getenv("NODE_PATH")
	if dir == "" {
		dir = "../../.cache/onnxruntime/node_modules"
	}
	r, err := ortnode.Find(dir)
	if err != nil {
		t.Skipf("%v", err)
	}
	return r
}

// tiny is a small model learned on clustered random features.
type tiny struct {
	name       string
	d, m, p, k int
	mode       projection.TopKMode
	form       export.Projection
	// integer W and features: every h is exact in float32 whatever the
	// order of the sums, and many coordinates tie, so the tie-break of
	// top-k is what decides which survive.
	integer bool
	// relative λ grid on large features: the model has an input scale
	// other than 1, which the graph folds into W.
	relative bool
	// the model calibrates a rejection on this score when it learns
	unknown reject.Score
}

func (c tiny) learn(t *testing.T) (*flycl.Snapshot, []float32) {
	t.Helper()
	rng := rand.New(rand.NewPCG(uint64(c.d), uint64(c.m)))
	cfg := flycl.Config{M: c.m, P: c.p, K: c.k, TopK: c.mode, Seed: 7}
	var w *projection.Matrix
	var err error
	if c.integer {
		cols := make([]int32, c.m*c.p)
		vals := make([]float32, c.m*c.p)
		for j := 0; j < c.m; j++ {
			perm := rng.Perm(c.d)
			for q := 0; q < c.p; q++ {
				cols[j*c.p+q] = int32(perm[q])
				vals[j*c.p+q] = float32(rng.IntN(5) - 2)
				if vals[j*c.p+q] == 0 {
					vals[j*c.p+q] = 1
				}
			}
		}
		w, err = projection.New(c.m, c.d, c.p, cols, vals)
	} else {
		w, err = projection.Generate(c.m, c.d, c.p, 7)
	}
	if err != nil {
		t.Fatal(err)
	}
	scale := float32(1)
	if c.relative {
		cfg.LambdaScale = flycl.LambdaRelative
		scale = 3000 // an input scale of 2⁻¹¹ or so
	}
	model, err := flycl.NewWithProjection(cfg, w)
	if err != nil {
		t.Fatal(err)
	}
	if c.unknown != "" {
		if err := model.SetCalibration(&reject.Calibration{Score: c.unknown}); err != nil {
			t.Fatal(err)
		}
	}
	const classes, per = 4, 30
	centres := make([]float32, classes*c.d)
	for i := range centres {
		centres[i] = float32(rng.NormFloat64())
	}
	sample := func(cl int) []float32 {
		x := make([]float32, c.d)
		for i := range x {
			v := centres[cl*c.d+i] + 0.7*float32(rng.NormFloat64())
			if c.integer {
				v = float32(math.Round(float64(4 * v)))
			}
			x[i] = v * scale
		}
		return x
	}
	var x []float32
	var labels []int
	for cl := 0; cl < classes; cl++ {
		for i := 0; i < per; i++ {
			x = append(x, sample(cl)...)
			labels = append(labels, 10+cl)
		}
	}
	if c.relative {
		_, err = model.Learn(context.Background(), x, labels, nil)
	} else {
		_, err = model.Learn(context.Background(), x, labels, &flycl.LearnOptions{Lambda: 1})
	}
	if err != nil {
		t.Fatal(err)
	}
	if c.relative && codec.InputScale(model) == 1 {
		t.Fatal("the relative model kept input scale 1: the case tests nothing")
	}
	var test []float32
	for i := 0; i < 40; i++ {
		test = append(test, sample(i%classes)...)
	}
	// and samples of a class the model never saw
	for i := range centres[:c.d] {
		centres[i] = float32(rng.NormFloat64())
	}
	for i := 0; i < 10; i++ {
		test = append(test, sample(0)...)
	}
	return model.Snapshot(), test
}

var tinyCases = []tiny{
	{name: "signed/dense", d: 24, m: 96, p: 6, k: 30, mode: projection.Signed, form: export.Dense},
	{name: "signed/sparse", d: 24, m: 96, p: 6, k: 30, mode: projection.Signed, form: export.Sparse},
	{name: "magnitude/dense", d: 24, m: 96, p: 6, k: 30, mode: projection.Magnitude, form: export.Dense},
	{name: "magnitude/sparse", d: 24, m: 96, p: 6, k: 30, mode: projection.Magnitude, form: export.Sparse},
	{name: "ties/signed", d: 16, m: 128, p: 3, k: 40, mode: projection.Signed, form: export.Dense, integer: true},
	{name: "ties/magnitude", d: 16, m: 128, p: 3, k: 40, mode: projection.Magnitude, form: export.Sparse, integer: true},
	{name: "input-scale", d: 24, m: 96, p: 6, k: 30, mode: projection.Signed, form: export.Dense, relative: true},
	{name: "k=m", d: 24, m: 48, p: 6, k: 48, mode: projection.Signed, form: export.Sparse},
	{name: "unknown/top", d: 24, m: 96, p: 6, k: 30, mode: projection.Signed, form: export.Dense, unknown: reject.ScoreTop},
	{name: "unknown/margin", d: 24, m: 96, p: 6, k: 30, mode: projection.Signed, form: export.Dense, unknown: reject.ScoreMargin},
	{name: "unknown/energy", d: 24, m: 96, p: 6, k: 30, mode: projection.Signed, form: export.Dense, unknown: reject.ScoreEnergy},
	{name: "unknown/top+cosine", d: 24, m: 96, p: 6, k: 30, mode: projection.Signed, form: export.Dense, unknown: reject.ScoreTopCosine},
	{name: "unknown/top+cosine/sparse", d: 24, m: 96, p: 6, k: 30, mode: projection.Magnitude, form: export.Sparse, unknown: reject.ScoreTopCosine},
	{name: "unknown/top+cosine/ties", d: 16, m: 128, p: 3, k: 40, mode: projection.Signed, form: export.Dense, integer: true, unknown: reject.ScoreTopCosine},
}

// The graph from feature vectors, run by ONNX Runtime in Node, gives
// flycl.Predictor.Scores's scores within the float32 bound of Tolerance,
// the same class on every sample, and the class names in its metadata.
// Every top-k mode and projection form is covered, and the integer cases
// make exact ties at the k-th value, so that a top-k that broke ties
// otherwise than the lowest index first (or compared |h| for signed)
// keeps other coordinates and fails the comparison.
func TestFeaturesGraphInNode(t *testing.T) {
	r := nodeRunner(t)
	for _, c := range tinyCases {
		t.Run(c.name, func(t *testing.T) {
			s, x := c.learn(t)
			g, err := export.Build(s, export.Options{Projection: c.form})
			if err != nil {
				t.Fatal(err)
			}
			n := len(x) / c.d
			res, err := r.Run(context.Background(), g.ONNX, export.FeaturesInput, x, []int{n, c.d}, 0)
			if err != nil {
				t.Fatal(err)
			}
			uncertain := compare(t, s, x, nil, res)
			if c.integer && uncertain != 0 {
				t.Errorf("%d coordinates of exact integer codes counted as uncertain: exact ties are decided by index", uncertain)
			}
			if c.integer {
				if ties := tiesAtThreshold(s, x); ties == 0 {
					t.Fatal("no sample ties at the k-th value: the case does not test the tie-break")
				} else {
					t.Logf("%d of %d samples tie at the k-th value", ties, n)
				}
			}
			meta, err := onnx.Metadata(g.ONNX)
			if err != nil {
				t.Fatal(err)
			}
			if want := `["10","11","12","13"]`; meta[export.MetaClasses] != want {
				t.Errorf("metadata %s = %s, want %s", export.MetaClasses, meta[export.MetaClasses], want)
			}
		})
	}
}

// compare checks a Node run against the snapshot's Predictor on the
// features x (dx: the bound on how far Node's features may differ) and
// returns how many coordinates the bound let top-k keep differently.
func compare(t *testing.T, s *flycl.Snapshot, x, dx []float32, res *ortnode.Result) int {
	t.Helper()
	p := s.Predictor()
	want, err := p.Scores(context.Background(), x)
	if err != nil {
		t.Fatal(err)
	}
	tol, uncertain, err := export.ToleranceWithUncertain(s, x, dx)
	if err != nil {
		t.Fatal(err)
	}
	nc := p.Classes().Len()
	n := len(want) / nc
	sc, cl := res.Outputs[export.ScoresOutput], res.Outputs[export.ClassOutput]
	if sc == nil || cl == nil || !slices.Equal(sc.Dims, []int{n, nc}) || !slices.Equal(cl.Dims, []int{n}) {
		t.Fatalf("outputs %+v, want scores %d×%d and class %d", res.Outputs, n, nc, n)
	}
	var worst, worstTol float64
	for i := 0; i < n; i++ {
		best := 0
		for c := 0; c < nc; c++ {
			j := i*nc + c
			diff := math.Abs(float64(sc.Float[j]) - float64(want[j]))
			if diff > tol[j] {
				t.Errorf("sample %d class %d: Node %v, flycl %v: differ by %.3g, beyond the float32 bound %.3g", i, c, sc.Float[j], want[j], diff, tol[j])
			}
			if diff/tol[j] > worst/max(worstTol, 1e-300) {
				worst, worstTol = diff, tol[j]
			}
			if want[j] > want[i*nc+best] {
				best = c
			}
		}
		// the same class, unless flycl's two best scores are closer than
		// their bounds (then either answer is right)
		if int(cl.Int[i]) != best {
			second := float64(want[i*nc+int(cl.Int[i])])
			if float64(want[i*nc+best])-second > tol[i*nc+best]+tol[i*nc+int(cl.Int[i])] {
				t.Errorf("sample %d: Node says class %d, flycl %d", i, cl.Int[i], best)
			}
		}
	}
	t.Logf("largest difference %.3g where the bound is %.3g", worst, worstTol)
	var cos, cosTol []float64
	if p.Rejection().Score.NeedsCosine() {
		if _, cos, err = p.ScoresCosines(context.Background(), x); err != nil {
			t.Fatal(err)
		}
		if cosTol, err = export.CosineTolerance(s, x, dx); err != nil {
			t.Fatal(err)
		}
		checkCosines(t, p.Rejection(), want, cos, cosTol, tol, nc, res)
	}
	checkRejection(t, p.Rejection(), want, cos, cosTol, tol, nc, res)
	return sumInts(uncertain)
}

// checkRejection compares Node's rejection outputs with reject.Rule
// on flycl's scores want. The open-set score is a function of the scores
// whose float32 evaluation adds a few roundings of its size: top moves
// by the top score's bound, margin by two, energy (1-Lipschitz in the
// largest score change) by the largest bound plus the rounding of its
// log-sum-exp; the probability by the largest bound over T. A decision
// must agree unless the score lies within that bound of the threshold.
//
// For top+cosine, flycl's value is Rejection.Value of the scores and of
// ScoresCosines' cosine (cos; cosTol its bound, CosineTolerance): the
// graph's top moves by the top score's bound over TopStd, its cosine by
// cosTol over CosStd, and its float32 standardization (constants rounded
// to float32, two subtractions, two divisions, one sum) by a few
// roundings of the terms' size.
func checkRejection(t *testing.T, r reject.Rule, want []float32, cos, cosTol, tol []float64, nc int, res *ortnode.Result) {
	t.Helper()
	osc, un, pr := res.Outputs[export.OpenScoreOutput], res.Outputs[export.UnknownOutput], res.Outputs[export.ProbabilityOutput]
	if r.Enabled() != (osc != nil && un != nil) || (r.Temperature > 0) != (pr != nil) {
		t.Fatalf("rejection %+v, outputs %v", r, res.Outputs)
	}
	n := len(want) / nc
	u := 1.0 / (1 << 24)
	rejected := 0
	for i := 0; i < n; i++ {
		row := want[i*nc : (i+1)*nc]
		maxTol := slices.Max(tol[i*nc : (i+1)*nc])
		if r.Temperature > 0 {
			p, _ := r.Probability(row)
			if d := math.Abs(float64(pr.Float[i]) - p); d > maxTol/r.Temperature+8*float64(nc)*u {
				t.Errorf("sample %d: probability %v in Node, %v in flycl", i, pr.Float[i], p)
			}
		}
		if !r.Enabled() {
			continue
		}
		ci := math.NaN()
		if cos != nil {
			ci = cos[i]
		}
		v := r.Value(row, ci)
		bound := 2*maxTol + 8*float64(nc)*u*(math.Abs(v)+r.Temperature)
		if r.Score.NeedsCosine() {
			top := float64(slices.Max(row))
			terms := (math.Abs(top)+math.Abs(r.TopMean))/r.TopStd + (math.Abs(ci)+math.Abs(r.CosMean))/r.CosStd
			bound = maxTol/r.TopStd + cosTol[i]/r.CosStd + 8*u*(terms+math.Abs(v))
		}
		if d := math.Abs(float64(osc.Float[i]) - v); d > bound {
			t.Errorf("sample %d: open-set score %v in Node, %v in flycl (bound %.3g)", i, osc.Float[i], v, bound)
		}
		if un.Bool[i] != r.Reject(row, ci) && math.Abs(v-r.Threshold) > bound {
			t.Errorf("sample %d: unknown %v in Node, %v in flycl (score %v, threshold %v)", i, un.Bool[i], r.Reject(row, ci), v, r.Threshold)
		}
		if r.Reject(row, ci) {
			rejected++
		}
	}
	if r.Enabled() {
		t.Logf("rejection %s < %.4g: %d of %d samples unknown", r.Score, r.Threshold, rejected, n)
		if rejected == 0 || rejected == n {
			t.Errorf("the rejection decides alike for every sample: the comparison tests nothing")
		}
	}
}

// checkCosines checks that the cosine implied by Node's open_score, the
// fused value less the standardized top score of flycl, is within the
// bounds of flycl's cosine: it reads the cosine the graph computed
// through the standardization, so a graph whose cosine were wrong (a
// missing ‖h‖, a sum not at unit length) fails here even where the
// decision happens to agree.
func checkCosines(t *testing.T, r reject.Rule, want []float32, cos, cosTol, tol []float64, nc int, res *ortnode.Result) {
	t.Helper()
	osc := res.Outputs[export.OpenScoreOutput]
	if osc == nil {
		t.Fatal("no open_score output for a top+cosine rejection")
	}
	u := 1.0 / (1 << 24)
	worst := 0.0
	for i := range cos {
		row := want[i*nc : (i+1)*nc]
		top := float64(slices.Max(row))
		got := r.CosMean + r.CosStd*(float64(osc.Float[i])-(top-r.TopMean)/r.TopStd)
		maxTol := slices.Max(tol[i*nc : (i+1)*nc])
		terms := (math.Abs(top)+math.Abs(r.TopMean))/r.TopStd + (math.Abs(cos[i])+math.Abs(r.CosMean))/r.CosStd + math.Abs(float64(osc.Float[i]))
		bound := cosTol[i] + r.CosStd*(maxTol/r.TopStd+8*u*terms)
		if d := math.Abs(got - cos[i]); d > bound {
			t.Errorf("sample %d: cosine %v in Node, %v in flycl (bound %.3g)", i, got, cos[i], bound)
		} else {
			worst = max(worst, d/bound)
		}
	}
	t.Logf("cosines: largest difference %.3g of its bound", worst)
}

func sumInts(v []int) int {
	s := 0
	for _, x := range v {
		s += x
	}
	return s
}

// tiesAtThreshold counts the samples whose k-th and (k+1)-th keys are equal.
func tiesAtThreshold(s *flycl.Snapshot, x []float32) int {
	w := s.Projection()
	cfg := s.State().Config
	n := len(x) / w.D
	h := make([]float32, n*w.M)
	if err := w.ApplyRows(context.Background(), projection.Sparse, x, n, h); err != nil {
		panic(err)
	}
	ties := 0
	for i := 0; i < n; i++ {
		keys := make([]float64, w.M)
		for j, v := range h[i*w.M : (i+1)*w.M] {
			keys[j] = float64(v)
			if cfg.TopK == projection.Magnitude {
				keys[j] = math.Abs(keys[j])
			}
		}
		slices.Sort(keys)
		slices.Reverse(keys)
		if keys[cfg.K-1] == keys[cfg.K] {
			ties++
		}
	}
	return ties
}

// The graph's interface and metadata: what docs/EXPORT.md tells users to
// feed and read (no runtime needed).
func TestBuildInterface(t *testing.T) {
	s, _ := tinyCases[0].learn(t)
	g, err := export.Build(s, export.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if g.Input.Name != "features" || !slices.Equal(g.Input.Shape, []int64{-1, 24}) || g.Opset != export.Opset {
		t.Errorf("input %+v opset %d", g.Input, g.Opset)
	}
	if len(g.Outputs) != 2 || g.Outputs[0].Name != "scores" || g.Outputs[1].Name != "class" || g.Outputs[1].Type != "int64" {
		t.Errorf("outputs %+v", g.Outputs)
	}
	meta, err := onnx.Metadata(g.ONNX)
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{export.MetaInput: "features", export.MetaLabels: "[10,11,12,13]", "flycl.opset": "17"} {
		if meta[k] != want {
			t.Errorf("metadata %s = %q, want %q", k, meta[k], want)
		}
	}
	// the dense W is d×m float32, the sparse one m×p int32 + float32
	dense, sparse := len(g.ONNX), 0
	if gs, err := export.Build(s, export.Options{Projection: export.Sparse}); err != nil {
		t.Fatal(err)
	} else {
		sparse = len(gs.ONNX)
	}
	if want := 4*24*96 - 8*96*6; dense-sparse < want-2000 || dense-sparse > want+2000 {
		t.Errorf("dense graph %d bytes, sparse %d: differ by %d, want about %d", dense, sparse, dense-sparse, want)
	}
}

func TestCheckPrecision(t *testing.T) {
	for _, c := range []struct {
		model, want string
		ok          bool
	}{
		{"", "", true}, {"", "fp32", true}, {"", "int8", false},
		{"int8", "int8", true}, {"int8", "", true}, {"int8", "fp32", false},
	} {
		err := export.CheckPrecision(&modelfile.Pipeline{Precision: c.model}, c.want)
		if (err == nil) != c.ok || (err != nil && !errors.Is(err, export.ErrPrecision)) {
			t.Errorf("model %q, asked %q: %v", c.model, c.want, err)
		}
	}
	if err := export.CheckPrecision(nil, "int16"); err == nil || errors.Is(err, export.ErrPrecision) {
		t.Errorf("int16: %v", err)
	}
}

func TestBuildRefusesEmptyModel(t *testing.T) {
	m, err := flycl.New(flycl.Config{M: 16, P: 2, K: 4}, 4)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := export.Build(m.Snapshot(), export.Options{}); !errors.Is(err, export.ErrNoClasses) {
		t.Errorf("got %v, want ErrNoClasses", err)
	}
}
