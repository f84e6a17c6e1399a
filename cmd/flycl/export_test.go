package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/export"
	"github.com/flycl/flycl/format/features"
	"github.com/flycl/flycl/format/modelfile"
	"github.com/flycl/flycl/format/onnx"
	"github.com/flycl/flycl/internal/ortnode"
	"github.com/flycl/flycl/reject"
	"github.com/flycl/flycl/vision/backbone"
	"github.com/flycl/flycl/vision/extract"
	"github.com/flycl/flycl/vision/imageio"
)

// nodeORT finds Node's ONNX Runtime ($NODE_PATH, or the onnxruntime-node
// that make ort installs), or skips.
func nodeORT(t testing.TB) *ortnode.Runner {
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

// imagenetPhotos returns the shared ImageNet sample photos grouped into
// four coarse classes (fish, bird, dog, beetle): train holds three of
// each in DIR/<class>/, test the held-out photos of those groups and
// four of classes the model never sees.
func imagenetPhotos(t testing.TB) (train string, test []string) {
	t.Helper()
	all, _ := filepath.Glob(filepath.Join(sharedDir, "data", "imagenet-sample-500", "*.JPEG"))
	if len(all) != 500 {
		t.Skipf("shared ImageNet sample not available (%d photos)", len(all))
	}
	sort.Strings(all)
	groups := []struct {
		name   string
		lo, hi int // photo positions, 0-based, in file name order
	}{{"fish", 0, 4}, {"bird", 4, 10}, {"dog", 76, 82}, {"beetle", 150, 154}}
	train = t.TempDir()
	for _, g := range groups {
		for i := g.lo; i < g.hi; i++ {
			if i-g.lo >= 3 {
				test = append(test, all[i])
				continue
			}
			b, err := os.ReadFile(all[i])
			if err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(train, g.name, filepath.Base(all[i]))
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return train, append(test, all[300], all[350], all[400], all[450])
}

// TestExportImagesNode: a model learned from real photos through
// MobileNetV2 (fp32, and int8 calibrated on the training photos) is
// exported and run by ONNX Runtime in Node on photos preprocessed by
// flycl's own transform. Node's class is flycl predict's top class on
// every photo; its scores lie within the float32 bound of
// export.Tolerance from flycl predict's; its features equal the ones
// flycl extracts (the same backbone graph in the same ONNX Runtime
// version) within a bound measured here and fed into the tolerance. The
// graph from features, fed flycl's features, agrees with
// flycl.Predictor.Scores the same way. An fp32 export of the int8 model is
// refused.
func TestExportImagesNode(t *testing.T) {
	lib := ortLib(t)
	r := nodeORT(t)
	mnv2 := filepath.Join(sharedDir, "models", "mobilenetv2-1.0")
	if _, err := os.Stat(mnv2); err != nil {
		t.Skipf("shared MobileNetV2 not available: %v", err)
	}
	train, test := imagenetPhotos(t)
	for _, prec := range []string{"fp32", "int8"} {
		t.Run(prec, func(t *testing.T) {
			dir := t.TempDir()
			model := filepath.Join(dir, "m.flycl")
			common := []string{"--model", model, "--ort-lib", lib, "--quiet"}
			if _, err := runCLI(t, append([]string{"learn", "--data", "folder:" + train, "--backbone", "mobilenetv2:" + mnv2, "--cache", "",
				"--precision", prec, "--m", "3000", "--p", "300", "--k", "1000", "--lambdas", "1,10,100,1000"}, common...)...); err != nil {
				t.Fatal(err)
			}
			// the same photos again: the calibration pool then holds 24
			// leave-one-out samples (a threshold that is not the smallest
			// of the pool), so that the graph's "unknown" is compared on
			// real photos
			if _, err := runCLI(t, append([]string{"learn", "--data", "folder:" + train, "--cache", ""}, common...)...); err != nil {
				t.Fatal(err)
			}
			out, err := runCLI(t, append([]string{"predict", "--format", "json", "--top", "4"}, append(common, test...)...)...)
			if err != nil {
				t.Fatal(err)
			}
			var pred struct{ Predictions []prediction }
			if err := json.Unmarshal([]byte(out), &pred); err != nil || len(pred.Predictions) != len(test) {
				t.Fatalf("predict: %v\n%s", err, out)
			}
			onnxFile := filepath.Join(dir, "m.onnx")
			if _, err := runCLI(t, "export", "--model", model, "--out", onnxFile); err != nil {
				t.Fatal(err)
			}
			if prec == "int8" {
				if _, err := runCLI(t, "export", "--model", model, "--out", filepath.Join(dir, "no.onnx"), "--precision", "fp32"); err == nil || !strings.Contains(err.Error(), "learned with int8 features") {
					t.Errorf("fp32 export of an int8 model: %v", err)
				}
			}
			graph, err := os.ReadFile(onnxFile)
			if err != nil {
				t.Fatal(err)
			}
			f, err := modelfile.Load(model)
			if err != nil {
				t.Fatal(err)
			}
			meta, _ := onnx.Metadata(graph)
			var names []string
			if err := json.Unmarshal([]byte(meta[export.MetaClasses]), &names); err != nil || !slices.Equal(names, f.Snapshot.Predictor().Classes().Names()) {
				t.Fatalf("metadata classes %q (%v), want %q", meta[export.MetaClasses], err, f.Snapshot.Predictor().Classes().Names())
			}

			// flycl's features of the test photos, and its preprocessing
			bm, err := extract.OpenBackbone(f.Pipeline.Backbone, "")
			if err != nil {
				t.Fatal(err)
			}
			e, err := extract.ForModel(f.Pipeline, bm, f.Pipeline.Backbone)
			if err != nil {
				t.Fatal(err)
			}
			fs, err := e.Files(context.Background(), test)
			if err != nil {
				t.Fatal(err)
			}
			var x []float32
			for _, p := range test {
				img, err := imageio.Decoder{}.DecodeFile(p)
				if err != nil {
					t.Fatal(err)
				}
				x = append(x, e.Preset.Tensor(img, nil)...)
			}
			n, size := len(test), e.Backbone.Size
			res, err := r.Run(context.Background(), graph, e.Backbone.Input, x, []int{n, 3, size, size}, 0)
			if err != nil {
				t.Fatal(err)
			}
			nf := res.Outputs["features"]
			if nf == nil || len(nf.Float) != len(fs.X) {
				t.Fatalf("Node's features: %+v, want %d values", nf, len(fs.X))
			}
			// The backbone's graph is the same in both runs and so is ONNX
			// Runtime's version; only its kernels' blocking may differ (batch
			// sizes, threads). dx bounds each feature's difference as measured;
			// it must be small next to the features themselves, and it enters
			// the scores' tolerance through W.
			dx := make([]float32, len(fs.X))
			var maxDiff, maxAbs float64
			for i := range dx {
				dx[i] = float32(math.Abs(float64(nf.Float[i]) - float64(fs.X[i])))
				maxDiff, maxAbs = max(maxDiff, float64(dx[i])), max(maxAbs, math.Abs(float64(fs.X[i])))
			}
			t.Logf("features: largest difference %.3g, largest feature %.3g", maxDiff, maxAbs)
			if maxDiff > 1e-4*maxAbs {
				t.Errorf("Node's features differ from flycl's by up to %.3g (largest feature %.3g)", maxDiff, maxAbs)
			}
			// flycl predict's scores, by class name
			want := make([]float32, n*len(names))
			for i, p := range pred.Predictions {
				for _, top := range p.Top {
					want[i*len(names)+slices.Index(names, top.Name)] = top.Score
				}
			}
			tol := checkAgainst(t, f.Snapshot, fs.X, dx, want, res)
			// "unknown" as flycl predict answers it (the model calibrates a
			// rejection when it learns), unless the open-set score lies within
			// twice the scores' bound of the threshold
			if r := f.Snapshot.Predictor().Rejection(); !r.Enabled() || r.Score != reject.ScoreTopCosine {
				t.Fatalf("the model's rejection %+v: want top+cosine on, to compare", r)
			} else {
				un := res.Outputs[export.UnknownOutput]
				if un == nil {
					t.Fatalf("the model rejects (%+v) but the graph has no %s output", r, export.UnknownOutput)
				}
				// top+cosine reads the cosine of the code to the class
				// sums too: flycl's, and its bound (export.CosineTolerance)
				cos, cosTol := make([]float64, len(test)), make([]float64, len(test))
				if r.Score.NeedsCosine() {
					if _, cos, err = f.Snapshot.Predictor().ScoresCosines(context.Background(), fs.X); err != nil {
						t.Fatal(err)
					}
					if cosTol, err = export.CosineTolerance(f.Snapshot, fs.X, dx); err != nil {
						t.Fatal(err)
					}
				}
				rejected := 0
				for i, p := range pred.Predictions {
					row := want[i*len(names) : (i+1)*len(names)]
					v, bound := r.Value(row, cos[i]), 2*slices.Max(tol[i*len(names):(i+1)*len(names)])
					if r.Score.NeedsCosine() {
						bound = 2 * (bound/2/r.TopStd + cosTol[i]/r.CosStd)
					}
					if p.Unknown != r.Reject(row, cos[i]) {
						t.Errorf("%s: flycl predict answers unknown=%v, the model's rejection %v", filepath.Base(test[i]), p.Unknown, r.Reject(row, cos[i]))
					}
					if un.Bool[i] != p.Unknown && math.Abs(v-r.Threshold) > bound {
						t.Errorf("%s: unknown %v in Node, %v in flycl predict", filepath.Base(test[i]), un.Bool[i], p.Unknown)
					}
					// the value itself, within the bound plus the float32
					// roundings of the graph's last few operations
					osc := res.Outputs[export.OpenScoreOutput]
					if osc == nil {
						t.Fatalf("the model rejects (%+v) but the graph has no %s output", r, export.OpenScoreOutput)
					}
					terms := math.Abs(v) + r.Temperature
					if r.Score.NeedsCosine() {
						terms += (math.Abs(float64(slices.Max(row)))+math.Abs(r.TopMean))/r.TopStd + (math.Abs(cos[i])+math.Abs(r.CosMean))/r.CosStd
					}
					if d := math.Abs(float64(osc.Float[i]) - v); d > bound+16*float64(len(names))*terms/(1<<24) {
						t.Errorf("%s: open-set score in Node %v, flycl %v (bound %.3g)", filepath.Base(test[i]), osc.Float[i], v, bound)
					}
					if p.Unknown {
						rejected++
					}
				}
				t.Logf("unknown: %d of %d photos (%s < %.4g)", rejected, len(test), r.Score, r.Threshold)
			}

			// the graph from features, on flycl's features
			fg := filepath.Join(dir, "f.onnx")
			if _, err := runCLI(t, "export", "--model", model, "--out", fg, "--from", "features", "--w", "sparse"); err != nil {
				t.Fatal(err)
			}
			fgraph, _ := os.ReadFile(fg)
			fres, err := r.Run(context.Background(), fgraph, export.FeaturesInput, fs.X, []int{n, fs.D}, 0)
			if err != nil {
				t.Fatal(err)
			}
			ws, err := f.Snapshot.Predictor().Scores(context.Background(), fs.X)
			if err != nil {
				t.Fatal(err)
			}
			checkAgainst(t, f.Snapshot, fs.X, nil, ws, fres)
		})
	}
}

// TestExportFeaturesNode needs no shared data: a model learned from a
// feature file exports only from features (images are refused, as is a
// --precision), and the graph's scores in Node's ONNX Runtime are flycl
// predict's, within the float32 bound, with the same class, on features
// of known and unknown classes.
func TestExportFeaturesNode(t *testing.T) {
	r := nodeORT(t)
	dir := t.TempDir()
	train, test := filepath.Join(dir, "train.npz"), filepath.Join(dir, "test.npz")
	blobs(t, train, 1, 16, 20, "cat", "dog", "fox")
	blobs(t, test, 2, 16, 10, "cat", "dog", "fox", "owl")
	model := filepath.Join(dir, "m.flycl")
	if _, err := runCLI(t, "learn", "--model", model, "--features", train, "--m", "400", "--p", "8", "--k", "100", "--lambdas", "0.1,1,10"); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "m.onnx")
	for _, c := range []struct{ args, refusal string }{
		{"--from images", "export it with --from features"},
		{"--precision int8", "apply to a graph from images"},
		{"--w diagonal", "unknown projection form"},
	} {
		if _, err := runCLI(t, append([]string{"export", "--model", model, "--out", out}, strings.Fields(c.args)...)...); err == nil || !strings.Contains(err.Error(), c.refusal) {
			t.Errorf("export %s: %v, want an error saying %q", c.args, err, c.refusal)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Fatal("a refused export wrote the file")
	}
	if _, err := runCLI(t, "export", "--model", model, "--out", out); err != nil {
		t.Fatal(err)
	}
	jsonOut, err := runCLI(t, "predict", "--model", model, "--features", test, "--format", "json", "--top", "3")
	if err != nil {
		t.Fatal(err)
	}
	var pred struct{ Predictions []prediction }
	if err := json.Unmarshal([]byte(jsonOut), &pred); err != nil {
		t.Fatal(err)
	}
	f, err := modelfile.Load(model)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := features.Load(test)
	if err != nil {
		t.Fatal(err)
	}
	graph, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Run(context.Background(), graph, export.FeaturesInput, fs.X, []int{fs.N, fs.D}, 0)
	if err != nil {
		t.Fatal(err)
	}
	names := f.Snapshot.Predictor().Classes().Names()
	want := make([]float32, fs.N*len(names))
	for i, p := range pred.Predictions {
		for _, top := range p.Top {
			want[i*len(names)+slices.Index(names, top.Name)] = top.Score
		}
	}
	checkAgainst(t, f.Snapshot, fs.X, nil, want, res)
}

// checkAgainst compares a Node run's scores and class with flycl's scores
// want (n × classes) of the features x (dx: how far Node's may differ).
func checkAgainst(t *testing.T, s *flycl.Snapshot, x, dx, want []float32, res *ortnode.Result) []float64 {
	t.Helper()
	tol, err := export.Tolerance(s, x, dx)
	if err != nil {
		t.Fatal(err)
	}
	sc, cl := res.Outputs[export.ScoresOutput], res.Outputs[export.ClassOutput]
	nc := len(s.State().Labels)
	n := len(want) / nc
	if sc == nil || cl == nil || len(sc.Float) != len(want) || len(cl.Int) != n {
		t.Fatalf("outputs %+v, want scores %d×%d and class %d", res.Outputs, n, nc, n)
	}
	var worst, bound float64
	for i := 0; i < n; i++ {
		best := 0
		for c := 0; c < nc; c++ {
			j := i*nc + c
			d := math.Abs(float64(sc.Float[j]) - float64(want[j]))
			if d > tol[j] {
				t.Errorf("sample %d class %d: Node %v, flycl %v: differ by %.3g, beyond the bound %.3g", i, c, sc.Float[j], want[j], d, tol[j])
			}
			if d > worst {
				worst, bound = d, tol[j]
			}
			if want[j] > want[i*nc+best] {
				best = c
			}
		}
		if int(cl.Int[i]) != best {
			t.Errorf("sample %d: Node's class %d, flycl's %d (scores %v and %v)", i, cl.Int[i], best, sc.Float[i*nc:(i+1)*nc], want[i*nc:(i+1)*nc])
		}
	}
	t.Logf("scores: largest difference %.3g (its bound %.3g)", worst, bound)
	return tol
}

// BenchmarkExportNode measures, side by side in one run on the same
// inputs, the exported graph in Node's ONNX Runtime against flycl's own
// prediction, for a model of the default size (m = 10000, p = 300,
// k = 3000) on MobileNetV2 features (d = 1280):
//
//   - images: 64 ImageNet sample photos. flycl predict's work (decode,
//     transform, backbone in batches of 32, Predictor.Scores) and the
//     same without decoding and transform (a backbone session on the
//     preprocessed tensors, then Predictor.Scores), against the graph
//     from images on the preprocessed tensors in batches of 32 and of 1;
//   - features: 1024 feature vectors through Predictor.Scores, and one at
//     a time, against the graph from features, W dense and W sparse
//     (batches of 32 and 1).
//
// Run with: go test ./cmd/flycl -run '^$' -bench ExportNode -benchtime 1x
func BenchmarkExportNode(b *testing.B) {
	lib := os.Getenv("FLYCL_ORT_LIB")
	if lib == "" {
		lib = "../../.cache/onnxruntime/node_modules/onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime.so.1"
	}
	if _, err := os.Stat(lib); err != nil {
		b.Skipf("ONNX Runtime not available: %v", err)
	}
	if err := backbone.Init(lib); err != nil {
		b.Fatal(err)
	}
	r := nodeORT(b)
	mnv2 := filepath.Join(sharedDir, "models", "mobilenetv2-1.0")
	if _, err := os.Stat(mnv2); err != nil {
		b.Skipf("shared MobileNetV2 not available: %v", err)
	}
	train, _ := imagenetPhotos(b)
	all, _ := filepath.Glob(filepath.Join(sharedDir, "data", "imagenet-sample-500", "*.JPEG"))
	sort.Strings(all)
	photos := all[200:264]
	// FLYCL_EXPORT_BENCH_MODEL keeps the model between runs (learning it,
	// m = 10000, takes most of the benchmark's time)
	model := os.Getenv("FLYCL_EXPORT_BENCH_MODEL")
	if model == "" {
		model = filepath.Join(b.TempDir(), "m.flycl")
	}
	if _, err := os.Stat(model); err != nil {
		root := newRoot()
		root.SetArgs([]string{"learn", "--model", model, "--ort-lib", lib, "--quiet", "--data", "folder:" + train,
			"--backbone", "mobilenetv2:" + mnv2, "--cache", "", "--lambdas", "1,10,100,1000"})
		if err := root.Execute(); err != nil {
			b.Fatal(err)
		}
	}
	f, err := modelfile.Load(model)
	if err != nil {
		b.Fatal(err)
	}
	p := f.Snapshot.Predictor()
	bm, _ := extract.OpenBackbone(f.Pipeline.Backbone, "")
	e, err := extract.ForModel(f.Pipeline, bm, f.Pipeline.Backbone)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	var x []float32
	for _, ph := range photos {
		img, err := imageio.Decoder{}.DecodeFile(ph)
		if err != nil {
			b.Fatal(err)
		}
		x = append(x, e.Preset.Tensor(img, nil)...)
	}
	n, size := len(photos), e.Backbone.Size
	per := 3 * size * size
	// rate times reps runs of run (after one that warms up) and returns
	// items per second.
	rate := func(items int, run func() error) float64 {
		if err := run(); err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		const reps = 2
		for i := 0; i < reps; i++ {
			if err := run(); err != nil {
				b.Fatal(err)
			}
		}
		return float64(reps*items) / time.Since(start).Seconds()
	}
	graph := func(from string, form export.Projection) []byte {
		opt := export.Options{Projection: form}
		if from == "images" {
			opt.Extractor = e
		}
		g, err := export.Build(f.Snapshot, opt)
		if err != nil {
			b.Fatal(err)
		}
		return g.ONNX
	}
	node := func(g []byte, input string, x []float32, shape []int) float64 {
		res, err := r.Run(ctx, g, input, x, shape, 3)
		if err != nil {
			b.Fatal(err)
		}
		return float64(shape[0]) / res.SecondsPerRun
	}
	s, err := e.Files(ctx, photos)
	if err != nil {
		b.Fatal(err)
	}
	feats := s.X
	sess, err := e.Backbone.NewSession(0)
	if err != nil {
		b.Fatal(err)
	}
	defer sess.Close()
	goImages := func(batch int) func() float64 {
		return func() float64 {
			return rate(n, func() error {
				for lo := 0; lo < n; lo += batch {
					out, err := sess.Run(x[lo*per:(lo+batch)*per], batch)
					if err != nil {
						return err
					}
					if _, err := p.Scores(ctx, out[0]); err != nil {
						return err
					}
				}
				return nil
			})
		}
	}
	// features: the 64 photos' features repeated to 1024 rows
	d := p.InputDim()
	fx := make([]float32, 0, 1024*d)
	for len(fx) < 1024*d {
		fx = append(fx, feats...)
	}
	fx = fx[:1024*d]
	goFeatures := func(batch int) func() float64 {
		return func() float64 {
			return rate(256, func() error {
				for lo := 0; lo < 256; lo += batch {
					if _, err := p.Scores(ctx, fx[lo*d:(lo+batch)*d]); err != nil {
						return err
					}
				}
				return nil
			})
		}
	}
	img := graph("images", export.Dense)
	dense, sparse := graph("features", export.Dense), graph("features", export.Sparse)
	ms := []struct {
		name string
		f    func() float64
	}{
		{"images/s flycl predict (decode, transform, backbone, scores)", func() float64 {
			return rate(n, func() error {
				s, err := e.Files(ctx, photos)
				if err == nil {
					_, err = p.Scores(ctx, s.X)
				}
				return err
			})
		}},
		{"images/s flycl, preprocessed, batch 32", goImages(32)},
		{"images/s Node ORT graph, batch 32", func() float64 { return node(img, e.Backbone.Input, x[:32*per], []int{32, 3, size, size}) }},
		{"images/s flycl, preprocessed, batch 1", goImages(1)},
		{"images/s Node ORT graph, batch 1", func() float64 { return node(img, e.Backbone.Input, x[:per], []int{1, 3, size, size}) }},
		{"features/s flycl Predictor.Scores, batch 256", goFeatures(256)},
		{"features/s flycl Predictor.Scores, batch 32", goFeatures(32)},
		{"features/s Node ORT W dense, batch 256", func() float64 { return node(dense, export.FeaturesInput, fx[:256*d], []int{256, d}) }},
		{"features/s Node ORT W dense, batch 32", func() float64 { return node(dense, export.FeaturesInput, fx[:32*d], []int{32, d}) }},
		// not 256: the sparse form's Gather makes N×m×p floats (12 MB a sample)
		{"features/s Node ORT W sparse, batch 32", func() float64 { return node(sparse, export.FeaturesInput, fx[:32*d], []int{32, d}) }},
		{"features/s flycl Predictor.Scores, batch 1", goFeatures(1)},
		{"features/s Node ORT W dense, batch 1", func() float64 { return node(dense, export.FeaturesInput, fx[:d], []int{1, d}) }},
		{"features/s Node ORT W sparse, batch 1", func() float64 { return node(sparse, export.FeaturesInput, fx[:d], []int{1, d}) }},
	}
	// Three rounds, each measurement once per round in turn, so that a
	// change in the machine's load falls on all of them; the median of
	// each is reported.
	const rounds = 3
	vals := make([][]float64, len(ms))
	for round := 0; round < rounds; round++ {
		for i, m := range ms {
			vals[i] = append(vals[i], m.f())
		}
	}
	fmt.Fprintf(os.Stderr, "graph sizes: from images %.1f MB, from features W dense %.1f MB, W sparse %.1f MB\n",
		float64(len(img))/1e6, float64(len(dense))/1e6, float64(len(sparse))/1e6)
	for i, m := range ms {
		slices.Sort(vals[i])
		med := vals[i][rounds/2]
		b.ReportMetric(med, strings.Join(strings.Fields(m.name), "_"))
		fmt.Fprintf(os.Stderr, "%-62s %8.1f  (rounds %.1f)\n", m.name, med, vals[i])
	}
}
