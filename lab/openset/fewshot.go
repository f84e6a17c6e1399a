package openset

import (
	"bufio"
	"context"
	_ "embed"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"

	"github.com/flycl/flycl/internal/codec"
	"github.com/flycl/flycl/reject"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/format/features"
)

// ImageNet500Groups is the grouping of the few-shot benchmark: lines
// "wnid<TAB>group<TAB>photo" assigning the photos of a 500-photo ImageNet
// sample (one photo per class, every other class) to broad classes made
// of WordNet hypernyms (dog, bird, reptile, arthropod, wheeled vehicle,
// clothing, food, musical instrument). Photos of no group are not listed:
// they are the benchmark's unknown ImageNet classes. It was derived once
// from WordNet 3.0 by scripts/imagenet-groups.
//
//go:embed data/imagenet500-groups.tsv
var ImageNet500Groups string

// ParseGroups reads lines "key<TAB>group[<TAB>...]" ('#' starts a
// comment line) into a map from key to group.
func ParseGroups(r io.Reader) (map[string]string, error) {
	out := map[string]string{}
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		t := sc.Text()
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		f := strings.Split(t, "\t")
		if len(f) < 2 || f[0] == "" || f[1] == "" {
			return nil, fmt.Errorf("openset: groups line %d: want key<TAB>group, have %q", line, t)
		}
		if g, ok := out[f[0]]; ok && g != f[1] {
			return nil, fmt.Errorf("openset: groups line %d: %s is in %s and %s", line, f[0], g, f[1])
		}
		out[f[0]] = f[1]
	}
	return out, sc.Err()
}

// FewShotConfig is the few-shot benchmark's protocol.
type FewShotConfig struct {
	// Model is the model's configuration (W's seed is Seed + the split).
	Model flycl.Config
	// Shots are the photos per broad class learned (default 3, 5, 10).
	Shots []int
	// Splits is the number of random draws of the learned photos per
	// shot count (default 20).
	Splits int
	// Keeps are the shares of known photos the thresholds are asked to
	// keep (default 0.90, 0.95).
	Keeps []float64
	// Scores are the open-set scores compared (default top+cosine, top,
	// margin, energy).
	Scores []reject.Score
	// Seed seeds the draws (default 1).
	Seed uint64
	// Compare adds, side by side, the rows of a model that takes its
	// threshold from the jackknife extrapolation of its leave-one-out
	// values (reject.Calibration.ExtrapolateThreshold), and the
	// calibration of a temperature fitted on the exact leave-one-out
	// values (the rule before the extrapolation), in each split.
	Compare bool
}

func (c FewShotConfig) withDefaults() FewShotConfig {
	if len(c.Shots) == 0 {
		c.Shots = []int{3, 5, 10}
	}
	if c.Splits == 0 {
		c.Splits = 20
	}
	if len(c.Keeps) == 0 {
		c.Keeps = []float64{0.90, 0.95}
	}
	if len(c.Scores) == 0 {
		c.Scores = []reject.Score{reject.ScoreTopCosine, reject.ScoreTop, reject.ScoreMargin, reject.ScoreEnergy}
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
	return c
}

// FewShotSet is one backbone's features: Photos, whose class names are
// looked up in Groups (a photo of no group is an unknown one), and Other,
// photos of other data sets that are all unknown.
type FewShotSet struct {
	Name   string
	Photos *features.Set
	Groups map[string]string
	Other  *features.Set
}

// FewShotRow is one line of the result: a set, a shot count, a score and
// a requested keep share, each metric over the splits.
type FewShotRow struct {
	Set   string
	Shots int
	Score reject.Score
	// Extrapolated: the row of the model that takes its threshold from
	// extrapolated values (FewShotConfig.Compare).
	Extrapolated bool
	Keep         float64
	// Pool is the number of leave-one-out scores the threshold was taken
	// from and Guaranteed what it keeps in expectation
	// (reject.GuaranteedKeep).
	Pool       int
	Guaranteed float64
	// Kept is the share of the learned classes' other photos kept, each
	// class weighted alike (as the calibration pool weighs them): its mean
	// and 10th percentile over splits.
	Kept, Kept10 float64
	// RejectedImageNet and RejectedOther are the shares of unknown photos
	// rejected (ImageNet classes of no group; the other data set).
	RejectedImageNet, RejectedOther float64
	// AccKept is the accuracy of the kept answers on known photos.
	AccKept float64
	// AUROC of known against all unknown photos (threshold-free).
	AUROC float64
}

// FewShotCalib is the probability calibration of one set and shot
// count, over the splits: ECE (15 bins) of the top-class probability on
// the known test photos with the model's temperature, and with the
// plain likelihood fit of T on the exact leave-one-out scores (not
// extrapolated, no bound, running to T → 0 when all are right) for
// comparison.
type FewShotCalib struct {
	Set                   string
	Shots                 int
	Accuracy              float64
	ECE, ECE10, ECEPlain  float64 // mean, 90th percentile, the plain fit's mean
	T, TPlain             float64 // median temperatures
	Confident, ConfidentP float64 // share of answers with p ≥ 0.99: model, plain fit
	MeanP, MeanPPlain     float64 // mean top-class probability: model, plain fit
	// ECEAll and ECEAllPlain are the ECE of the known test photos of all
	// splits together (one split has too few photos for 15 bins: its
	// ECE is mostly sampling noise).
	ECEAll, ECEAllPlain float64
	// LeaveOneOut is the same for the temperature fitted on the exact
	// leave-one-out values (FewShotConfig.Compare; nil without).
	LeaveOneOut *FewShotCalib
}

// FewShotResult is the benchmark's output.
type FewShotResult struct {
	Config FewShotConfig
	Groups int
	Rows   []FewShotRow
	Calib  []FewShotCalib
}

// FewShot runs the few-shot benchmark: for each set and shot count, in
// each split, a new model learns Shots random photos of each broad class
// in one learn (calibrating as a deployed model does), and its answers on
// the other photos of those classes, on the photos of no group and on
// Other are scored. progress (may be nil) gets a line per shot count.
func FewShot(ctx context.Context, sets []FewShotSet, cfg FewShotConfig, progress func(string)) (*FewShotResult, error) {
	c := cfg.withDefaults()
	if progress == nil {
		progress = func(string) {}
	}
	res := &FewShotResult{Config: c}
	for _, s := range sets {
		if s.Photos == nil || s.Other == nil || s.Photos.D != s.Other.D {
			return nil, fmt.Errorf("openset: few-shot set %q needs photos and other photos of one dimension", s.Name)
		}
		groups, byGroup, unknownIN, err := fewShotGroups(s, c.Shots)
		if err != nil {
			return nil, err
		}
		res.Groups = len(groups)
		for _, shots := range c.Shots {
			acc := newFewShotAcc(c)
			for split := 0; split < c.Splits; split++ {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				if err := fewShotSplit(ctx, s, c, groups, byGroup, unknownIN, shots, split, acc); err != nil {
					return nil, err
				}
			}
			res.Rows = append(res.Rows, acc.rows(s.Name, shots)...)
			res.Calib = append(res.Calib, acc.calib(s.Name, shots))
			progress(fmt.Sprintf("%s: %d shots, %d splits", s.Name, shots, c.Splits))
		}
	}
	return res, nil
}

// fewShotGroups returns the sorted groups of the set's photos, the rows
// of each group's photos and the rows of the photos of no group (the
// unknown ImageNet photos); an error when there are fewer than 2 groups,
// no photo of no group, or a group without more photos than a shot count.
func fewShotGroups(s FewShotSet, shots []int) ([]string, map[string][]int, []int, error) {
	byGroup := map[string][]int{}
	var unknownIN []int
	for i := 0; i < s.Photos.N; i++ {
		name := className(s.Photos, i)
		if g, ok := s.Groups[name]; ok {
			byGroup[g] = append(byGroup[g], i)
		} else {
			unknownIN = append(unknownIN, i)
		}
	}
	groups := make([]string, 0, len(byGroup))
	for g := range byGroup {
		groups = append(groups, g)
	}
	sort.Strings(groups)
	if len(groups) < 2 || len(unknownIN) == 0 {
		return nil, nil, nil, fmt.Errorf("openset: few-shot set %q: %d groups and %d other photos: want 2 groups and an unknown photo", s.Name, len(groups), len(unknownIN))
	}
	for _, n := range shots {
		for _, g := range groups {
			if len(byGroup[g]) <= n {
				return nil, nil, nil, fmt.Errorf("openset: few-shot set %q: group %s has %d photos, want more than %d", s.Name, g, len(byGroup[g]), n)
			}
		}
	}
	return groups, byGroup, unknownIN, nil
}

// className returns the class name of photo i (its label when the set
// has no names).
func className(s *features.Set, i int) string {
	l := s.Labels[i]
	if l >= 0 && l < len(s.ClassNames) {
		return s.ClassNames[l]
	}
	return fmt.Sprint(l)
}

// fewShotAcc collects the per-split metrics of one set and shot count.
type fewShotAcc struct {
	c                                   FewShotConfig
	kept, rejIN, rejOther, accKept, auc map[string][]float64
	pool                                map[string][]float64
	acc, ece, ecePlain, t, tPlain       []float64
	conf, confPlain, meanP, meanPPlain  []float64
	allP, allPlain                      []float64
	allRight                            []bool
	ext                                 *fewShotAcc // the exact leave-one-out temperature's calibration (Compare)
}

func newFewShotAcc(c FewShotConfig) *fewShotAcc {
	return &fewShotAcc{c: c, kept: map[string][]float64{}, rejIN: map[string][]float64{}, rejOther: map[string][]float64{},
		accKept: map[string][]float64{}, auc: map[string][]float64{}, pool: map[string][]float64{}}
}

func rowKey(k reject.Score, keep float64) string { return fmt.Sprintf("%s|%g", k, keep) }

func extKey(k reject.Score, keep float64) string { return fmt.Sprintf("%s|%g|ext", k, keep) }

// fewShotSplit learns one split and scores it.
func fewShotSplit(ctx context.Context, s FewShotSet, c FewShotConfig, groups []string, byGroup map[string][]int, unknownIN []int, shots, split int, acc *fewShotAcc) error {
	dr := drawFewShot(c.Seed, groups, byGroup, shots, split)
	d := s.Photos.D
	testRows, testCls := dr.testRows, dr.testCls
	px, py := make([]float32, 0, len(dr.learnRows)*d), dr.learnCls
	for _, r := range dr.learnRows {
		px = append(px, s.Photos.Row(r)...)
	}
	mc := c.Model
	mc.Seed = c.Seed + uint64(split)
	model, err := flycl.New(mc, d)
	if err != nil {
		return err
	}
	if err := model.SetCalibration(&reject.Calibration{}); err != nil {
		return err
	}
	if _, err := model.Learn(ctx, px, py, nil); err != nil {
		return err
	}
	labels := model.Classes().Labels() // class index → group index
	nc := len(labels)
	rej := model.Rejection()
	loo, looCls := codec.LeaveOneOut(model)
	if loo == nil {
		return fmt.Errorf("openset: split %d: no leave-one-out scores", split)
	}
	pool := codec.CalibrationPool(model) // (top, cosine) pairs of the model's own score
	if rej.Score != reject.ScoreTopCosine || len(pool) != 2*len(looCls) {
		return fmt.Errorf("openset: split %d: rejection %v with a pool of %d values for %d samples", split, rej, len(pool), len(looCls))
	}

	// the photos scored: known test, unknown ImageNet, other
	rowsOf := func(set *features.Set, rows []int) []float32 {
		out := make([]float32, 0, len(rows)*d)
		for _, r := range rows {
			out = append(out, set.Row(r)...)
		}
		return out
	}
	allOther := make([]int, s.Other.N)
	for i := range allOther {
		allOther[i] = i
	}
	x := append(append(rowsOf(s.Photos, testRows), rowsOf(s.Photos, unknownIN)...), rowsOf(s.Other, allOther)...)
	sc, cos, err := model.Predictor().ScoresCosines(ctx, x)
	if err != nil {
		return err
	}
	nk, nu := len(testRows), len(unknownIN)
	correct := make([]bool, nk)
	probs := make([]float64, nk)
	for i := range correct {
		row := sc[i*nc : (i+1)*nc]
		correct[i] = labels[slices.Index(row, slices.Max(row))] == testCls[i]
		probs[i], _ = rej.Probability(row)
	}
	// class weights: each learned class counts alike in the kept share
	perClass := make([]int, len(groups))
	for _, g := range testCls {
		perClass[g]++
	}

	// score records the metrics of thresholds taken from the calibration
	// values cal, applied to the values val of the photos scored
	score := func(cal, val []float64, keyOf func(keep float64) string) {
		kv, uv := val[:nk], val[nk:]
		auc := AUROC(kv, uv)
		for _, keep := range c.Keeps {
			key := keyOf(keep)
			th := reject.KeepThreshold(cal, keep)
			var w, hit, right float64
			for i, v := range kv {
				wi := 1 / float64(perClass[testCls[i]]*len(groups))
				w += wi
				if v >= th {
					hit += wi
					if correct[i] {
						right++
					}
				}
			}
			keptN := 0
			for _, v := range kv {
				if v >= th {
					keptN++
				}
			}
			acc.kept[key] = append(acc.kept[key], hit/w)
			acc.rejIN[key] = append(acc.rejIN[key], share(uv[:nu], func(v float64) bool { return v < th }))
			acc.rejOther[key] = append(acc.rejOther[key], share(uv[nu:], func(v float64) bool { return v < th }))
			if keptN > 0 {
				acc.accKept[key] = append(acc.accKept[key], right/float64(keptN))
			}
			acc.auc[key] = append(acc.auc[key], auc)
			acc.pool[key] = append(acc.pool[key], float64(len(cal)))
		}
	}

	for _, k := range c.Scores {
		// calibration values (the pooled leave-one-out scores) and the
		// values of the photos scored
		var cal []float64
		val := make([]float64, len(x)/d)
		if k == reject.ScoreTopCosine {
			for i := 0; i < len(pool); i += 2 {
				cal = append(cal, (float64(pool[i])-rej.TopMean)/rej.TopStd+(float64(pool[i+1])-rej.CosMean)/rej.CosStd)
			}
			for i := range val {
				val[i] = rej.Value(sc[i*nc:(i+1)*nc], cos[i])
			}
		} else {
			for i := range looCls {
				cal = append(cal, k.Value(loo[i*nc:(i+1)*nc], rej.Temperature))
			}
			for i := range val {
				val[i] = k.Value(sc[i*nc:(i+1)*nc], rej.Temperature)
			}
		}
		score(cal, val, func(keep float64) string { return rowKey(k, keep) })
	}
	if c.Compare {
		if err := fewShotCompare(ctx, mc, d, px, py, sc, cos, loo, looCls, nk, correct, c, acc, score); err != nil {
			return err
		}
	}
	// probabilities: the model's temperature and the plain likelihood fit
	tPlain := reject.PlainTemperature(loo, nc, looCls)
	plain := make([]float64, nk)
	conf, confPlain := 0, 0
	for i := range plain {
		plain[i], _ = reject.Rule{Temperature: tPlain}.Probability(sc[i*nc : (i+1)*nc])
		if probs[i] >= 0.99 {
			conf++
		}
		if plain[i] >= 0.99 {
			confPlain++
		}
	}
	hits := 0
	for _, ok := range correct {
		if ok {
			hits++
		}
	}
	acc.acc = append(acc.acc, float64(hits)/float64(nk))
	acc.ece = append(acc.ece, ECE(probs, correct, 15))
	acc.ecePlain = append(acc.ecePlain, ECE(plain, correct, 15))
	acc.t = append(acc.t, rej.Temperature)
	acc.tPlain = append(acc.tPlain, tPlain)
	acc.conf = append(acc.conf, float64(conf)/float64(nk))
	acc.confPlain = append(acc.confPlain, float64(confPlain)/float64(nk))
	acc.allP, acc.allPlain, acc.allRight = append(acc.allP, probs...), append(acc.allPlain, plain...), append(acc.allRight, correct...)
	acc.meanP = append(acc.meanP, mean(probs))
	acc.meanPPlain = append(acc.meanPPlain, mean(plain))
	return nil
}

// fewShotDraw is one split's photos: the rows of the photos learned, in
// the order of the learn, with their group indices; the rows of the
// groups' other photos (the known test photos) with theirs; and, per group,
// the rows learned in the order they were drawn (the first shots of the
// group's shuffled photos).
type fewShotDraw struct {
	learnRows, learnCls []int
	testRows, testCls   []int
	byGroup             [][]int
}

// drawFewShot draws split split of the photos byGroup of the sorted
// groups at shots photos per group, from the seed: in each group a random
// shots of its photos are learned and the others are test photos, and the
// learned photos come in one random order, as from a user's folder. flycl
// bench fewshot and the recipe benchmark draw the same splits from one
// seed.
func drawFewShot(seed uint64, groups []string, byGroup map[string][]int, shots, split int) fewShotDraw {
	rng := rand.New(rand.NewPCG(seed, uint64(1000*shots+split)))
	var dr fewShotDraw
	var rowsL, clsL []int
	for gi, g := range groups {
		rows := slices.Clone(byGroup[g])
		rng.Shuffle(len(rows), func(i, j int) { rows[i], rows[j] = rows[j], rows[i] })
		dr.byGroup = append(dr.byGroup, slices.Clone(rows[:shots]))
		for _, r := range rows[:shots] {
			rowsL, clsL = append(rowsL, r), append(clsL, gi)
		}
		for _, r := range rows[shots:] {
			dr.testRows, dr.testCls = append(dr.testRows, r), append(dr.testCls, gi)
		}
	}
	// one learn of the photos in a random order, as a user's folder
	for _, p := range rng.Perm(len(clsL)) {
		dr.learnRows, dr.learnCls = append(dr.learnRows, rowsL[p]), append(dr.learnCls, clsL[p])
	}
	return dr
}

// fewShotCompare learns the split again with a model that takes its
// threshold from the jackknife extrapolation of its leave-one-out values,
// and records its top+cosine rows (the class scores and cosines sc, cos
// are the same: only the calibration differs); and the probabilities of
// the temperature fitted on the exact leave-one-out rows loo.
func fewShotCompare(ctx context.Context, mc flycl.Config, d int, px []float32, py []int, sc []float32, cos []float64, loo []float32, looCls []int,
	nk int, correct []bool, c FewShotConfig, acc *fewShotAcc, score func(cal, val []float64, keyOf func(keep float64) string)) error {
	model, err := flycl.New(mc, d)
	if err != nil {
		return err
	}
	if err := model.SetCalibration(&reject.Calibration{ExtrapolateThreshold: true}); err != nil {
		return err
	}
	if _, err := model.Learn(ctx, px, py, nil); err != nil {
		return err
	}
	nc := model.Classes().Len()
	rej, pool := model.Rejection(), codec.CalibrationPool(model)
	if rej.Score != reject.ScoreTopCosine {
		return fmt.Errorf("openset: extrapolated rejection %v", rej)
	}
	var cal []float64
	for i := 0; i < len(pool); i += 2 {
		cal = append(cal, (float64(pool[i])-rej.TopMean)/rej.TopStd+(float64(pool[i+1])-rej.CosMean)/rej.CosStd)
	}
	val := make([]float64, len(cos))
	for i := range val {
		val[i] = rej.Value(sc[i*nc:(i+1)*nc], cos[i])
	}
	score(cal, val, func(keep float64) string { return extKey(reject.ScoreTopCosine, keep) })
	if acc.ext == nil {
		acc.ext = newFewShotAcc(c)
	}
	e := acc.ext
	t := reject.FitTemperature(loo, nc, looCls)
	r := reject.Rule{Temperature: t}
	probs := make([]float64, nk)
	conf := 0
	for i := range probs {
		probs[i], _ = r.Probability(sc[i*nc : (i+1)*nc])
		if probs[i] >= 0.99 {
			conf++
		}
	}
	e.ece = append(e.ece, ECE(probs, correct, 15))
	e.t = append(e.t, t)
	e.conf = append(e.conf, float64(conf)/float64(nk))
	e.allP, e.allRight = append(e.allP, probs...), append(e.allRight, correct...)
	e.meanP = append(e.meanP, mean(probs))
	return nil
}

func mean(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// quantile returns the q-quantile of v (the value at rank ⌈q·n⌉, 1-based,
// of the sorted values; the smallest for q = 0).
func quantile(v []float64, q float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := slices.Clone(v)
	slices.Sort(s)
	i := int(math.Ceil(q*float64(len(s)))) - 1
	return s[min(max(i, 0), len(s)-1)]
}

func (a *fewShotAcc) rows(set string, shots int) []FewShotRow {
	var out []FewShotRow
	for _, keep := range a.c.Keeps {
		for _, k := range a.c.Scores {
			key := rowKey(k, keep)
			n := int(math.Round(mean(a.pool[key])))
			out = append(out, FewShotRow{Set: set, Shots: shots, Score: k, Keep: keep, Pool: n, Guaranteed: reject.GuaranteedKeep(n, keep),
				Kept: mean(a.kept[key]), Kept10: quantile(a.kept[key], 0.1),
				RejectedImageNet: mean(a.rejIN[key]), RejectedOther: mean(a.rejOther[key]),
				AccKept: mean(a.accKept[key]), AUROC: mean(a.auc[key])})
		}
		if a.c.Compare {
			key := extKey(reject.ScoreTopCosine, keep)
			n := int(math.Round(mean(a.pool[key])))
			out = append(out, FewShotRow{Set: set, Shots: shots, Score: reject.ScoreTopCosine, Extrapolated: true, Keep: keep, Pool: n, Guaranteed: reject.GuaranteedKeep(n, keep),
				Kept: mean(a.kept[key]), Kept10: quantile(a.kept[key], 0.1),
				RejectedImageNet: mean(a.rejIN[key]), RejectedOther: mean(a.rejOther[key]),
				AccKept: mean(a.accKept[key]), AUROC: mean(a.auc[key])})
		}
	}
	return out
}

func (a *fewShotAcc) calib(set string, shots int) FewShotCalib {
	out := FewShotCalib{Set: set, Shots: shots, Accuracy: mean(a.acc), ECE: mean(a.ece), ECE10: quantile(a.ece, 0.9),
		ECEPlain: mean(a.ecePlain), T: quantile(a.t, 0.5), TPlain: quantile(a.tPlain, 0.5),
		Confident: mean(a.conf), ConfidentP: mean(a.confPlain), MeanP: mean(a.meanP), MeanPPlain: mean(a.meanPPlain),
		ECEAll: ECE(a.allP, a.allRight, 15), ECEAllPlain: ECE(a.allPlain, a.allRight, 15)}
	if a.ext != nil {
		e := a.ext
		out.LeaveOneOut = &FewShotCalib{Set: set, Shots: shots, Accuracy: mean(a.acc), ECE: mean(e.ece), ECE10: quantile(e.ece, 0.9),
			T: quantile(e.t, 0.5), Confident: mean(e.conf), MeanP: mean(e.meanP), ECEAll: ECE(e.allP, e.allRight, 15)}
	}
	return out
}

// Markdown writes the result as two Markdown tables: the rejection per
// set, shot count, keep share and score; the probability calibration per
// set and shot count.
func (res *FewShotResult) Markdown(w io.Writer) {
	pct := func(v float64) string {
		if math.IsNaN(v) {
			return "–"
		}
		return fmt.Sprintf("%.1f", 100*v)
	}
	fmt.Fprintln(w, "| features | shots | asked % | score | pool n | guaranteed % | kept % mean | kept % 10th pct | ImageNet unknown rejected % | CIFAR-10 rejected % | acc. of kept % | AUROC % |")
	fmt.Fprintln(w, "|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range res.Rows {
		name := string(r.Score)
		if r.Extrapolated {
			name += ", extrapolated threshold"
		}
		fmt.Fprintf(w, "| %s | %d | %s | %s | %d | %s | %s | %s | %s | %s | %s | %s |\n", r.Set, r.Shots, pct(r.Keep), name, r.Pool,
			pct(r.Guaranteed), pct(r.Kept), pct(r.Kept10), pct(r.RejectedImageNet), pct(r.RejectedOther), pct(r.AccKept), pct(r.AUROC))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| features | shots | closed-set acc. % | mean p % | ECE % all splits | ECE % per split (mean, 90th pct) | answers p ≥ 0.99 % | T (median) | plain fit: mean p % | ECE % all splits | ECE % per split | answers p ≥ 0.99 % | T (median) |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, c := range res.Calib {
		fmt.Fprintf(w, "| %s | %d | %s | %s | %s | %s, %s | %s | %.3g | %s | %s | %s | %s | %.3g |\n", c.Set, c.Shots, pct(c.Accuracy), pct(c.MeanP), pct(c.ECEAll), pct(c.ECE), pct(c.ECE10),
			pct(c.Confident), c.T, pct(c.MeanPPlain), pct(c.ECEAllPlain), pct(c.ECEPlain), pct(c.ConfidentP), c.TPlain)
	}
	if res.Config.Compare {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "| features | shots | temperature fitted on | closed-set acc. % | mean p % | ECE % all splits | ECE % per split (mean, 90th pct) | answers p ≥ 0.99 % | T (median) |")
		fmt.Fprintln(w, "|---|---:|---|---:|---:|---:|---:|---:|---:|")
		for _, c := range res.Calib {
			if v := c.LeaveOneOut; v != nil {
				fmt.Fprintf(w, "| %s | %d | exact leave-one-out | %s | %s | %s | %s, %s | %s | %.3g |\n", c.Set, c.Shots, pct(v.Accuracy), pct(v.MeanP), pct(v.ECEAll), pct(v.ECE), pct(v.ECE10), pct(v.Confident), v.T)
			}
			fmt.Fprintf(w, "| %s | %d | extrapolated (the model's) | %s | %s | %s | %s, %s | %s | %.3g |\n", c.Set, c.Shots, pct(c.Accuracy), pct(c.MeanP), pct(c.ECEAll), pct(c.ECE), pct(c.ECE10), pct(c.Confident), c.T)
		}
	}
	c := res.Config
	grid := c.Model.WithDefaults().Lambdas // flycl's default for the scale when none
	fmt.Fprintf(w, "\n%d broad classes; m=%d, p=%d, k=%d, λ grid %v (%s); %d splits per shot count, seed %d.\n",
		res.Groups, c.Model.M, c.Model.P, c.Model.K, grid, lambdaScaleName(c.Model.LambdaScale), c.Splits, c.Seed)
}

func lambdaScaleName(s flycl.LambdaScale) string {
	if s == flycl.LambdaRelative {
		return "relative to the mean diagonal of G"
	}
	return "absolute"
}
