package openset

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/format/features"
	"github.com/flycl/flycl/internal/codec"
	"github.com/flycl/flycl/reject"
)

// Config is the benchmark's protocol.
type Config struct {
	Model flycl.Config
	// Known is the number of classes the split protocol learns (default:
	// half of the classes).
	Known int
	// Tasks is the number of tasks of the incremental protocol (default 5;
	// 0 or 1 skips it... use Protocols to choose).
	Tasks int
	// Splits is the number of random class orders (default 3).
	Splits int
	// Seeds are the seeds of W (default 1993, 1994).
	Seeds []uint64
	// Calibration is the model's own calibration (defaults: see
	// reject.Calibration).
	Calibration reject.Calibration
	// KNN is k of the k-th nearest neighbour score (default 10).
	KNN int
	// Shrink is the Mahalanobis covariance's shrinkage (default 0.1).
	Shrink float64
	// Protocols to run: "split", "incremental" (default both).
	Protocols []string
}

func (c Config) withDefaults(nclasses int) Config {
	if c.Known == 0 {
		c.Known = nclasses / 2
	}
	if c.Tasks == 0 {
		c.Tasks = 5
	}
	if c.Splits == 0 {
		c.Splits = 3
	}
	if len(c.Seeds) == 0 {
		c.Seeds = []uint64{1993, 1994}
	}
	if c.KNN == 0 {
		c.KNN = 10
	}
	if c.Shrink == 0 {
		c.Shrink = 0.1
	}
	if len(c.Protocols) == 0 {
		c.Protocols = []string{"split", "incremental"}
	}
	return c
}

// Set is a named pair of feature sets (one backbone's features of a data
// set).
type Set struct {
	Name        string
	Train, Test *features.Set
}

// Score names, in table order. The first three are the model's own
// (reject.Score); energy is also given at temperature 1. "(log1p)"
// scores are computed on sign(x)·log(1+|x|) of the features (a squashing
// of large activations, as ReAct's clipping, that needs no statistic);
// ViM subtracts from the top score the residual outside the principal
// subspace (a quarter of the dimensions) of the training features; the
// last is the sum of the z-scores of the top score and the cosine to the
// class means of log1p features, standardized by their leave-one-out
// scores. "(codes)" scores are computed on the model's sparse codes h
// (top-k of Wx), whose class sums are the rows of S: the model keeps
// them already.
var Scores = []string{"top", "margin", "energy (fitted T)", "energy (T=1)", "mahalanobis", "relative mahalanobis", "cosine NCM", "kNN cosine",
	"ViM", "cosine NCM (log1p)", "kNN cosine (log1p)", "top + cosine NCM (log1p)", "cosine NCM (codes)", "top + cosine NCM (codes)"}

// ridgeScore maps a score name to the reject.Score a model can
// calibrate (false for the feature-space scores).
func ridgeScore(name string) (reject.Score, bool) {
	switch name {
	case "top":
		return reject.ScoreTop, true
	case "margin":
		return reject.ScoreMargin, true
	case "energy (fitted T)":
		return reject.ScoreEnergy, true
	}
	return "", false
}

// Row is one line of the table: a score on one set and protocol, each
// metric a mean over runs (splits × seeds, and the tasks of the
// incremental protocol).
type Row struct {
	Set, Protocol, Score string
	AUROC, FPR95, Acc95  Stat
	// With the threshold calibrated by leave-one-out (ridge scores only):
	// the share of known test samples kept, of unknown ones rejected, and
	// the accuracy on the kept known ones.
	Kept, Rejected, AccKept Stat
}

// Calibration is the probability calibration of one set and protocol:
// ECE of the top-class confidence, before (softmax of the raw scores,
// and the top score clipped to [0, 1]) and after the fitted temperature.
type Calibration struct {
	Set, Protocol                 string
	SoftmaxT1, ClippedTop, Fitted Stat
	Accuracy                      Stat // closed-set accuracy on the known classes
	Temperature                   Stat
	LearnSeconds                  Stat // one learn, its calibration included
}

// Result is the benchmark's output.
type Result struct {
	Config Config
	Rows   []Row
	Calib  []Calibration
}

// run collects the per-run metrics of one set and protocol.
type run struct {
	auroc, fpr, acc95, kept, rej, accKept map[string][]float64
	eceT1, eceTop, eceFit, acc, temp      []float64
	learnS                                []float64
}

func newRun() *run {
	return &run{auroc: map[string][]float64{}, fpr: map[string][]float64{}, acc95: map[string][]float64{},
		kept: map[string][]float64{}, rej: map[string][]float64{}, accKept: map[string][]float64{}}
}

// Run runs the benchmark on each set; progress (may be nil) gets one line
// per evaluation.
func Run(ctx context.Context, sets []Set, cfg Config, progress func(string)) (*Result, error) {
	if progress == nil {
		progress = func(string) {}
	}
	res := &Result{}
	for _, s := range sets {
		if s.Train == nil || s.Test == nil || s.Train.D != s.Test.D {
			return nil, fmt.Errorf("openset: set %q needs train and test features of one dimension", s.Name)
		}
		classes := s.Train.Classes()
		c := cfg.withDefaults(len(classes))
		res.Config = c
		if c.Known < 1 || c.Known >= len(classes) {
			return nil, fmt.Errorf("openset: %d known classes of %d: want at least one known and one unknown", c.Known, len(classes))
		}
		if c.Tasks < 2 || c.Tasks > len(classes) {
			return nil, fmt.Errorf("openset: %d tasks for %d classes: want 2 to %d", c.Tasks, len(classes), len(classes))
		}
		for _, proto := range c.Protocols {
			r := newRun()
			for split := 0; split < c.Splits; split++ {
				order := slices.Clone(classes)
				rng := rand.New(rand.NewPCG(uint64(split), 0x5eed))
				rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
				for _, seed := range c.Seeds {
					var err error
					switch proto {
					case "split":
						err = runTasks(ctx, s, c, seed, [][]int{order[:c.Known]}, order, r, true, progress)
					case "incremental":
						err = runTasks(ctx, s, c, seed, splitTasks(order, c.Tasks), order, r, false, progress)
					default:
						err = fmt.Errorf("openset: unknown protocol %q (want split or incremental)", proto)
					}
					if err != nil {
						return nil, err
					}
				}
			}
			for _, sc := range Scores {
				res.Rows = append(res.Rows, Row{Set: s.Name, Protocol: proto, Score: sc,
					AUROC: stat(r.auroc[sc]), FPR95: stat(r.fpr[sc]), Acc95: stat(r.acc95[sc]),
					Kept: stat(r.kept[sc]), Rejected: stat(r.rej[sc]), AccKept: stat(r.accKept[sc])})
			}
			res.Calib = append(res.Calib, Calibration{Set: s.Name, Protocol: proto,
				SoftmaxT1: stat(r.eceT1), ClippedTop: stat(r.eceTop), Fitted: stat(r.eceFit),
				Accuracy: stat(r.acc), Temperature: stat(r.temp), LearnSeconds: stat(r.learnS)})
		}
	}
	return res, nil
}

// splitTasks cuts order into t tasks of (nearly) equal size.
func splitTasks(order []int, t int) [][]int {
	out := make([][]int, t)
	for i := range out {
		out[i] = order[i*len(order)/t : (i+1)*len(order)/t]
	}
	return out
}

// runTasks learns the tasks in order and evaluates after each (after the
// last only when last is true: in the incremental protocol no class is
// unknown after it).
func runTasks(ctx context.Context, s Set, c Config, seed uint64, tasks [][]int, order []int, r *run, last bool, progress func(string)) error {
	mc := c.Model
	mc.Seed = seed
	model, err := flycl.New(mc, s.Train.D)
	if err != nil {
		return err
	}
	cal := c.Calibration
	if err := model.SetCalibration(&cal); err != nil {
		return err
	}
	gauss := NewGaussian(s.Train.D)
	var trainX []float32
	var trainY []int
	var known []int
	for ti, task := range tasks {
		x, y, _ := s.Train.Subset(task)
		t0 := time.Now()
		if _, err := model.Learn(ctx, x, y, nil); err != nil {
			return err
		}
		r.learnS = append(r.learnS, time.Since(t0).Seconds())
		if err := gauss.Add(x, y); err != nil {
			return err
		}
		trainX, trainY = append(trainX, x...), append(trainY, y...)
		nlast := len(y)
		known = append(known, task...)
		if ti == len(tasks)-1 && !last {
			break
		}
		var unknown []int
		for _, l := range order {
			if !slices.Contains(known, l) {
				unknown = append(unknown, l)
			}
		}
		if err := evaluate(ctx, s, c, model, gauss, trainX, trainY, nlast, known, unknown, r); err != nil {
			return err
		}
		progress(fmt.Sprintf("%s: seed %d, %d known / %d unknown classes evaluated", s.Name, seed, len(known), len(unknown)))
	}
	return nil
}

// evaluate scores the test samples of the known and unknown classes; the
// last nlast rows of trainX are the samples of the learn that just ended.
func evaluate(ctx context.Context, s Set, c Config, model *flycl.Model, gauss *Gaussian, trainX []float32, trainY []int, nlast int, known, unknown []int, r *run) error {
	kx, ky, _ := s.Test.Subset(known)
	ux, _, _ := s.Test.Subset(unknown)
	d := s.Test.D
	nk := len(ky)
	all := append(slices.Clone(kx), ux...)
	sc, err := codec.BatchPredictor(model).Scores(ctx, all)
	if err != nil {
		return err
	}
	labels := model.Classes().Labels()
	nc := len(labels)
	n := len(all) / d
	rej := model.Rejection()
	T := rej.Temperature
	correct := make([]bool, nk)
	for i := 0; i < nk; i++ {
		row := sc[i*nc : (i+1)*nc]
		correct[i] = labels[slices.Index(row, slices.Max(row))] == ky[i]
	}
	vals := map[string][]float64{}
	for _, name := range []string{"top", "margin", "energy (fitted T)", "energy (T=1)"} {
		v := make([]float64, n)
		for i := range v {
			row := sc[i*nc : (i+1)*nc]
			switch name {
			case "energy (T=1)":
				v[i] = reject.ScoreEnergy.Value(row, 1)
			default:
				k, _ := ridgeScore(name)
				v[i] = k.Value(row, T)
			}
		}
		vals[name] = v
	}
	mh, err := gauss.Fit(c.Shrink)
	if err != nil {
		return err
	}
	vals["mahalanobis"] = mh.Scores(all, d)
	vals["relative mahalanobis"] = mh.Relative(all, d)
	vals["cosine NCM"] = cosineNCM(trainX, trainY, all, d)
	vals["kNN cosine"] = cosineKNN(trainX, all, d, c.KNN)
	trainSc, err := codec.BatchPredictor(model).Scores(ctx, trainX)
	if err != nil {
		return err
	}
	trainTop := make([]float64, len(trainY))
	for i := range trainTop {
		trainTop[i] = reject.ScoreTop.Value(trainSc[i*nc:(i+1)*nc], 0)
	}
	vals["ViM"] = vimScores(trainX, trainTop, all, vals["top"], d, d/4)
	tlog, alog := signedLog1p(trainX), signedLog1p(all)
	vals["cosine NCM (log1p)"] = cosineNCM(tlog, trainY, alog, d)
	vals["kNN cosine (log1p)"] = cosineKNN(tlog, alog, d, c.KNN)

	loo, looCls := codec.LeaveOneOut(model)
	// the fusion, standardized and calibrated by the leave-one-out scores
	// of the samples the model calibrated on (reject.CalibrationSamples of
	// the last learn): the top score's from the model, the cosine's from
	// the class sums less each sample
	zTop, zNCM := standardizer{0, 1}, standardizer{0, 1}
	extra := map[string]float64{} // calibrated thresholds of the feature-space scores
	if sel := reject.CalibrationSamples(nlast, orDefaultInt(c.Calibration.MaxSamples, reject.DefaultCalibrationSamples)); loo != nil && len(sel) == len(looCls) {
		for i := range sel {
			sel[i] += len(trainY) - nlast
		}
		lt := make([]float64, len(sel))
		for i := range lt {
			lt[i] = reject.ScoreTop.Value(loo[i*nc:(i+1)*nc], 0)
		}
		ln := cosineNCMLOO(tlog, trainY, d, sel)
		zTop, zNCM = newStandardizer(lt), newStandardizer(ln)
		extra["cosine NCM (log1p)"] = reject.KeepThreshold(ln, rej.Keep)
		extra["top + cosine NCM (log1p)"] = reject.KeepThreshold(fuse(lt, ln, zTop, zNCM), rej.Keep)
	}
	vals["top + cosine NCM (log1p)"] = fuse(vals["top"], vals["cosine NCM (log1p)"], zTop, zNCM)
	// the same on the codes: the class sums are S
	m := c.Model.M
	htr, err := codec.Expand(ctx, model, trainX)
	if err != nil {
		return err
	}
	hall, err := codec.Expand(ctx, model, all)
	if err != nil {
		return err
	}
	vals["cosine NCM (codes)"] = cosineNCM(htr, trainY, hall, m)
	zCodes := standardizer{0, 1}
	if sel := reject.CalibrationSamples(nlast, orDefaultInt(c.Calibration.MaxSamples, reject.DefaultCalibrationSamples)); loo != nil && len(sel) == len(looCls) {
		for i := range sel {
			sel[i] += len(trainY) - nlast
		}
		lt := make([]float64, len(sel))
		for i := range lt {
			lt[i] = reject.ScoreTop.Value(loo[i*nc:(i+1)*nc], 0)
		}
		ln := cosineNCMLOO(htr, trainY, m, sel)
		zCodes = newStandardizer(ln)
		extra["cosine NCM (codes)"] = reject.KeepThreshold(ln, rej.Keep)
		extra["top + cosine NCM (codes)"] = reject.KeepThreshold(fuse(lt, ln, zTop, zCodes), rej.Keep)
	}
	vals["top + cosine NCM (codes)"] = fuse(vals["top"], vals["cosine NCM (codes)"], zTop, zCodes)
	if rej.Score == reject.ScoreTopCosine {
		// the model's own score: the same fusion, standardized by the
		// model's pool and compared with its stored threshold
		_, cos, err := model.Predictor().ScoresCosines(ctx, all)
		if err != nil {
			return err
		}
		v := make([]float64, n)
		for i := range v {
			v[i] = rej.Value(sc[i*nc:(i+1)*nc], cos[i])
		}
		vals["top + cosine NCM (codes)"] = v
		extra["top + cosine NCM (codes)"] = rej.Threshold
	}
	for _, name := range Scores {
		v := vals[name]
		kv, uv := v[:nk], v[nk:]
		r.auroc[name] = append(r.auroc[name], AUROC(kv, uv))
		t := keepThreshold(kv, 0.95)
		r.fpr[name] = append(r.fpr[name], share(uv, func(x float64) bool { return x >= t }))
		r.acc95[name] = append(r.acc95[name], accuracyAbove(kv, correct, t))
		if k, ok := ridgeScore(name); ok && loo != nil {
			lv := make([]float64, len(looCls))
			for i := range lv {
				lv[i] = k.Value(loo[i*nc:(i+1)*nc], T)
			}
			// the model's own threshold for the score it calibrates (its
			// pool may reach back to earlier learns); for the others, the
			// same share of this learn's leave-one-out scores
			tc := reject.KeepThreshold(lv, rej.Keep)
			if k == rej.Score {
				tc = rej.Threshold
			}
			r.kept[name] = append(r.kept[name], share(kv, func(x float64) bool { return x >= tc }))
			r.rej[name] = append(r.rej[name], share(uv, func(x float64) bool { return x < tc }))
			r.accKept[name] = append(r.accKept[name], accuracyAbove(kv, correct, tc))
		} else if tc, ok := extra[name]; ok {
			r.kept[name] = append(r.kept[name], share(kv, func(x float64) bool { return x >= tc }))
			r.rej[name] = append(r.rej[name], share(uv, func(x float64) bool { return x < tc }))
			r.accKept[name] = append(r.accKept[name], accuracyAbove(kv, correct, tc))
		}
	}
	// calibration of the probabilities, on the known test samples
	confT1, confTop, confFit := make([]float64, nk), make([]float64, nk), make([]float64, nk)
	for i := 0; i < nk; i++ {
		row := sc[i*nc : (i+1)*nc]
		p1, _ := reject.Rule{Temperature: 1}.Probability(row)
		confT1[i] = p1
		confTop[i] = min(max(float64(slices.Max(row)), 0), 1)
		confFit[i], _ = rej.Probability(row)
	}
	hit := 0
	for _, ok := range correct {
		if ok {
			hit++
		}
	}
	r.acc = append(r.acc, float64(hit)/float64(nk))
	r.eceT1 = append(r.eceT1, ECE(confT1, correct, 15))
	r.eceTop = append(r.eceTop, ECE(confTop, correct, 15))
	if T > 0 {
		r.eceFit = append(r.eceFit, ECE(confFit, correct, 15))
		r.temp = append(r.temp, T)
	}
	return nil
}

// Markdown writes the result as Markdown tables: the scores, then the
// probability calibration.
func (res *Result) Markdown(w io.Writer) {
	pct := func(s Stat) string {
		if math.IsNaN(s.Mean) {
			return "–"
		}
		return fmt.Sprintf("%.1f ± %.1f", 100*s.Mean, 100*s.Std)
	}
	io.WriteString(w, "| features | protocol | score | AUROC % | FPR at 95% TPR % | known acc. at 95% TPR % | calibrated: known kept % | unknown rejected % | known acc. kept % |\n")
	fmt.Fprintln(w, "|---|---|---|---:|---:|---:|---:|---:|---:|")
	for _, r := range res.Rows {
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r.Set, r.Protocol, r.Score,
			pct(r.AUROC), pct(r.FPR95), pct(r.Acc95), pct(r.Kept), pct(r.Rejected), pct(r.AccKept))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| features | protocol | closed-set acc. % | ECE % softmax(T=1) | ECE % top score | ECE % fitted T | fitted T | learn s |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|---:|")
	for _, c := range res.Calib {
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %.3f ± %.3f | %.1f |\n", c.Set, c.Protocol, pct(c.Accuracy),
			pct(c.SoftmaxT1), pct(c.ClippedTop), pct(c.Fitted), c.Temperature.Mean, c.Temperature.Std, c.LearnSeconds.Mean)
	}
	var seeds []string
	for _, s := range res.Config.Seeds {
		seeds = append(seeds, fmt.Sprint(s))
	}
	fmt.Fprintf(w, "\nm=%d, p=%d, k=%d; %d class splits × seeds %s; split: %d known classes in one task; incremental: %d tasks, evaluated after each but the last; calibration keeps %.0f%% of ≤%d leave-one-out samples per learn; Mahalanobis shrink %g; kNN k=%d.\n",
		res.Config.Model.M, res.Config.Model.P, res.Config.Model.K, res.Config.Splits, strings.Join(seeds, ","),
		res.Config.Known, res.Config.Tasks, 100*orDefault(res.Config.Calibration.Keep, reject.DefaultKeep),
		orDefaultInt(res.Config.Calibration.MaxSamples, reject.DefaultCalibrationSamples), res.Config.Shrink, res.Config.KNN)
}

func orDefault(v, d float64) float64 {
	if v == 0 {
		return d
	}
	return v
}

func orDefaultInt(v, d int) int {
	if v == 0 {
		return d
	}
	return v
}
