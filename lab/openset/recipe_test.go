package openset

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/flycl/flycl/app/deploy"
	"github.com/flycl/flycl/format/features"
)

// TestFrigateAnswer: the recipe's answer against a float64 softmax
// written out, at and around Frigate's rounded 0.8 threshold and with
// "none" (the last class) on top.
func TestFrigateAnswer(t *testing.T) {
	// logits (a, 0, 0) with two other classes: p = e^a / (e^a + 2), so
	// a = ln(2p / (1 − p)) gives the top probability p
	logitFor := func(p float64) float32 { return float32(math.Log(2 * p / (1 - p))) }
	for _, tc := range []struct {
		name     string
		logits   []float32
		top      int
		answered bool
		negative bool // the score is minus none's probability
	}{
		{"sure", []float32{logitFor(0.95), 0, 0}, 0, true, false},
		{"rounds up to the threshold", []float32{0, logitFor(0.7960), 0}, 1, true, false},
		{"rounds below it", []float32{0, logitFor(0.7940), 0}, 1, false, false},
		{"none on top", []float32{0, 0, logitFor(0.99)}, 2, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			top, p, answered, score := frigateAnswer(tc.logits, 0.8)
			sum := 0.0
			for _, v := range tc.logits {
				sum += math.Exp(float64(v))
			}
			want := math.Exp(float64(tc.logits[tc.top])) / sum
			// float32 logits: p is the softmax of the rounded logits,
			// computed in float64 (a few ulp of float64 apart)
			if top != tc.top || math.Abs(p-want) > 1e-12 || answered != tc.answered {
				t.Fatalf("top %d p %.6f answered %v, want %d %.6f %v", top, p, answered, tc.top, want, tc.answered)
			}
			if wantScore := map[bool]float64{false: want, true: -want}[tc.negative]; math.Abs(score-wantScore) > 1e-12 {
				t.Fatalf("score %g, want %g", score, wantScore)
			}
		})
	}
}

// TestKeptThreshold: the threshold keeps the share asked of distinct
// values, counted by brute force.
func TestKeptThreshold(t *testing.T) {
	vals := []float64{0.3, 0.9, 0.1, 0.7, 0.5, 0.2, 0.8, 0.4, 0.6, 1.0}
	for _, keep := range []float64{0, 0.1, 0.25, 0.3, 0.5, 0.94, 1} {
		th := keptThreshold(vals, keep)
		n := 0
		for _, v := range vals {
			if v >= th {
				n++
			}
		}
		if want := int(math.Round(keep * 10)); n != want {
			t.Errorf("keep %g: threshold %g keeps %d, want %d", keep, th, n, want)
		}
	}
}

// recipeSet is a synthetic few-shot set: groups of per photos around
// distinct centres (one "wnid" per photo), 30 unknown photos around other
// centres, 30 other-data-set photos around others again; and the group
// of each row (rows ≥ photos.N: Other's; "" for unknown).
func recipeSet(groups, per int) (FewShotSet, []string) {
	const d = 16
	r := rand.New(rand.NewPCG(5, 6))
	s := FewShotSet{Name: "syn", Photos: &features.Set{D: d}, Other: &features.Set{D: d}, Groups: map[string]string{}}
	var groupOfRow []string
	add := func(set *features.Set, c, n int, group string) {
		cr := rand.New(rand.NewPCG(uint64(c), 99))
		cv := make([]float64, d)
		for j := range cv {
			cv[j] = 3 * cr.NormFloat64()
		}
		for range n {
			for j := range d {
				set.X = append(set.X, float32(cv[j]+r.NormFloat64()))
			}
			name := fmt.Sprintf("w%d", set.N)
			set.Labels, set.ClassNames = append(set.Labels, len(set.ClassNames)), append(set.ClassNames, name)
			set.N++
			if group != "" && set == s.Photos {
				s.Groups[name] = group
			}
			groupOfRow = append(groupOfRow, group)
		}
	}
	for g := range groups {
		add(s.Photos, g, per, fmt.Sprintf("g%d", g))
	}
	for c := range 30 { // unknown photos: a centre each
		add(s.Photos, 100+c, 1, "")
	}
	for c := range 30 {
		add(s.Other, 200+c, 1, "")
	}
	return s, groupOfRow
}

// oracleHead answers every job as a perfect classifier would: the class
// whose training photos share the test photo's group, else the job's last
// class (none). It checks that no photo it is asked about was trained on.
type oracleHead struct {
	t          *testing.T
	groupOfRow []string
	jobs       []HeadJob
}

func (h *oracleHead) Run(_ context.Context, x []float32, n, d int, jobs []HeadJob) ([]HeadResult, error) {
	if len(x) != n*d || n != len(h.groupOfRow) {
		h.t.Fatalf("features %d for %d×%d, %d rows known", len(x), n, d, len(h.groupOfRow))
	}
	h.jobs = jobs
	out := make([]HeadResult, len(jobs))
	for i, j := range jobs {
		classOf := map[string]int{}
		for k, r := range j.Train {
			if g := h.groupOfRow[r]; g != "" {
				classOf[g] = j.Y[k]
			} else if j.Y[k] != j.Classes-1 {
				h.t.Fatalf("job %d: unknown photo %d in class %d, want none (%d)", i, r, j.Y[k], j.Classes-1)
			}
		}
		for _, r := range j.Test {
			if slices.Contains(j.Train, r) {
				h.t.Fatalf("job %d: photo %d trained on and tested", i, r)
			}
			row := make([]float32, j.Classes)
			c, ok := classOf[h.groupOfRow[r]]
			if !ok {
				c = j.Classes - 1
			}
			row[c] = 10
			out[i].Logits = append(out[i].Logits, row...)
		}
		out[i].Seconds, out[i].PeakRSS = 0.5, 1<<20
	}
	return out, nil
}

// TestRecipeOracle: with a head that answers perfectly, the recipe's
// side of the table is perfect (every known photo answered and right,
// every unknown one rejected, AUROC 1); the jobs are the few-shot
// benchmark's draws plus a none class of unknown photos that are not
// scored; the sequence trains on 3+1, 4+1, 5+1 classes; flycl, on well
// separated classes, is right on every photo after the sequence.
func TestRecipeOracle(t *testing.T) {
	const groups, per, shots, splits = 6, 10, 3, 2
	s, groupOfRow := recipeSet(groups, per)
	cfg := deploy.DefaultImageConfig(16)
	cfg.M, cfg.K = 200, 60 // small and quick; the rest as flycl learn's
	head := &oracleHead{t: t, groupOfRow: groupOfRow}
	res, err := Recipe(context.Background(), s, RecipeConfig{Model: cfg, Shots: []int{shots}, Splits: splits, BackboneSeconds: 0.01}, head, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(head.jobs) != splits*(1+3) || len(res.Rows) != 1 {
		t.Fatalf("%d jobs, %d rows", len(head.jobs), len(res.Rows))
	}
	f := res.Rows[0].Frigate
	for name, v := range map[string]float64{"acc. of answered": f.AccAnswered, "kept": f.Kept, "ImageNet unknown rejected": f.RejectedImageNet,
		"other rejected": f.RejectedOther, "closed-set acc.": f.Accuracy, "AUROC": f.AUROC, "own rejected": f.OwnRejected, "acc. after": f.AccAfter,
		"acc. at flycl's kept share": f.AccAtOtherKept} {
		if v != 1 {
			t.Errorf("oracle head: %s %g, want 1", name, v)
		}
	}
	// the learn time with the backbone: the head's 0.5 s + 50 epochs of
	// the photos left by the 80/20 split (3 per class: none dropped) at 10 ms
	if want := 0.5 + 50*float64((groups+1)*shots)*0.01; math.Abs(f.LearnBackbone-want) > 1e-9 || f.Learn != 0.5 {
		t.Errorf("recipe learn %g s, with the backbone %g s, want 0.5 and %g", f.Learn, f.LearnBackbone, want)
	}
	if res.Rows[0].Flycl.AccAfter != 1 || res.Rows[0].Flycl.Accuracy < 0.95 {
		t.Errorf("flycl on separated classes: %+v", res.Rows[0].Flycl)
	}
	groupsSorted, byGroup, unknownIN, err := fewShotGroups(s, []int{shots})
	if err != nil {
		t.Fatal(err)
	}
	for split := range splits {
		main := head.jobs[4*split]
		dr := drawFewShot(1, groupsSorted, byGroup, shots, split)
		var known []int
		for _, r := range main.Train {
			if groupOfRow[r] != "" {
				known = append(known, r)
			}
		}
		if !sameSet(known, dr.learnRows) || main.Classes != groups+1 || len(main.Train) != (groups+1)*shots {
			t.Errorf("split %d: the head trains on %v (%d classes), flycl-lab bench fewshot draws %v", split, main.Train, main.Classes, dr.learnRows)
		}
		if len(main.Test) != len(dr.testRows)+len(unknownIN)-shots+s.Other.N {
			t.Errorf("split %d: %d photos scored", split, len(main.Test))
		}
		for k, j := range head.jobs[4*split+1 : 4*split+4] {
			if j.Classes != 3+k+1 {
				t.Errorf("split %d: sequence job %d has %d classes, want %d", split, k, j.Classes, 3+k+1)
			}
		}
	}
}

func sameSet(a, b []int) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// TestPythonHead: the PyTorch head (python/bench/frigate_head.py) through
// its file protocol, when a python3 with numpy and torch is there: on
// three well-separated clusters it answers every test photo with its
// cluster, and reports a training time and a memory peak.
func TestPythonHead(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts python and torch")
	}
	py := ""
	for _, p := range []string{os.Getenv("FLYCL_PYTHON"), "python3", "/usr/bin/python3"} {
		if p != "" && exec.Command(p, "-c", "import numpy, torch").Run() == nil {
			py = p
			break
		}
	}
	if py == "" {
		t.Skip("no python3 with numpy and torch (Debian: apt-get install python3-torch)")
	}
	s, groupOfRow := recipeSet(3, 12)
	x := append(slices.Clone(s.Photos.X), s.Other.X...)
	n := s.Photos.N + s.Other.N
	var train, y, test, want []int
	for r, g := range groupOfRow[:3*12] {
		c := int(g[1] - '0')
		if r%12 < 8 {
			train, y = append(train, r), append(y, c)
		} else {
			test, want = append(test, r), append(want, c)
		}
	}
	head := PythonHead{Python: py, Script: filepath.Join("..", "..", "python", "bench", "frigate_head.py")}
	out, err := head.Run(context.Background(), x, n, 16, []HeadJob{{Train: train, Y: y, Classes: 3, Seed: 1, Test: test}, {Train: train, Y: y, Classes: 3, Seed: 2}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 2 || len(out[1].Logits) != 0 {
		t.Fatalf("%d results, %d logits for no test photo", len(out), len(out[1].Logits))
	}
	for i, c := range want {
		row := out[0].Logits[3*i : 3*i+3]
		if got := slices.Index(row, slices.Max(row)); got != c {
			t.Errorf("test photo %d: class %d, want %d (logits %v)", i, got, c, row)
		}
	}
	if !(out[0].Seconds > 0) || out[0].PeakRSS <= 0 {
		t.Errorf("seconds %g, peak RSS %d", out[0].Seconds, out[0].PeakRSS)
	}
}
