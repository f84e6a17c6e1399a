package openset

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/watch"
	"github.com/flycl/flycl/format/features"
	"github.com/flycl/flycl/internal/codec"
	"github.com/flycl/flycl/reject"
)

// VideoConfig is the video benchmark's protocol (Video).
type VideoConfig struct {
	// Model is the model's configuration (W's seed is Seed + the split).
	Model flycl.Config
	// Shots is the number of photos per broad class learned, each from
	// the first frame of its track in the view (default 5).
	Shots int
	// Splits is the number of random draws (default 10).
	Splits int
	// Keep is the share of known objects asked to be kept (default
	// reject.DefaultKeep).
	Keep float64
	// Tries and Quorum are the track rule's (reject.Track; defaults 5
	// and 3). Tries is at most the frames of the set's tracks.
	Tries, Quorum int
	// Background is the number of a scene's empty frames learned as the
	// reserved background class in the rows "background" (default 20);
	// the scene's other empty frames are scored.
	Background int
	// None is the number of photos of untaught classes a user gives as
	// "none of these" in the rows "none" (default 10); they are no
	// stranger of that split.
	None int
	// Seed seeds the draws (default 1).
	Seed uint64
	// SubtractScene subtracts, in a scene view, the mean of the scene's
	// empty frames a camera collects (the first Background of them) from
	// every frame, learned and scored: the scene's share of a frame's
	// features, which its object's frames and a stranger's have alike.
	SubtractScene bool
	// ExcludeReserved takes the thresholds from the learned classes'
	// leave-one-out values alone; by default they are taken from the
	// model's own pool, the reserved classes' samples included, as a
	// deployed model's are (the rows "margin" always exclude them).
	ExcludeReserved bool
}

func (c VideoConfig) withDefaults() VideoConfig {
	if c.Shots == 0 {
		c.Shots = 5
	}
	if c.Splits == 0 {
		c.Splits = 10
	}
	if c.Keep == 0 {
		c.Keep = reject.DefaultKeep
	}
	if c.Tries == 0 {
		c.Tries = 5
	}
	if c.Quorum == 0 {
		c.Quorum = 3
	}
	if c.Background == 0 {
		c.Background = 20
	}
	if c.None == 0 {
		c.None = 10
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
	return c
}

// VideoSet is one backbone's features of the frames WriteVideoFrames
// writes (Frames: one set, its paths named as VideoFrameName reads them)
// and the grouping of their photos into broad classes (a photo of no
// group is a stranger).
type VideoSet struct {
	Name   string
	Frames *features.Set
	Groups map[string]string
}

// The learns compared by Video: the broad classes alone, and with the
// reserved classes that are never an answer.
const (
	VideoPlain      = "classes only"
	VideoNone       = "+ none photos"
	VideoBackground = "+ background"
	VideoBoth       = "+ background + none"
	// the same learns, the reserved classes read as a margin (the best
	// learned class's score less the best reserved class's) fused with
	// the open-set value and calibrated on the learned samples'
	// leave-one-out rows
	VideoNoneMargin = "+ none photos, margin"
	VideoBothMargin = "+ background + none, margin"
)

// The rules compared by Video, per object: the first frame decides (one
// try, the single-frame rule); Frigate's vote as flycl runs it (at least
// 3 tries, 60% of them name the class, a rejected try votes for none); a
// zone's debounce as flycl watch runs it (watch.Debouncer: 3 frames in a
// row with one answer confirm it); the track rule (reject.Track: Quorum of Tries frames kept and naming the
// class, the per-frame threshold calibrated for the object's keep).
const (
	RuleFirst    = "first frame"
	RuleVote     = "vote 3 tries, 60%"
	RuleTrack    = "track rule"
	RuleDebounce = "debounce 3"
)

// videoRules are the rules in the order of the table.
var videoRules = []string{RuleFirst, RuleVote, RuleDebounce, RuleTrack}

// VideoRow is one line of Video's result, over all splits.
type VideoRow struct {
	Set, View, Learn, Rule string
	// FrameKeep is the per-frame keep share the threshold was taken at.
	FrameKeep float64
	// StrangerFrame and StrangerObject are the shares of the strangers'
	// frames and objects labelled as a known class; KeptFrame and
	// KeptObject the shares of the known objects' frames and objects
	// labelled as a known class (not rejected), RightObject those
	// labelled as their own class; EmptyFrame and EmptyWindow the shares
	// of a scene's empty frames, and of its runs of Tries empty frames,
	// labelled as a known class (NaN for the crop view).
	StrangerFrame, StrangerObject      float64
	KeptFrame, KeptObject, RightObject float64
	EmptyFrame, EmptyWindow            float64
	// Objects and Strangers are the numbers of known and stranger
	// objects scored, over the splits.
	Objects, Strangers int
	// AUROCFrame and AUROCObject are the AUROC of the known objects'
	// against the strangers' open-set values, per frame and per object
	// (the mean of its frames' values), mean over the splits: how much
	// the frames of one object add, whatever the threshold.
	AUROCFrame, AUROCObject float64
	// The ROC points of the open-set values, mean over the splits, each
	// at the threshold chosen on the scored objects themselves (the
	// best any threshold on that value can do, not a rule a model can
	// calibrate): FrameROC95 and FrameROC90 are the shares of the
	// strangers' frames at least as high as the threshold that keeps 95%
	// and 90% of the known objects' frames; ObjectROC90Mean and
	// ObjectROC90Min the shares of the strangers' objects kept at the
	// threshold that keeps 90% of the known objects, on the mean of an
	// object's frames' values and on their least (all its frames must
	// pass).
	FrameROC95, FrameROC90, ObjectROC90Mean, ObjectROC90Min float64
	// FrameROC90Reserved is, for a learn with reserved classes, the
	// least share of the strangers' frames labelled as a known class at
	// 90% of the known objects' frames labelled, over every bias b on
	// the reserved classes and threshold t on the open-set value, both
	// chosen on the scored objects: a frame is labelled when the best
	// learned class's score less the best reserved class's is at least b
	// (b = 0 is the reserved class as an answer, b = −∞ ignores it) and
	// its value at least t. It is the best the reserved classes can do
	// whatever the rule that weighs them (NaN without reserved classes).
	FrameROC90Reserved float64
	// BetweenKnown and BetweenStranger are the shares of the variance of
	// the known objects' (the strangers') frames' open-set values that
	// lies between objects rather than among one object's frames (the
	// intraclass correlation; mean over the splits): near 1, an object's
	// frames say what one of them says.
	BetweenKnown, BetweenStranger float64
}

// VideoResult is Video's output.
type VideoResult struct {
	Config VideoConfig
	Groups []string
	Rows   []VideoRow
	// Sweep is every rule at every per-frame keep of VideoSweepKeeps
	// (FrameKeep; the threshold the model's pool gives for it, the track
	// rule's too): only StrangerObject, KeptObject and their counts are
	// set. A user sets the per-frame keep (keep:SHARE), so each point is a
	// deployable rule.
	Sweep []VideoRow
}

// VideoSweepKeeps returns the per-frame keeps of the sweep: 0.99 down to
// 0.80 by 0.01, then 0.75, 0.70, 0.60, 0.50, with keep added when it is
// not among them.
func VideoSweepKeeps(keep float64) []float64 {
	var out []float64
	for i := 99; i >= 80; i-- {
		out = append(out, float64(i)/100)
	}
	out = append(out, 0.75, 0.70, 0.60, 0.50)
	if !slices.Contains(out, keep) {
		out = append(out, keep)
	}
	return out
}

// videoTracks indexes a VideoSet: per view, per photo, the rows of its
// frames in track order.
type videoTracks struct {
	views   []string                    // object views, sorted (crop first)
	tracks  map[string]map[string][]int // view → photo → rows
	empty   map[string][]int            // scene view → rows of its empty frames
	known   map[string][]string         // group → photos
	strange []string                    // photos of no group
	frames  int                         // the shortest track
}

func indexVideo(s VideoSet) (*videoTracks, error) {
	f := s.Frames
	if f == nil || len(f.Paths) != f.N {
		return nil, fmt.Errorf("openset: video set %q: want frames with their paths", s.Name)
	}
	t := &videoTracks{tracks: map[string]map[string][]int{}, empty: map[string][]int{}, known: map[string][]string{}}
	type fr struct{ row, k int }
	byTrack := map[[2]string][]fr{}
	for i, p := range f.Paths {
		view, photo, k, err := VideoFrameName(p)
		if err != nil {
			return nil, fmt.Errorf("openset: video set %q: %w", s.Name, err)
		}
		byTrack[[2]string{view, photo}] = append(byTrack[[2]string{view, photo}], fr{i, k})
	}
	photos := map[string]bool{}
	t.frames = -1
	for key, frs := range byTrack {
		sort.Slice(frs, func(a, b int) bool { return frs[a].k < frs[b].k })
		rows := make([]int, len(frs))
		for i, x := range frs {
			rows[i] = x.row
		}
		view, photo := key[0], key[1]
		if scene, ok := strings.CutPrefix(view, emptyClassPrefix); ok {
			t.empty[scene] = rows
			continue
		}
		if t.tracks[view] == nil {
			t.tracks[view] = map[string][]int{}
			t.views = append(t.views, view)
		}
		t.tracks[view][photo] = rows
		photos[photo] = true
		if t.frames < 0 || len(rows) < t.frames {
			t.frames = len(rows)
		}
	}
	slices.SortFunc(t.views, func(a, b string) int {
		if (a == ViewCrop) != (b == ViewCrop) {
			if a == ViewCrop {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	for p := range photos {
		for _, v := range t.views {
			if _, ok := t.tracks[v][p]; !ok {
				return nil, fmt.Errorf("openset: video set %q: photo %s has no track in view %s", s.Name, p, v)
			}
		}
		wnid, _, _ := strings.Cut(p, "_")
		if g, ok := s.Groups[wnid]; ok {
			t.known[g] = append(t.known[g], p)
		} else {
			t.strange = append(t.strange, p)
		}
	}
	for g := range t.known {
		slices.Sort(t.known[g])
	}
	slices.Sort(t.strange)
	return t, nil
}

// Video runs the video benchmark: in each split, for each view, a new
// model learns Shots photos of each broad class (the first frame of each
// one's track), alone and with the reserved classes (the scene's empty
// frames as "background", None photos of untaught classes as "none"),
// and every other photo's track is decided frame by frame and per object
// by each rule. A frame is labelled as a known class when its open-set
// value passes the threshold and its top class is not reserved.
func Video(ctx context.Context, sets []VideoSet, cfg VideoConfig, progress func(string)) (*VideoResult, error) {
	c := cfg.withDefaults()
	if progress == nil {
		progress = func(string) {}
	}
	if c.Quorum < 1 || c.Quorum > c.Tries {
		return nil, fmt.Errorf("openset: video: quorum %d of %d tries", c.Quorum, c.Tries)
	}
	res := &VideoResult{Config: c}
	for _, s := range sets {
		t, err := indexVideo(s)
		if err != nil {
			return nil, err
		}
		if t.frames < c.Tries {
			return nil, fmt.Errorf("openset: video set %q: tracks of %d frames, want %d tries", s.Name, t.frames, c.Tries)
		}
		groups := make([]string, 0, len(t.known))
		for g, ps := range t.known {
			if len(ps) <= c.Shots {
				return nil, fmt.Errorf("openset: video set %q: group %s has %d photos, want more than %d", s.Name, g, len(ps), c.Shots)
			}
			groups = append(groups, g)
		}
		sort.Strings(groups)
		res.Groups = groups
		if len(t.strange) <= c.None {
			return nil, fmt.Errorf("openset: video set %q: %d strangers, want more than %d", s.Name, len(t.strange), c.None)
		}
		acc, sweep := map[string]*videoAcc{}, map[string]*videoAcc{}
		var order, sweepOrder []string
		for split := 0; split < c.Splits; split++ {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			r := rand.New(rand.NewPCG(c.Seed, uint64(split)))
			learned := map[string][]string{}
			var test []string
			var testG []int
			for gi, g := range groups {
				ps := slices.Clone(t.known[g])
				r.Shuffle(len(ps), func(i, j int) { ps[i], ps[j] = ps[j], ps[i] })
				learned[g] = ps[:c.Shots]
				for _, p := range ps[c.Shots:] {
					test, testG = append(test, p), append(testG, gi)
				}
			}
			st := slices.Clone(t.strange)
			r.Shuffle(len(st), func(i, j int) { st[i], st[j] = st[j], st[i] })
			none, strangers := st[:c.None], st[c.None:]
			for _, view := range t.views {
				learns := []string{VideoPlain, VideoNone}
				if _, ok := t.empty[view]; ok {
					learns = append(learns, VideoBackground, VideoBoth)
				}
				learns = append(learns, VideoNoneMargin)
				if _, ok := t.empty[view]; ok {
					learns = append(learns, VideoBothMargin)
				}
				for _, learn := range learns {
					sp := videoSplit{s: s, t: t, c: c, view: view, groups: groups, learned: learned, test: test, testG: testG,
						none: none, strangers: strangers, withNone: learn != VideoPlain && learn != VideoBackground,
						withBackground: learn == VideoBackground || learn == VideoBoth || learn == VideoBothMargin,
						margin:         learn == VideoNoneMargin || learn == VideoBothMargin, seed: c.Seed + uint64(split)}
					viewKind := view
					if view != ViewCrop {
						viewKind = "scene"
					}
					for _, rule := range videoRules {
						key := viewKind + "|" + learn + "|" + rule
						if acc[key] == nil {
							acc[key] = &videoAcc{row: VideoRow{Set: s.Name, View: viewKind, Learn: learn, Rule: rule}}
							order = append(order, key)
						}
					}
					sweepOf := func(rule string, keep float64) *videoAcc {
						key := viewKind + "|" + learn + "|" + rule + "|" + strconv.FormatFloat(keep, 'g', -1, 64)
						if sweep[key] == nil {
							sweep[key] = &videoAcc{row: VideoRow{Set: s.Name, View: viewKind, Learn: learn, Rule: rule, FrameKeep: keep}}
							sweepOrder = append(sweepOrder, key)
						}
						return sweep[key]
					}
					if err := sp.run(ctx, func(rule string) *videoAcc { return acc[viewKind+"|"+learn+"|"+rule] }, sweepOf); err != nil {
						return nil, err
					}
				}
			}
			progress(fmt.Sprintf("%s: split %d of %d", s.Name, split+1, c.Splits))
		}
		for _, k := range order {
			res.Rows = append(res.Rows, acc[k].result())
		}
		for _, k := range sweepOrder {
			res.Sweep = append(res.Sweep, sweep[k].result())
		}
	}
	return res, nil
}

// videoAcc counts one row's decisions over the splits.
type videoAcc struct {
	row                                  VideoRow
	strF, strFN, strO, strON             int
	keptF, keptFN, keptO, rightO, keptON int
	emptyF, emptyFN, emptyW, emptyWN     int
	aucF, aucO                           []float64
	rocF95, rocF90, rocOMean, rocOMin    []float64
	rocF90R                              []float64
	betweenK, betweenS                   []float64
}

func (a *videoAcc) result() VideoRow {
	r := a.row
	div := func(a, b int) float64 {
		if b == 0 {
			return math.NaN()
		}
		return float64(a) / float64(b)
	}
	r.StrangerFrame, r.StrangerObject = div(a.strF, a.strFN), div(a.strO, a.strON)
	r.KeptFrame, r.KeptObject, r.RightObject = div(a.keptF, a.keptFN), div(a.keptO, a.keptON), div(a.rightO, a.keptON)
	r.EmptyFrame, r.EmptyWindow = div(a.emptyF, a.emptyFN), div(a.emptyW, a.emptyWN)
	r.Objects, r.Strangers = a.keptON, a.strON
	r.AUROCFrame, r.AUROCObject = mean(a.aucF), mean(a.aucO)
	r.FrameROC95, r.FrameROC90 = mean(a.rocF95), mean(a.rocF90)
	r.ObjectROC90Mean, r.ObjectROC90Min = mean(a.rocOMean), mean(a.rocOMin)
	r.FrameROC90Reserved = mean(a.rocF90R)
	r.BetweenKnown, r.BetweenStranger = mean(a.betweenK), mean(a.betweenS)
	return r
}

// videoSplit is one learn of one split in one view.
type videoSplit struct {
	s                        VideoSet
	t                        *videoTracks
	c                        VideoConfig
	view                     string
	groups                   []string
	learned                  map[string][]string
	test                     []string
	testG                    []int
	none, strangers          []string
	withNone, withBackground bool
	margin                   bool
	seed                     uint64
}

// frame is one frame's answer: its top class (-1: a reserved class), its
// open-set value and its reserved margin (reservedMargin: 0 without
// reserved classes).
type frame struct {
	class  int
	value  float64
	margin float64
}

func (sp *videoSplit) run(ctx context.Context, accOf func(rule string) *videoAcc, sweepOf func(rule string, keep float64) *videoAcc) error {
	f, c := sp.s.Frames, sp.c
	d := f.D
	tracks := sp.t.tracks[sp.view]
	var x []float32
	var y []int
	// sceneMean is the mean of the scene's empty frames a camera collects
	// (the first Background), subtracted from every frame of the view
	// with SubtractScene; nil otherwise
	var sceneMean []float64
	if e := sp.t.empty[sp.view]; e != nil && c.SubtractScene {
		sceneMean = make([]float64, d)
		nb := min(c.Background, len(e)-c.Tries)
		for _, row := range e[:nb] {
			for j, v := range f.Row(row) {
				sceneMean[j] += float64(v) / float64(nb)
			}
		}
	}
	frameRow := func(row int) []float32 {
		r := f.Row(row)
		if sceneMean == nil {
			return r
		}
		out := make([]float32, d)
		for j, v := range r {
			out[j] = float32(float64(v) - sceneMean[j])
		}
		return out
	}
	add := func(row, label int) {
		x, y = append(x, frameRow(row)...), append(y, label)
	}
	ng := len(sp.groups)
	for gi, g := range sp.groups {
		for _, p := range sp.learned[g] {
			add(tracks[p][0], gi)
		}
	}
	reserved := map[int]bool{}
	if sp.withNone {
		reserved[ng] = true
		for _, p := range sp.none {
			add(tracks[p][0], ng)
		}
	}
	var emptyTest []int
	if e := sp.t.empty[sp.view]; e != nil {
		nb := min(c.Background, len(e)-c.Tries)
		if sp.withBackground {
			reserved[ng+1] = true
			for _, row := range e[:nb] {
				add(row, ng+1)
			}
		}
		emptyTest = e[nb:]
	}
	mc := c.Model
	mc.Seed = sp.seed
	model, err := flycl.New(mc, d)
	if err != nil {
		return err
	}
	if err := model.SetCalibration(&reject.Calibration{Keep: c.Keep}); err != nil {
		return err
	}
	if _, err := model.Learn(ctx, x, y, nil); err != nil {
		return err
	}
	labels := model.Classes().Labels() // class index → label
	nc := len(labels)
	rej := model.Rejection()
	loo, looCls := codec.LeaveOneOut(model)
	pool := codec.CalibrationPool(model)
	if rej.Score != reject.ScoreTopCosine || len(pool) != 2*len(looCls) {
		return fmt.Errorf("openset: video: rejection %v with a pool of %d values for %d samples", rej, len(pool), len(looCls))
	}
	// the threshold is taken from the learned objects' values alone: the
	// reserved classes' samples are no known object
	var cal, rm []float64
	for j, ci := range looCls {
		if reserved[labels[ci]] && (c.ExcludeReserved || sp.margin) {
			continue
		}
		cal = append(cal, (float64(pool[2*j])-rej.TopMean)/rej.TopStd+(float64(pool[2*j+1])-rej.CosMean)/rej.CosStd)
		rm = append(rm, reservedMargin(loo[j*nc:(j+1)*nc], labels, reserved))
	}
	// the margin to the reserved classes, standardized on the learned
	// samples' leave-one-out rows and added to the open-set value
	var rMean, rStd float64
	if sp.margin {
		rMean, rStd = meanStdOf(rm)
		for i := range cal {
			cal[i] += (rm[i] - rMean) / rStd
		}
	}
	track := reject.Track{Tries: c.Tries, Quorum: c.Quorum}
	thFrame := reject.KeepThreshold(cal, c.Keep)
	thTrack := reject.KeepThreshold(cal, track.FrameKeep(c.Keep))

	score := func(rows []int) ([]frame, error) {
		xs := make([]float32, 0, len(rows)*d)
		for _, r := range rows {
			xs = append(xs, frameRow(r)...)
		}
		sc, cos, err := model.Predictor().ScoresCosines(ctx, xs)
		if err != nil {
			return nil, err
		}
		out := make([]frame, len(rows))
		for i := range out {
			row := sc[i*nc : (i+1)*nc]
			l := labels[slices.Index(row, slices.Max(row))]
			v := rej.Value(row, cos[i])
			rmi := reservedMargin(row, labels, reserved)
			if sp.margin {
				// the best learned class answers; the margin to the
				// reserved ones lowers the value
				best := -1
				for j, lj := range labels {
					if !reserved[lj] && (best < 0 || row[j] > row[best]) {
						best = j
					}
				}
				l = labels[best]
				v += (rmi - rMean) / rStd
			}
			if reserved[l] {
				l = -1
			}
			out[i] = frame{class: l, value: v, margin: rmi}
		}
		return out, nil
	}
	var decideAt func(rule string, frs []frame, th float64) (int, int)
	// decide returns the class a rule labels the frames with (-1: none)
	// and, for the per-frame count, how many frames it labels known
	decide := func(rule string, frs []frame) (int, int) {
		th := thFrame
		if rule == RuleTrack {
			th = thTrack
		}
		return decideAt(rule, frs, th)
	}
	decideAt = func(rule string, frs []frame, th float64) (int, int) {
		answers := make([]int, len(frs))
		known := 0
		for i, fr := range frs {
			answers[i] = -1
			if fr.class >= 0 && fr.value >= th {
				answers[i] = fr.class
				known++
			}
		}
		switch rule {
		case RuleFirst:
			return answers[0], known
		case RuleVote:
			return frigateVote(answers, 3, 0.6), known
		case RuleDebounce:
			return debounced(answers, 3), known
		default:
			cl, _ := reject.DecideTrack(track, answers, -1)
			return cl, known
		}
	}
	// known objects, strangers, empty windows; the values of the first
	// two for the AUROC
	var frameVals, objVals, objMins [2][]float64
	var frames [2][]frame
	for _, kind := range []int{0, 1, 2} {
		var rows [][]int
		var truth []int
		switch kind {
		case 0:
			for i, p := range sp.test {
				rows, truth = append(rows, tracks[p][:c.Tries]), append(truth, sp.testG[i])
			}
		case 1:
			for _, p := range sp.strangers {
				rows, truth = append(rows, tracks[p][:c.Tries]), append(truth, -1)
			}
		case 2:
			for i := 0; i+c.Tries <= len(emptyTest); i += c.Tries {
				rows, truth = append(rows, emptyTest[i:i+c.Tries]), append(truth, -1)
			}
		}
		if len(rows) == 0 {
			continue
		}
		all := make([]int, 0, len(rows)*c.Tries)
		for _, r := range rows {
			all = append(all, r...)
		}
		frs, err := score(all)
		if err != nil {
			return err
		}
		if kind < 2 {
			frames[kind] = frs
			for i := range rows {
				m, lo := 0.0, math.Inf(1)
				for _, fr := range frs[i*c.Tries : (i+1)*c.Tries] {
					frameVals[kind] = append(frameVals[kind], fr.value)
					m += fr.value / float64(c.Tries)
					lo = min(lo, fr.value)
				}
				objVals[kind] = append(objVals[kind], m)
				objMins[kind] = append(objMins[kind], lo)
			}
		}
		if kind < 2 {
			// every rule at every per-frame keep of the sweep
			for _, keep := range VideoSweepKeeps(c.Keep) {
				th := reject.KeepThreshold(cal, keep)
				for _, rule := range videoRules {
					a := sweepOf(rule, keep)
					for i := range rows {
						cl, _ := decideAt(rule, frs[i*c.Tries:(i+1)*c.Tries], th)
						if kind == 0 {
							a.keptON++
							if cl >= 0 {
								a.keptO++
							}
						} else {
							a.strON++
							if cl >= 0 {
								a.strO++
							}
						}
					}
				}
			}
		}
		for _, rule := range videoRules {
			a := accOf(rule)
			a.row.FrameKeep = c.Keep
			if rule == RuleTrack {
				a.row.FrameKeep = track.FrameKeep(c.Keep)
			}
			for i := range rows {
				cl, known := decide(rule, frs[i*c.Tries:(i+1)*c.Tries])
				switch kind {
				case 0:
					a.keptF, a.keptFN, a.keptON = a.keptF+known, a.keptFN+c.Tries, a.keptON+1
					if cl >= 0 {
						a.keptO++
					}
					if cl == truth[i] {
						a.rightO++
					}
				case 1:
					a.strF, a.strFN, a.strON = a.strF+known, a.strFN+c.Tries, a.strON+1
					if cl >= 0 {
						a.strO++
					}
				case 2:
					a.emptyF, a.emptyFN, a.emptyWN = a.emptyF+known, a.emptyFN+c.Tries, a.emptyWN+1
					if cl >= 0 {
						a.emptyW++
					}
				}
			}
		}
	}
	aucF, aucO := AUROC(frameVals[0], frameVals[1]), AUROC(objVals[0], objVals[1])
	rocF95, rocF90 := rocPoint(frameVals[0], frameVals[1], 0.95), rocPoint(frameVals[0], frameVals[1], 0.90)
	rocOMean, rocOMin := rocPoint(objVals[0], objVals[1], 0.90), rocPoint(objMins[0], objMins[1], 0.90)
	betweenK, betweenS := betweenShare(frameVals[0], c.Tries), betweenShare(frameVals[1], c.Tries)
	rocF90R := math.NaN()
	if len(reserved) > 0 {
		rocF90R = reservedROCPoint(frames[0], frames[1], 0.90)
	}
	for _, rule := range videoRules {
		a := accOf(rule)
		a.aucF, a.aucO = append(a.aucF, aucF), append(a.aucO, aucO)
		a.rocF95, a.rocF90 = append(a.rocF95, rocF95), append(a.rocF90, rocF90)
		a.rocOMean, a.rocOMin = append(a.rocOMean, rocOMean), append(a.rocOMin, rocOMin)
		a.betweenK, a.betweenS = append(a.betweenK, betweenK), append(a.betweenS, betweenS)
		a.rocF90R = append(a.rocF90R, rocF90R)
	}
	return nil
}

// Markdown writes the result as a table.
func (r *VideoResult) Markdown(w io.Writer) {
	pct := func(v float64) string {
		if v != v {
			return "–"
		}
		return fmt.Sprintf("%.1f", 100*v)
	}
	fmt.Fprintf(w, "| features | view | learned | rule | frame keep %% | strangers labelled, per frame %% | per object %% | known kept, per frame %% | per object %% | known right, per object %% | empty scene labelled, per frame %% | per %d frames %% | AUROC %%, per frame | per object |\n", r.Config.Tries)
	fmt.Fprintln(w, "|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, x := range r.Rows {
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", x.Set, x.View, x.Learn, x.Rule, pct(x.FrameKeep),
			pct(x.StrangerFrame), pct(x.StrangerObject), pct(x.KeptFrame), pct(x.KeptObject), pct(x.RightObject), pct(x.EmptyFrame), pct(x.EmptyWindow), pct(x.AUROCFrame), pct(x.AUROCObject))
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "| features | view | learned | strangers labelled per frame %% (%s, keep %s%%) | target per object ≤ %% | best rule keeping ≥ %s%% of known objects | its frame keep %% | strangers per object %% | known kept per object %% | target met | AUROC %%, per frame | strangers' frames at 95%% of known frames kept %% | at 90%% | at 90%%, the reserved classes' bias chosen too | AUROC %%, per object | strangers' objects at 90%% of known objects kept %%, mean of %d values | least of %d | values' variance between objects %%, known | strangers |\n",
		RuleFirst, pct(r.Config.Keep), pct(VideoTargetKept), r.Config.Tries, r.Config.Tries)
	fmt.Fprintln(w, "|---|---|---|---:|---:|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, t := range r.Targets() {
		x, met := t.Frame, "no"
		if t.Met {
			met = "yes"
		}
		best, bestK, bestS, bestO := "none", "–", "–", "–"
		if t.Best != nil {
			best, bestK, bestS, bestO = t.Best.Rule, pct(t.Best.FrameKeep), pct(t.Best.StrangerObject), pct(t.Best.KeptObject)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", x.Set, x.View, x.Learn,
			pct(x.StrangerFrame), pct(x.StrangerFrame/2), best, bestK, bestS, bestO, met, pct(x.AUROCFrame), pct(x.FrameROC95), pct(x.FrameROC90), pct(x.FrameROC90Reserved), pct(x.AUROCObject), pct(x.ObjectROC90Mean), pct(x.ObjectROC90Min), pct(x.BetweenKnown), pct(x.BetweenStranger))
	}
}

// VideoTargetKept is the share of known objects a rule must keep to
// count toward VideoTarget.
const VideoTargetKept = 0.90

// VideoTarget checks, for one set, view and learn, whether some rule at some per-frame keep labels at most half
// as many of the strangers' objects as the single-frame rule at the
// configured keep labels of their frames, while keeping at least
// VideoTargetKept of the known objects. The rule and keep are chosen on
// the scored objects themselves: the best a user could set.
type VideoTarget struct {
	// Frame is the single-frame rule's row (RuleFirst): its
	// StrangerFrame is the per-frame rate, and its ROC points and AUROC
	// are the learn's.
	Frame VideoRow
	// Best is the rule and per-frame keep of the sweep (VideoResult.Sweep)
	// keeping at least VideoTargetKept of the known objects that labels
	// the fewest strangers' objects, the first in the sweep's order
	// (keeps from the highest, then rules as in the table) when two tie (nil:
	// none keeps that many).
	Best *VideoRow
	// Met: Best labels at most half of Frame.StrangerFrame.
	Met bool
}

// Targets returns VideoTarget for each set, view and learn, in the order
// of the rows. The sweep lowers only the threshold on the open-set value:
// a learn whose reserved classes answer keeps the known frames a reserved
// class wins rejected at every keep (VideoRow.FrameROC90Reserved lowers
// both).
func (r *VideoResult) Targets() []VideoTarget {
	var out []VideoTarget
	for _, x := range r.Rows {
		if x.Rule != RuleFirst {
			continue
		}
		t := VideoTarget{Frame: x}
		for j := range r.Sweep {
			y := &r.Sweep[j]
			if y.Set != x.Set || y.View != x.View || y.Learn != x.Learn || !(y.KeptObject >= VideoTargetKept) {
				continue
			}
			if t.Best == nil || y.StrangerObject < t.Best.StrangerObject {
				t.Best = y
			}
		}
		t.Met = t.Best != nil && t.Best.StrangerObject <= x.StrangerFrame/2
		out = append(out, t)
	}
	return out
}

// rocPoint is the share of unknown at least as high as the largest
// threshold that keeps the share keep of known: the false-positive rate
// of the ROC curve of known against unknown at the true-positive rate
// keep (at least keep when values tie), at keepThreshold's threshold.
func rocPoint(known, unknown []float64, keep float64) float64 {
	if len(known) == 0 {
		return math.NaN()
	}
	t := keepThreshold(known, keep)
	return share(unknown, func(v float64) bool { return v >= t })
}

// reservedROCPoint is the least share of unknown labelled at a rule that
// labels the share keep of known, over the rules "margin at least b and
// value at least t" (VideoRow.FrameROC90Reserved). For a given b, the
// known frames below it are lost; the threshold t leaves out the rest of
// the ⌊(1 − keep)·n⌋ frames rocPoint leaves out (mayDrop), from the lowest values
// up. Only b = −∞ and the known frames' margins need trying: between two
// of these the known frames labelled do not change, and a higher b only
// labels fewer unknown. NaN without known frames.
func reservedROCPoint(known, unknown []frame, keep float64) float64 {
	n := len(known)
	if n == 0 {
		return math.NaN()
	}
	drop := mayDrop(n, keep)
	bs := []float64{math.Inf(-1)}
	for _, f := range known {
		bs = append(bs, f.margin)
	}
	best := math.NaN()
	var vals []float64
	for _, b := range bs {
		vals = vals[:0]
		for _, f := range known {
			if f.margin >= b {
				vals = append(vals, f.value)
			}
		}
		left := drop - (n - len(vals))
		if left < 0 || len(vals) == 0 {
			continue
		}
		slices.Sort(vals)
		t := vals[min(left, len(vals)-1)]
		got := share(unknown, func(f frame) bool { return f.margin >= b && f.value >= t })
		if !(got >= best) {
			best = got
		}
	}
	return best
}

// betweenShare is the share of the variance of vals, consecutive groups
// of n values (an object's frames), that lies between the groups' means:
// 1 − Σ (v − its group's mean)² / Σ (v − the mean)²; NaN when the values
// do not vary.
func betweenShare(vals []float64, n int) float64 {
	if n < 1 || len(vals) == 0 || len(vals)%n != 0 {
		return math.NaN()
	}
	mu := mean(vals)
	var within, total float64
	for i := 0; i < len(vals); i += n {
		m := mean(vals[i : i+n])
		for _, v := range vals[i : i+n] {
			within += (v - m) * (v - m)
			total += (v - mu) * (v - mu)
		}
	}
	if !(total > 0) {
		return math.NaN()
	}
	return 1 - within/total
}

// frigateVote is flycl's Frigate vote (app/frigate's Rule) on class
// indices (-1: none): at least minTries answers, the most frequent class
// (ties to the smaller index) named by at least the share agreement of
// all of them, a none answer counted in the total.
func frigateVote(answers []int, minTries int, agreement float64) int {
	if len(answers) < minTries {
		return -1
	}
	count := map[int]int{}
	best := -1
	for _, a := range answers {
		if a < 0 {
			continue
		}
		count[a]++
		if c := count[a]; best < 0 || c > count[best] || (c == count[best] && a < best) {
			best = a
		}
	}
	if best < 0 || float64(count[best]) < agreement*float64(len(answers)) {
		return -1
	}
	return best
}

// reservedMargin is a row's best score of a learned class less its best
// score of a reserved one (0 without reserved classes).
func reservedMargin(row []float32, labels []int, reserved map[int]bool) float64 {
	bk, br := math.Inf(-1), math.Inf(-1)
	for j, l := range labels {
		if reserved[l] {
			br = max(br, float64(row[j]))
		} else {
			bk = max(bk, float64(row[j]))
		}
	}
	if math.IsInf(br, -1) {
		return 0
	}
	return bk - br
}

// meanStdOf is the mean and population standard deviation of v (the
// deviation 1 when it is 0).
func meanStdOf(v []float64) (mean, std float64) {
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	for _, x := range v {
		std += (x - mean) * (x - mean)
	}
	std = math.Sqrt(std / float64(len(v)))
	if !(std > 0) {
		std = 1
	}
	return mean, std
}

// debounced is the class a zone's watch.Debouncer confirms over the
// answers (-1: none, answered "unknown"), -1 when it confirms none.
func debounced(answers []int, n int) int {
	d := watch.NewDebouncer(n)
	for i, a := range answers {
		name := watch.UnknownAnswer
		if a >= 0 {
			name = strconv.Itoa(a)
		}
		if c, ok := d.Observe(i, name); ok && c.To != watch.UnknownAnswer {
			cl, _ := strconv.Atoi(c.To)
			return cl
		}
	}
	return -1
}
