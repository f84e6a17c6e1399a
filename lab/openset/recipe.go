package openset

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/deploy"
	"github.com/flycl/flycl/format/modelfile"
	"github.com/flycl/flycl/internal/procmem"
)

// RecipeEpochs is the epochs of Frigate's training (EPOCHS in
// frigate/util/classification.py; python/bench/frigate_head.py trains
// with it): the backbone runs on every training photo in every one of them.
const RecipeEpochs = 50

// RecipeValidationSplit is Frigate's validation_split: Keras trains on all
// but the first ⌊0.2 n⌋ photos of each class (the head script applies it).
const RecipeValidationSplit = 0.2

// RecipeConfig is the protocol of the side-by-side benchmark of flycl and
// Frigate's custom-classification recipe (Recipe).
type RecipeConfig struct {
	// Model is flycl's configuration of a new model (W's seed is Seed +
	// the split): the caller passes the one flycl learn gives a new photo
	// model (deploy.DefaultImageConfig).
	Model flycl.Config
	// Shots, Splits and Seed are the few-shot benchmark's
	// (FewShotConfig): the same seed draws the same photos.
	Shots  []int
	Splits int
	Seed   uint64
	// None is the number of photos in the recipe's "none" class, drawn
	// from the unknown ImageNet photos (0: as many as a learned class); the
	// unknown photos scored are the others.
	None int
	// Threshold is the recipe's softmax threshold (0: Frigate's 0.8).
	Threshold float64
	// BackboneSeconds is the time of the backbone per photo (decoding,
	// resizing and the forward pass), for the estimate of the recipe as
	// Frigate runs it: the backbone in every epoch (0: no estimate).
	BackboneSeconds float64
	// Initial and Added are the class-incremental sequence: a first learn
	// of Initial classes, then Added classes one at a time (default 3 and 2).
	Initial, Added int
}

func (c RecipeConfig) withDefaults() RecipeConfig {
	f := FewShotConfig{Shots: c.Shots, Splits: c.Splits, Seed: c.Seed}.withDefaults()
	c.Shots, c.Splits, c.Seed = f.Shots, f.Splits, f.Seed
	if c.Threshold == 0 {
		c.Threshold = 0.8
	}
	if c.Initial == 0 {
		c.Initial = 3
	}
	if c.Added == 0 {
		c.Added = 2
	}
	return c
}

// HeadJob is one training of the recipe's head: the rows Train of the
// features (Photos' rows, then Other's, as HeadRunner.Features gives them)
// with classes Y in 0..Classes-1, each class's rows in its folder order;
// after training, the head's logits on the rows Test.
type HeadJob struct {
	Train, Y []int
	Classes  int
	Seed     uint64
	Test     []int
}

// HeadResult is what a HeadJob gives back: len(Test)×Classes logits, the
// seconds of the training (initialisation and epochs) and the peak
// resident memory of the process that trained it, in bytes.
type HeadResult struct {
	Logits  []float32
	Seconds float64
	PeakRSS int64
}

// HeadRunner trains the recipe's head for each job on the n×d features x.
type HeadRunner interface {
	Run(ctx context.Context, x []float32, n, d int, jobs []HeadJob) ([]HeadResult, error)
}

// RecipeSide is one recipe's figures at one shot count, over the splits
// (mean, standard deviation).
type RecipeSide struct {
	// AccAnswered is the accuracy of the known test photos the recipe
	// answered; Kept the share of known test photos answered.
	AccAnswered, AccAnsweredSD, Kept, KeptSD float64
	// RejectedImageNet and RejectedOther are the shares of unknown photos
	// rejected (ImageNet photos of no group not in the none class; the
	// other data set).
	RejectedImageNet, RejectedImageNetSD, RejectedOther, RejectedOtherSD float64
	// Accuracy is the closed-set accuracy (the top class, answered or
	// not; the recipe's "none" counts as wrong); AUROC of known against
	// unknown photos on the recipe's score.
	Accuracy, AccuracySD, AUROC float64
	// ECE (15 bins) of the top-class probability of the known test
	// photos of all splits together.
	ECE float64
	// AtOtherKept is the share of all unknown photos rejected at a
	// threshold that keeps as many known test photos as the other recipe
	// keeps with its own rejection (per split).
	AtOtherKept float64
	// AccAtOtherKept is the accuracy of the known test photos answered at
	// that threshold.
	AccAtOtherKept float64
	// OwnRejected is the share of all unknown photos rejected by the
	// recipe's own rule.
	OwnRejected float64
	// Learn is the median seconds of one learn of the split's photos
	// (flycl: one learn; the recipe: training the head on cached
	// features); LearnBackbone the estimate of the recipe with the
	// backbone in every epoch (0 for flycl).
	Learn, LearnBackbone float64
	// AddClass is the median seconds to add one class in the
	// class-incremental sequence (flycl: a learn of its photos; the
	// recipe: training again on all classes), AddClassBackbone with the
	// backbone in every epoch. AccAfter is the closed-set accuracy on the
	// test photos of all the sequence's classes after the last.
	AddClass, AddClassBackbone, AccAfter float64
	// ModelBytes is the model's size: flycl's model file; the recipe's
	// head parameters in float32 (the frozen backbone not counted on
	// either side). PeakRSS is the peak resident memory of the process
	// that learned (flycl: the benchmark's; the recipe: its head's).
	ModelBytes, PeakRSS int64
}

// RecipeRow is the side-by-side result at one shot count.
type RecipeRow struct {
	Shots       int
	TrainPhotos int // photos the recipe's head trains on (after its 80/20 split, none included)
	Flycl       RecipeSide
	Frigate     RecipeSide
}

// RecipeResult is Recipe's output.
type RecipeResult struct {
	Config RecipeConfig
	Set    string
	Groups int
	None   int // photos in the none class at each shot count (the first's)
	Rows   []RecipeRow
}

// recipeSplit is one split's measurements of both recipes, kept until the
// head's results come back.
type recipeSplit struct {
	shots                  int
	knownCls               []int // group of each known test photo
	nUnknownIN, nOther     int
	flValues               []float64 // flycl's open-set value of every photo scored (known first)
	flThreshold            float64   // flycl's calibrated threshold on them
	flAnswered, flCorrect  []bool    // known test photos
	flProb                 []float64
	flLearn                float64
	flAdd                  []float64
	flAccAfter             float64
	seqTestCls             []int // class (index in the sequence's order) of each test photo of the sequence's classes
	main                   int   // index of the main head job
	seq                    []int // indices of the sequence's head jobs
	trainPhotos, seqPhotos []int // photos each head job trains on after the split
}

// Recipe runs flycl and Frigate's recipe side by side on the few-shot
// benchmark's splits of set s: in each split flycl learns the drawn photos
// in one learn and answers with its calibrated rejection, and the recipe's
// head (run by head) trains on the same photos plus a "none" class of
// unknown ImageNet photos and answers with its softmax threshold; both
// score the same known and unknown photos. Then a class-incremental
// sequence of the split's photos: Initial classes, then Added classes one
// at a time (flycl learns each; the recipe trains again).
func Recipe(ctx context.Context, s FewShotSet, cfg RecipeConfig, head HeadRunner, progress func(string)) (*RecipeResult, error) {
	c := cfg.withDefaults()
	if progress == nil {
		progress = func(string) {}
	}
	if s.Photos == nil || s.Other == nil || s.Photos.D != s.Other.D {
		return nil, fmt.Errorf("openset: recipe set %q needs photos and other photos of one dimension", s.Name)
	}
	if !(c.Threshold > 0 && c.Threshold <= 1) {
		return nil, fmt.Errorf("openset: recipe threshold %g: want a probability in (0, 1]", c.Threshold)
	}
	groups, byGroup, unknownIN, err := fewShotGroups(s, c.Shots)
	if err != nil {
		return nil, err
	}
	if c.Initial < 2 || c.Initial+c.Added > len(groups) {
		return nil, fmt.Errorf("openset: recipe sequence of %d+%d classes: want at least 2 first and at most %d in all", c.Initial, c.Added, len(groups))
	}
	d := s.Photos.D
	nP := s.Photos.N
	res := &RecipeResult{Config: c, Set: s.Name, Groups: len(groups)}
	var jobs []HeadJob
	var splits []*recipeSplit
	modelBytes := map[int]int64{}
	otherRows := make([]int, s.Other.N)
	for i := range otherRows {
		otherRows[i] = nP + i
	}
	for _, shots := range c.Shots {
		nNone := c.None
		if nNone == 0 {
			nNone = shots
		}
		if nNone >= len(unknownIN) {
			return nil, fmt.Errorf("openset: %d photos for the none class leave no unknown ImageNet photo of %d", nNone, len(unknownIN))
		}
		if res.None == 0 {
			res.None = nNone
		}
		for split := 0; split < c.Splits; split++ {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			dr := drawFewShot(c.Seed, groups, byGroup, shots, split)
			// the none class: photos of other things, drawn apart so that
			// the known photos are the few-shot benchmark's
			nrng := rand.New(rand.NewPCG(c.Seed^0x6e6f6e65, uint64(1000*shots+split)))
			uperm := slices.Clone(unknownIN)
			nrng.Shuffle(len(uperm), func(i, j int) { uperm[i], uperm[j] = uperm[j], uperm[i] })
			noneRows, unkRows := uperm[:nNone], uperm[nNone:]
			sp := &recipeSplit{shots: shots, knownCls: dr.testCls, nUnknownIN: len(unkRows), nOther: s.Other.N}
			scored := append(append(slices.Clone(dr.testRows), unkRows...), otherRows...)

			// flycl: one learn of the photos, as flycl learn does
			mc := c.Model
			mc.Seed = c.Seed + uint64(split)
			names := make([]string, len(dr.learnCls))
			for i, g := range dr.learnCls {
				names[i] = groups[g]
			}
			m, secs, err := recipeLearn(ctx, nil, mc, d, rowsOf(s, dr.learnRows), names)
			if err != nil {
				return nil, fmt.Errorf("openset: flycl, %d shots, split %d: %w", shots, split, err)
			}
			sp.flLearn = secs
			if err := flyclAnswers(ctx, m, rowsOf(s, scored), groups, sp); err != nil {
				return nil, err
			}
			if _, ok := modelBytes[shots]; !ok {
				if modelBytes[shots], err = fileSize(m); err != nil {
					return nil, err
				}
			}

			// the recipe: the same photos in each class's folder order, and none
			var tr, ty []int
			for gi := range groups {
				for _, r := range dr.byGroup[gi] {
					tr, ty = append(tr, r), append(ty, gi)
				}
			}
			for _, r := range noneRows {
				tr, ty = append(tr, r), append(ty, len(groups))
			}
			sp.main = len(jobs)
			sp.trainPhotos = append(sp.trainPhotos, recipeTrainPhotos(ty))
			jobs = append(jobs, HeadJob{Train: tr, Y: ty, Classes: len(groups) + 1, Seed: c.Seed*1_000_003 + uint64(1000*shots+split), Test: scored})

			// the class-incremental sequence: the split's photos of a
			// random order of the groups
			order := rand.New(rand.NewPCG(c.Seed^0x696e6372, uint64(1000*shots+split))).Perm(len(groups))[:c.Initial+c.Added]
			var seqTest []int
			for i, r := range dr.testRows {
				if at := slices.Index(order, dr.testCls[i]); at >= 0 {
					seqTest = append(seqTest, r)
					sp.seqTestCls = append(sp.seqTestCls, at)
				}
			}
			var mseq *deploy.Model
			for step := 0; step <= c.Added; step++ {
				have := order[:c.Initial+step]
				newCls := have
				if step > 0 {
					newCls = have[len(have)-1:]
				}
				var lx []float32
				var ln []string
				for i, g := range dr.learnCls {
					if slices.Contains(newCls, g) {
						lx = append(lx, s.Photos.Row(dr.learnRows[i])...)
						ln = append(ln, groups[g])
					}
				}
				var secs float64
				if mseq, secs, err = recipeLearn(ctx, mseq, mc, d, lx, ln); err != nil {
					return nil, fmt.Errorf("openset: flycl sequence, %d shots, split %d: %w", shots, split, err)
				}
				if step > 0 {
					sp.flAdd = append(sp.flAdd, secs)
				}
				var str, sty []int
				for at, g := range have { // class at: the sequence's index
					for _, r := range dr.byGroup[g] {
						str, sty = append(str, r), append(sty, at)
					}
				}
				for _, r := range noneRows {
					str, sty = append(str, r), append(sty, len(have))
				}
				sp.seq = append(sp.seq, len(jobs))
				sp.seqPhotos = append(sp.seqPhotos, recipeTrainPhotos(sty))
				var test []int
				if step == c.Added {
					test = seqTest
				}
				jobs = append(jobs, HeadJob{Train: str, Y: sty, Classes: len(have) + 1, Seed: c.Seed*1_000_003 + uint64(100_000*(step+1)+1000*shots+split), Test: test})
			}
			sc, err := mseq.Model.Predictor().Scores(ctx, rowsOf(s, seqTest))
			if err != nil {
				return nil, err
			}
			nc := mseq.Model.Classes().Len()
			names = mseq.Model.Classes().Names()
			right := 0
			for i := range seqTest {
				row := sc[i*nc : (i+1)*nc]
				if names[slices.Index(row, slices.Max(row))] == groups[order[sp.seqTestCls[i]]] {
					right++
				}
			}
			sp.flAccAfter = float64(right) / float64(len(seqTest))
			splits = append(splits, sp)
		}
		progress(fmt.Sprintf("%s: flycl, %d shots, %d splits", s.Name, shots, c.Splits))
	}
	flPeak := procmem.Peak()

	progress(fmt.Sprintf("%s: the recipe's head: %d trainings", s.Name, len(jobs)))
	x := make([]float32, 0, (nP+s.Other.N)*d)
	x = append(append(x, s.Photos.X...), s.Other.X...)
	out, err := head.Run(ctx, x, nP+s.Other.N, d, jobs)
	if err != nil {
		return nil, err
	}
	if len(out) != len(jobs) {
		return nil, fmt.Errorf("openset: the head gave %d results for %d jobs", len(out), len(jobs))
	}
	for i, o := range out {
		if len(o.Logits) != len(jobs[i].Test)*jobs[i].Classes {
			return nil, fmt.Errorf("openset: head job %d: %d logits for %d photos × %d classes", i, len(o.Logits), len(jobs[i].Test), jobs[i].Classes)
		}
	}
	var headPeak int64
	for _, o := range out {
		headPeak = max(headPeak, o.PeakRSS)
	}
	for _, shots := range c.Shots {
		var ss []*recipeSplit
		for _, sp := range splits {
			if sp.shots == shots {
				ss = append(ss, sp)
			}
		}
		row := recipeRow(ss, jobs, out, c, len(groups), d)
		row.Flycl.ModelBytes, row.Flycl.PeakRSS = modelBytes[shots], flPeak
		row.Frigate.PeakRSS = headPeak
		res.Rows = append(res.Rows, row)
	}
	return res, nil
}

// recipeTrainPhotos is the number of photos of classes y the recipe's
// head trains on: all but the first ⌊0.2 n⌋ of each class.
func recipeTrainPhotos(y []int) int {
	count := map[int]int{}
	for _, c := range y {
		count[c]++
	}
	n := 0
	for _, k := range count {
		n += k - int(RecipeValidationSplit*float64(k))
	}
	return n
}

// rowsOf returns the features of rows of s's photos (rows ≥ Photos.N are
// Other's).
func rowsOf(s FewShotSet, rows []int) []float32 {
	out := make([]float32, 0, len(rows)*s.Photos.D)
	for _, r := range rows {
		if r < s.Photos.N {
			out = append(out, s.Photos.Row(r)...)
		} else {
			out = append(out, s.Other.Row(r-s.Photos.N)...)
		}
	}
	return out
}

// recipeLearn learns the features x of classes names into m (a new model
// of configuration mc for d-dimensional features when nil), as flycl learn
// does, and returns the model and the learn's seconds.
func recipeLearn(ctx context.Context, m *deploy.Model, mc flycl.Config, d int, x []float32, names []string) (*deploy.Model, float64, error) {
	var err error
	if m == nil {
		if m, err = deploy.New(mc, d, nil, nil); err != nil {
			return nil, 0, err
		}
	}
	t0 := time.Now()
	if _, err := m.Learn(ctx, x, names, nil, deploy.LearnOptions{}); err != nil {
		return nil, 0, err
	}
	return m, time.Since(t0).Seconds(), nil
}

// flyclAnswers scores the photos x (the split's known test photos first)
// with m and records flycl's answers in sp.
func flyclAnswers(ctx context.Context, m *deploy.Model, x []float32, groups []string, sp *recipeSplit) error {
	rej := m.Model.Rejection()
	if !rej.Enabled() {
		return fmt.Errorf("openset: flycl's model has no rejection after its learn")
	}
	sc, cos, err := m.Model.Predictor().ScoresCosines(ctx, x)
	if err != nil {
		return err
	}
	nc := m.Model.Classes().Len()
	names := m.Model.Classes().Names()
	n := len(cos)
	sp.flValues, sp.flThreshold = make([]float64, n), rej.Threshold
	for i := range n {
		row := sc[i*nc : (i+1)*nc]
		sp.flValues[i] = rej.Value(row, cos[i])
		if i < len(sp.knownCls) {
			sp.flAnswered = append(sp.flAnswered, !rej.Reject(row, cos[i]))
			sp.flCorrect = append(sp.flCorrect, names[slices.Index(row, slices.Max(row))] == groups[sp.knownCls[i]])
			p, ok := rej.Probability(row)
			if !ok {
				return fmt.Errorf("openset: flycl's model has no calibrated probability")
			}
			sp.flProb = append(sp.flProb, p)
		}
	}
	return nil
}

// fileSize returns the size of m's model file: its encoding, counted as it
// is written, so that the benchmark writes no model file (the store is
// the one writer of model files).
func fileSize(m *deploy.Model) (int64, error) {
	var c countingWriter
	if err := modelfile.Encode(&c, m.File()); err != nil {
		return 0, err
	}
	return int64(c), nil
}

// countingWriter counts the bytes written to it.
type countingWriter int64

func (c *countingWriter) Write(p []byte) (int, error) {
	*c += countingWriter(len(p))
	return len(p), nil
}

// frigateAnswer is the recipe's answer to one photo from its head's logits
// (the last class is "none"): the softmax (in float64) of the top class,
// whether it is answered (not none, and its probability, rounded to two
// decimals as Frigate's processor rounds it, at least the threshold), and
// its open-set score: the top probability, or minus none's when none is
// on top (so that a threshold on the score at the threshold is the rule).
func frigateAnswer(logits []float32, threshold float64) (top int, p float64, answered bool, score float64) {
	mx := float64(slices.Max(logits))
	top = slices.Index(logits, slices.Max(logits))
	sum := 0.0
	for _, v := range logits {
		sum += math.Exp(float64(v) - mx)
	}
	p = 1 / sum
	none := top == len(logits)-1
	answered = !none && math.Round(100*p)/100 >= threshold
	score = p
	if none {
		score = -p
	}
	return top, p, answered, score
}

// keptThreshold returns the threshold on values that keeps the share keep
// of them (the ⌈keep·n⌉-th largest; +Inf when that is none).
func keptThreshold(values []float64, keep float64) float64 {
	s := slices.Clone(values)
	slices.Sort(s)
	slices.Reverse(s)
	k := int(math.Round(keep * float64(len(s))))
	if k <= 0 {
		return math.Inf(1)
	}
	return s[min(k, len(s))-1]
}

// recipeRow computes the figures of both recipes over the splits ss.
func recipeRow(ss []*recipeSplit, jobs []HeadJob, out []HeadResult, c RecipeConfig, groups, d int) RecipeRow {
	row := RecipeRow{Shots: ss[0].shots, TrainPhotos: ss[0].trainPhotos[0]}
	type acc struct {
		accAns, kept, rejIN, rejOther, accAll, auc, atOther, accAtOther, own, learn, learnBB, add, addBB, after []float64
	}
	var fl, fr acc
	var flP, frP []float64
	var flOK, frOK []bool
	meanOf := func(v []bool) float64 {
		n := 0
		for _, b := range v {
			if b {
				n++
			}
		}
		return float64(n) / float64(len(v))
	}
	for _, sp := range ss {
		nk := len(sp.knownCls)
		o := out[sp.main]
		nc := jobs[sp.main].Classes
		frValues := make([]float64, len(jobs[sp.main].Test))
		var frAnswered, frCorrect []bool
		for i := range frValues {
			top, p, ans, score := frigateAnswer(o.Logits[i*nc:(i+1)*nc], c.Threshold)
			frValues[i] = score
			if i < nk {
				frAnswered, frCorrect = append(frAnswered, ans), append(frCorrect, top == sp.knownCls[i])
				frP = append(frP, p)
			}
		}
		flP, flOK = append(flP, sp.flProb...), append(flOK, sp.flCorrect...)
		frOK = append(frOK, frCorrect...)
		// each recipe with its own rule
		side := func(a *acc, values []float64, answered, correct []bool, own func(i int) bool) float64 {
			right, n := 0, 0
			for i, ok := range answered {
				if ok {
					n++
					if correct[i] {
						right++
					}
				}
			}
			if n > 0 {
				a.accAns = append(a.accAns, float64(right)/float64(n))
			}
			kept := float64(n) / float64(nk)
			a.kept = append(a.kept, kept)
			var rin, rot int
			for i := nk; i < len(values); i++ {
				if !own(i) {
					if i < nk+sp.nUnknownIN {
						rin++
					} else {
						rot++
					}
				}
			}
			a.rejIN = append(a.rejIN, float64(rin)/float64(sp.nUnknownIN))
			a.rejOther = append(a.rejOther, float64(rot)/float64(sp.nOther))
			a.own = append(a.own, float64(rin+rot)/float64(len(values)-nk))
			a.accAll = append(a.accAll, meanOf(correct))
			a.auc = append(a.auc, AUROC(values[:nk], values[nk:]))
			return kept
		}
		flKept := side(&fl, sp.flValues, sp.flAnswered, sp.flCorrect, func(i int) bool { return sp.flValues[i] >= sp.flThreshold })
		frKept := side(&fr, frValues, frAnswered, frCorrect, func(i int) bool {
			_, _, ans, _ := frigateAnswer(o.Logits[i*nc:(i+1)*nc], c.Threshold)
			return ans
		})
		// each at the share the other keeps
		atKept := func(a *acc, values []float64, correct []bool, keep float64) {
			th := keptThreshold(values[:nk], keep)
			a.atOther = append(a.atOther, share(values[nk:], func(v float64) bool { return v < th }))
			right, n := 0, 0
			for i, v := range values[:nk] {
				if v >= th {
					n++
					if correct[i] {
						right++
					}
				}
			}
			if n > 0 {
				a.accAtOther = append(a.accAtOther, float64(right)/float64(n))
			}
		}
		atKept(&fl, sp.flValues, sp.flCorrect, frKept)
		atKept(&fr, frValues, frCorrect, flKept)
		// times
		fl.learn = append(fl.learn, sp.flLearn)
		fr.learn = append(fr.learn, o.Seconds)
		fr.learnBB = append(fr.learnBB, o.Seconds+float64(RecipeEpochs*sp.trainPhotos[0])*c.BackboneSeconds)
		fl.add = append(fl.add, sp.flAdd...)
		for k, j := range sp.seq[1:] {
			fr.add = append(fr.add, out[j].Seconds)
			fr.addBB = append(fr.addBB, out[j].Seconds+float64(RecipeEpochs*sp.seqPhotos[k+1])*c.BackboneSeconds)
		}
		fl.after = append(fl.after, sp.flAccAfter)
		last := sp.seq[len(sp.seq)-1]
		lnc := jobs[last].Classes
		right := 0
		for i, at := range sp.seqTestCls {
			lg := out[last].Logits[i*lnc : (i+1)*lnc]
			if slices.Index(lg, slices.Max(lg)) == at {
				right++
			}
		}
		fr.after = append(fr.after, float64(right)/float64(len(sp.seqTestCls)))
	}
	fill := func(dst *RecipeSide, a acc, p []float64, ok []bool) {
		dst.AccAnswered, dst.AccAnsweredSD = meanSD(a.accAns)
		dst.Kept, dst.KeptSD = meanSD(a.kept)
		dst.RejectedImageNet, dst.RejectedImageNetSD = meanSD(a.rejIN)
		dst.RejectedOther, dst.RejectedOtherSD = meanSD(a.rejOther)
		dst.Accuracy, dst.AccuracySD = meanSD(a.accAll)
		dst.AUROC = mean(a.auc)
		dst.ECE = ECE(p, ok, 15)
		dst.AtOtherKept, dst.AccAtOtherKept = mean(a.atOther), mean(a.accAtOther)
		dst.OwnRejected = mean(a.own)
		dst.Learn, dst.AddClass, dst.AccAfter = quantile(a.learn, 0.5), quantile(a.add, 0.5), mean(a.after)
		if len(a.learnBB) > 0 && c.BackboneSeconds > 0 {
			dst.LearnBackbone, dst.AddClassBackbone = quantile(a.learnBB, 0.5), quantile(a.addBB, 0.5)
		}
	}
	fill(&row.Flycl, fl, flP, flOK)
	fill(&row.Frigate, fr, frP, frOK)
	row.Frigate.ModelBytes = int64(4 * (d*128 + 128 + 128*(groups+1) + groups + 1))
	return row
}

func meanSD(v []float64) (float64, float64) {
	m := mean(v)
	if len(v) < 2 {
		return m, 0
	}
	s := 0.0
	for _, x := range v {
		s += (x - m) * (x - m)
	}
	return m, math.Sqrt(s / float64(len(v)-1))
}

// Markdown writes the result as three Markdown tables: the answers of
// each recipe with its own rejection; the unknown photos rejected at the
// same kept share; times and memory.
func (res *RecipeResult) Markdown(w io.Writer) {
	pct := func(v float64) string {
		if math.IsNaN(v) {
			return "–"
		}
		return fmt.Sprintf("%.1f", 100*v)
	}
	pm := func(m, sd float64) string { return pct(m) + " ± " + pct(sd) }
	ms := func(s float64) string {
		switch {
		case s >= 10:
			return fmt.Sprintf("%.0f s", s)
		case s >= 1:
			return fmt.Sprintf("%.1f s", s)
		default:
			return fmt.Sprintf("%.3g ms", 1000*s)
		}
	}
	ratio := func(a, b float64) string {
		if b <= 0 || a <= 0 {
			return "–"
		}
		return fmt.Sprintf("%.3g×", a/b)
	}
	fmt.Fprintln(w, "| shots | recipe | acc. of answered % | known kept % | ImageNet unknown rejected % | CIFAR-10 rejected % | closed-set acc. % | ECE % | AUROC % |")
	fmt.Fprintln(w, "|---:|---|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range res.Rows {
		for _, s := range []struct {
			name string
			v    RecipeSide
		}{{"flycl", r.Flycl}, {"Frigate's", r.Frigate}} {
			v := s.v
			fmt.Fprintf(w, "| %d | %s | %s | %s | %s | %s | %s | %s | %s |\n", r.Shots, s.name, pm(v.AccAnswered, v.AccAnsweredSD), pm(v.Kept, v.KeptSD),
				pm(v.RejectedImageNet, v.RejectedImageNetSD), pm(v.RejectedOther, v.RejectedOtherSD), pm(v.Accuracy, v.AccuracySD), pct(v.ECE), pct(v.AUROC))
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| shots | flycl keeps % | unknown rejected: flycl % | Frigate's at that share % | acc. of answered: flycl % | Frigate's at that share % | Frigate's keeps % | unknown rejected: Frigate's % | flycl at that share % | acc. of answered: Frigate's % | flycl at that share % |")
	fmt.Fprintln(w, "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range res.Rows {
		f, g := r.Flycl, r.Frigate
		fmt.Fprintf(w, "| %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r.Shots, pct(f.Kept), pct(f.OwnRejected), pct(g.AtOtherKept),
			pct(f.AccAnswered), pct(g.AccAtOtherKept), pct(g.Kept), pct(g.OwnRejected), pct(f.AtOtherKept), pct(g.AccAnswered), pct(f.AccAtOtherKept))
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "| shots | head trains on | learn: flycl | head, cached features | ratio | recipe with backbone (est.) | ratio | add a class: flycl | head retrained | ratio | with backbone (est.) | ratio | acc. after %d classes %%: flycl, Frigate's | model: flycl file, head parameters |\n", res.Config.Initial+res.Config.Added)
	fmt.Fprintln(w, "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|")
	for _, r := range res.Rows {
		f, g := r.Flycl, r.Frigate
		bb, bbr, abb, abbr := "–", "–", "–", "–"
		if g.LearnBackbone > 0 {
			bb, bbr, abb, abbr = ms(g.LearnBackbone), ratio(g.LearnBackbone, f.Learn), ms(g.AddClassBackbone), ratio(g.AddClassBackbone, f.AddClass)
		}
		fmt.Fprintf(w, "| %d | %d photos | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s, %s | %.1f MiB, %.0f KiB |\n", r.Shots, r.TrainPhotos,
			ms(f.Learn), ms(g.Learn), ratio(g.Learn, f.Learn), bb, bbr, ms(f.AddClass), ms(g.AddClass), ratio(g.AddClass, f.AddClass), abb, abbr,
			pct(f.AccAfter), pct(g.AccAfter), float64(f.ModelBytes)/(1<<20), float64(g.ModelBytes)/1024)
	}
	c := res.Config
	fmt.Fprintf(w, "\n%s features, %d broad classes; %d splits per shot count, seed %d (flycl-lab bench fewshot's draws); flycl: m=%d, p=%d, k=%d, %s λ grid; "+
		"Frigate's recipe: none class of %d photos (at %d shots; as many as a class unless --none), threshold %.2g, %d epochs; backbone %.3g ms per photo; peak RSS: flycl's process %.0f MiB, the head's %.0f MiB.\n",
		res.Set, res.Groups, c.Splits, c.Seed, c.Model.M, c.Model.P, c.Model.K, lambdaScaleName(c.Model.LambdaScale),
		res.None, c.Shots[0], c.Threshold, RecipeEpochs, 1000*c.BackboneSeconds, float64(res.Rows[0].Flycl.PeakRSS)/(1<<20), float64(res.Rows[0].Frigate.PeakRSS)/(1<<20))
}
