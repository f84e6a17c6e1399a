package export

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/intake"
	"github.com/flycl/flycl/format/modelfile"
	"github.com/flycl/flycl/format/onnx"
	"github.com/flycl/flycl/projection"
	"github.com/flycl/flycl/reject"
	"github.com/flycl/flycl/vision/backbone"
	"github.com/flycl/flycl/vision/extract"
)

// Projection selects how the graph applies W.
type Projection int

const (
	// Dense multiplies by W as a dense d×m initialiser (MatMul): 4·m·d
	// bytes (51 MB at m = 10000, d = 1280), and the fastest in ONNX
	// Runtime (docs/EXPORT.md has the measurements).
	Dense Projection = iota
	// Sparse stores only W's m×p non-zeros (their columns as int32 and
	// values: 8·m·p bytes, 24 MB at p = 300) and applies them with
	// Gather, Mul and ReduceSum.
	Sparse
)

func (p Projection) String() string {
	if p == Sparse {
		return "sparse"
	}
	return "dense"
}

// ParseProjection parses "dense" (or "") and "sparse".
func ParseProjection(s string) (Projection, error) {
	switch s {
	case "dense", "":
		return Dense, nil
	case "sparse":
		return Sparse, nil
	}
	return Dense, fmt.Errorf("export: unknown projection form %q (want dense or sparse)", s)
}

// Names of the graph's inputs and outputs. A graph from images takes the
// backbone's own input (flycl's backbones call it "images") and also
// outputs the features under the backbone output's name ("features").
const (
	FeaturesInput = "features" // N×d feature vectors (graphs from features)
	ScoresOutput  = "scores"   // N×classes float32, one column per class in metadata order
	ClassOutput   = "class"    // N int64: the column of the highest score (the first on ties)
	// Only for a model with a rejection (reject.Rule, "unknown"):
	OpenScoreOutput   = "open_score"  // N float32: the score the threshold applies to
	UnknownOutput     = "unknown"     // N bool: open_score < threshold (none of the classes)
	ProbabilityOutput = "probability" // N float32: the top class's calibrated probability (with a temperature)
)

// Opset is the default-domain opset of the graphs this package writes
// from feature vectors and of flycl's own backbones; a graph from another
// backbone keeps that backbone's opset, which must be at least MinOpset
// (the opset of the operators the head uses in the form it uses them).
const (
	Opset    = 17
	MinOpset = 13
)

// Metadata keys (metadata_props) of an exported graph. Values are JSON
// except MetaInput.
const (
	MetaClasses  = "flycl.classes"  // class names, in score-column order
	MetaLabels   = "flycl.labels"   // the model's integer labels, same order
	MetaInput    = "flycl.input"    // "images" or "features"
	MetaPipeline = "flycl.pipeline" // backbone, output, dimension, transform, precision (images)
	MetaModel    = "flycl.model"    // m, p, k, top-k mode, λ, version, samples, projection form
	MetaUnknown  = "flycl.unknown"  // the rejection: score, threshold, temperature (when the model has one)
)

// ErrNoClasses is returned for a model that has learned no class yet.
var ErrNoClasses = errors.New("export: the model has learned no classes")

// ErrPrecision is wrapped by CheckPrecision (it is intake.ErrPrecision).
var ErrPrecision = intake.ErrPrecision

// Options say what to export.
type Options struct {
	// Extractor is the model's pipeline as extract.ForModel rebuilds it
	// (the backbone in the precision the model learned with, its output
	// and transform): the graph takes preprocessed images. Nil: the graph
	// takes feature vectors.
	Extractor *extract.Extractor
	// Projection is how W is applied (default Dense).
	Projection Projection
}

// Value is one input or output of an exported graph: its name, element
// type ("float32" or "int64") and shape (-1: the batch dimension N).
type Value struct {
	Name  string
	Type  string
	Shape []int64
}

// Model is an exported graph.
type Model struct {
	ONNX    []byte // the serialised ModelProto
	Opset   int
	Input   Value
	Outputs []Value
	Classes []string // class names, in score-column order
}

// CheckPrecision reports whether the precision asked for (want: "fp32",
// "int8" or "" for the model's own) is the one the model's pipeline p
// learned with: a graph in another precision makes other features than
// the ones the classifier was learned from, so it is refused
// (ErrPrecision) rather than exported.
func CheckPrecision(p *modelfile.Pipeline, want string) error {
	if want == "" {
		return nil
	}
	prec, err := backbone.ParsePrecision(want)
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	if err := intake.CheckPrecision(p, prec); err != nil {
		return fmt.Errorf("export: %w (learn a model with --precision %s to export one)", err, prec)
	}
	return nil
}

// Build writes the model snapshot s as one ONNX graph (see the package
// documentation for what it computes).
func Build(s *flycl.Snapshot, o Options) (*Model, error) {
	coef := s.Coef()
	st := s.State()
	pred := s.Predictor()
	names := pred.Classes().Names()
	if coef == nil || len(names) == 0 {
		return nil, ErrNoClasses
	}
	w := s.Projection()
	d := w.D

	var g *onnx.Graph
	var x string
	out := &Model{Classes: names}
	if e := o.Extractor; e != nil {
		bm := e.Backbone
		i, err := bm.OutputIndex(e.Output)
		if err != nil {
			return nil, fmt.Errorf("export: %w", err)
		}
		if bm.Dims[i] != d {
			return nil, fmt.Errorf("export: the backbone's output %q has %d values, the model's features d=%d", e.Output, bm.Dims[i], d)
		}
		if g, err = onnx.Extend(bm.ONNX); err != nil {
			return nil, fmt.Errorf("export: backbone %s: %w", bm.Name, err)
		}
		if g.Opset() < MinOpset {
			return nil, fmt.Errorf("export: backbone %s imports opset %d; the head needs at least %d", bm.Name, g.Opset(), MinOpset)
		}
		for _, n := range []string{ScoresOutput, ClassOutput, OpenScoreOutput, UnknownOutput, ProbabilityOutput} {
			if g.Has(n) {
				return nil, fmt.Errorf("export: backbone %s already has a value named %q, the name of an output of the exported graph", bm.Name, n)
			}
		}
		out.Opset = g.Opset()
		out.Input = Value{Name: bm.Input, Type: "float32", Shape: []int64{-1, 3, int64(bm.Size), int64(bm.Size)}}
		g.OutputOf(e.Output, onnx.Float, -1, int64(d))
		out.Outputs = append(out.Outputs, Value{Name: e.Output, Type: "float32", Shape: []int64{-1, int64(d)}})
		x = g.Node("Flatten", []string{e.Output}, onnx.AInt("axis", 1))
		p := e.Pipeline()
		p.Calibration = "" // the ranges are in the graph; their text is long
		pj, err := json.Marshal(p)
		if err != nil {
			return nil, fmt.Errorf("export: %w", err)
		}
		g.SetMetadata(MetaInput, "images")
		g.SetMetadata(MetaPipeline, string(pj))
	} else {
		g = onnx.NewGraph("flycl")
		out.Opset = Opset
		x = g.Input(FeaturesInput, -1, int64(d))
		out.Input = Value{Name: FeaturesInput, Type: "float32", Shape: []int64{-1, int64(d)}}
		g.SetMetadata(MetaInput, "features")
	}

	scores, h := head(g, x, w, st, coef, len(names), o.Projection)
	g.Named(ScoresOutput, scores)
	g.OutputOf(ScoresOutput, onnx.Float, -1, int64(len(names)))
	g.Named(ClassOutput, g.Node("ArgMax", []string{scores}, onnx.AInt("axis", 1), onnx.AInt("keepdims", 0)))
	g.OutputOf(ClassOutput, onnx.Int64, -1)
	out.Outputs = append([]Value{
		{Name: ScoresOutput, Type: "float32", Shape: []int64{-1, int64(len(names))}},
		{Name: ClassOutput, Type: "int64", Shape: []int64{-1}},
	}, out.Outputs...)

	if rej := pred.Rejection(); rej.Enabled() || rej.Temperature > 0 {
		out.Outputs = append(out.Outputs, rejection(g, scores, h, s.S(), st.Config.M, len(names), rej)...)
		rj, _ := json.Marshal(rej)
		g.SetMetadata(MetaUnknown, string(rj))
	}

	cj, err := json.Marshal(names)
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	lj, _ := json.Marshal(pred.Classes().Labels())
	cfg := st.Config
	mj, _ := json.Marshal(map[string]any{"m": cfg.M, "p": cfg.P, "k": cfg.K, "d": d, "topk": cfg.TopK.String(),
		"lambda": st.Lambda, "version": st.Version, "samples": s.Samples(), "input_scale": inputScale(st),
		"projection": o.Projection.String()})
	g.SetMetadata(MetaClasses, string(cj))
	g.SetMetadata(MetaLabels, string(lj))
	g.SetMetadata(MetaModel, string(mj))
	g.SetMetadata("flycl.opset", strconv.Itoa(out.Opset))
	out.ONNX = g.Model(out.Opset)
	return out, nil
}

func inputScale(st flycl.State) float64 {
	if st.InputScale == 0 {
		return 1
	}
	return st.InputScale
}

// head adds W, top-k and C to g after the N×d features x and returns the
// N×classes scores.
func head(g *onnx.Graph, x string, w *projection.Matrix, st flycl.State, coef []float32, nc int, form Projection) (scores, codes string) {
	m, d, p := w.M, w.D, w.P
	// The input scale is a power of two (flycl checks it when it reads a
	// model): (s·x)·w = x·(s·w) exactly, so it goes into W.
	scale := float32(inputScale(st))
	var h string
	switch form {
	case Sparse:
		cols := make([]int32, m*p)
		vals := make([]float32, m*p)
		for i, c := range w.Cols {
			cols[i], vals[i] = c, w.Vals[i]*scale
		}
		gathered := g.Node("Gather", []string{x, g.ConstInt32("w_cols", []int64{int64(m), int64(p)}, cols)}, onnx.AInt("axis", 1))
		prod := g.Node("Mul", []string{gathered, g.Const("w_vals", []int64{int64(m), int64(p)}, vals)})
		h = g.Node("ReduceSum", []string{prod, g.ConstInt64("axes", []int64{1}, []int64{-1})}, onnx.AInt("keepdims", 0))
	default:
		wt := make([]float32, d*m) // Wᵀ, d×m
		for j := 0; j < m; j++ {
			for i := 0; i < p; i++ {
				wt[int(w.Cols[j*p+i])*m+j] = w.Vals[j*p+i] * scale
			}
		}
		h = g.Node("MatMul", []string{x, g.Const("w_t", []int64{int64(d), int64(m)}, wt)})
	}
	if k := st.Config.K; k < m {
		key := h
		if st.Config.TopK == projection.Magnitude {
			key = g.Node("Abs", []string{h})
		}
		// TopK breaks ties by the lower index, as projection.TopK does;
		// sorted output is what the specification states that for.
		tk := g.NodeN("TopK", []string{key, g.ConstInt64("k", []int64{1}, []int64{int64(k)})}, 2,
			onnx.AInt("axis", -1), onnx.AInt("largest", 1), onnx.AInt("sorted", 1))
		vals, idx := tk[0], tk[1]
		if st.Config.TopK == projection.Magnitude {
			vals = g.Node("GatherElements", []string{h, idx}, onnx.AInt("axis", -1))
		}
		zeros := g.Node("ConstantOfShape", []string{g.Node("Shape", []string{h})}) // float32 zeros
		h = g.Node("ScatterElements", []string{zeros, idx, vals}, onnx.AInt("axis", -1))
	}
	ct := make([]float32, m*nc) // Cᵀ, m×classes
	for c := 0; c < nc; c++ {
		for j := 0; j < m; j++ {
			ct[j*nc+c] = coef[c*m+j]
		}
	}
	return g.Node("MatMul", []string{h, g.Const("c_t", []int64{int64(m), int64(nc)}, ct)}), h
}

// unitSumsT returns the rows of S (nc × m) at unit length, transposed
// (m × nc), exactly as flycl.Predictor scales them (reject.UnitRows: a
// zero row stays zero, and is marked false in has).
func unitSumsT(s []float32, m, nc int) (ut []float32, has []bool) {
	u, has := reject.UnitRows(s, nc, m)
	if has == nil { // S shorter than nc rows: no class has a sum
		has = make([]bool, nc)
	}
	ut = make([]float32, m*nc)
	for c := 0; c < nc && u != nil; c++ {
		for j, v := range u[c*m : (c+1)*m] {
			ut[j*nc+c] = v
		}
	}
	return ut, has
}

// rejection adds the outputs of the model's rejection r after the
// N×nc scores: open_score and unknown when it rejects, probability when it
// has a temperature.
func rejection(g *onnx.Graph, scores, h string, sums []float32, m, nc int, r reject.Rule) []Value {
	var outs []Value
	axis1 := g.ConstInt64("axes", []int64{1}, []int64{1})
	// the largest (and second largest) scores from TopK: ReduceMax changes
	// form at opset 18, TopK does not
	tk := g.NodeN("TopK", []string{scores, g.ConstInt64("k", []int64{1}, []int64{int64(min(2, nc))})}, 2,
		onnx.AInt("axis", 1), onnx.AInt("largest", 1), onnx.AInt("sorted", 1))
	top := g.Node("Gather", []string{tk[0], g.ConstInt64("i", nil, []int64{0})}, onnx.AInt("axis", 1)) // N
	topCol := g.Node("Unsqueeze", []string{top, axis1})                                                // N×1
	// Σ_c exp((s_c − top)/T), for energy and probability
	sumExp := func() string {
		z := g.Node("Div", []string{g.Node("Sub", []string{scores, topCol}), g.Scalar(float32(r.Temperature))})
		return g.Node("ReduceSum", []string{g.Node("Exp", []string{z}), axis1}, onnx.AInt("keepdims", 0))
	}
	if r.Enabled() {
		v := top
		switch {
		case r.Score == reject.ScoreMargin && nc > 1:
			second := g.Node("Gather", []string{tk[0], g.ConstInt64("i", nil, []int64{1})}, onnx.AInt("axis", 1))
			v = g.Node("Sub", []string{top, second})
		case r.Score == reject.ScoreEnergy && r.Temperature > 0:
			v = g.Node("Add", []string{top, g.Node("Mul", []string{g.Scalar(float32(r.Temperature)), g.Node("Log", []string{sumExp()})})})
		case r.Score == reject.ScoreTopCosine:
			// cos = max_c (S_c/‖S_c‖)·h / ‖h‖, classes of zero sum left
			// out (a bias far below any cosine); v = z(top) + z(cos)
			ut, has := unitSumsT(sums, m, nc)
			dots := g.Node("MatMul", []string{h, g.Const("s_unit_t", []int64{int64(m), int64(nc)}, ut)})
			if slices.Contains(has, false) {
				bias := make([]float32, nc)
				for c, ok := range has {
					if !ok {
						bias[c] = -math.MaxFloat32
					}
				}
				dots = g.Node("Add", []string{dots, g.Const("s_empty", []int64{int64(nc)}, bias)})
			}
			dk := g.NodeN("TopK", []string{dots, g.ConstInt64("k", []int64{1}, []int64{1})}, 2,
				onnx.AInt("axis", 1), onnx.AInt("largest", 1), onnx.AInt("sorted", 1))
			best := g.Node("Gather", []string{dk[0], g.ConstInt64("i", nil, []int64{0})}, onnx.AInt("axis", 1))
			norm := g.Node("Sqrt", []string{g.Node("ReduceSum", []string{g.Node("Mul", []string{h, h}), axis1}, onnx.AInt("keepdims", 0))})
			cos := g.Node("Div", []string{best, norm})
			z := func(x string, mean, std float64) string {
				return g.Node("Div", []string{g.Node("Sub", []string{x, g.Scalar(float32(mean))}), g.Scalar(float32(std))})
			}
			v = g.Node("Add", []string{z(top, r.TopMean, r.TopStd), z(cos, r.CosMean, r.CosStd)})
		}
		g.Named(OpenScoreOutput, v)
		g.OutputOf(OpenScoreOutput, onnx.Float, -1)
		// v < t in float64 ⟺ v < t↑, the smallest float32 not below t,
		// for a float32 v
		t := float32(r.Threshold)
		if float64(t) < r.Threshold {
			t = math.Nextafter32(t, float32(math.Inf(1)))
		}
		g.Named(UnknownOutput, g.Node("Less", []string{v, g.Scalar(t)}))
		g.OutputOf(UnknownOutput, onnx.Bool, -1)
		outs = append(outs, Value{Name: OpenScoreOutput, Type: "float32", Shape: []int64{-1}},
			Value{Name: UnknownOutput, Type: "bool", Shape: []int64{-1}})
	}
	if r.Temperature > 0 {
		g.Named(ProbabilityOutput, g.Node("Reciprocal", []string{sumExp()}))
		g.OutputOf(ProbabilityOutput, onnx.Float, -1)
		outs = append(outs, Value{Name: ProbabilityOutput, Type: "float32", Shape: []int64{-1}})
	}
	return outs
}
