package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"gonum.org/v1/gonum/stat"

	"github.com/flycl/flycl/format/features"
)

// Non-negative features that share a large offset have highly correlated
// class prototypes; centring removes exactly that offset. The feature-stage
// correlations written by "flycl-lab heatmap" are checked against prototypes
// computed here by hand (offset-free class means).
func TestHeatmapCenter(t *testing.T) {
	const d, classes, per = 8, 3, 40
	dir := t.TempDir()
	path := filepath.Join(dir, "tr.npz")
	r := rand.New(rand.NewPCG(7, 7))
	s := &features.Set{D: d}
	signal := [classes][d]float64{}
	for c := range signal {
		for j := range signal[c] {
			signal[c][j] = 2 * r.NormFloat64()
		}
	}
	for i := 0; i < per; i++ { // interleaved classes, 4 of them (the 4th is not used)
		for c := 0; c < classes+1; c++ {
			for j := 0; j < d; j++ {
				v := 50 + 5*float64(j) + r.NormFloat64()*0.1 // shared profile
				if c < classes {
					v += signal[c][j]
				}
				s.X = append(s.X, float32(v))
			}
			s.Labels = append(s.Labels, c)
			s.N++
		}
	}
	if err := features.Save(path, s); err != nil {
		t.Fatal(err)
	}
	run := func(center bool) [3]float64 {
		out := filepath.Join(dir, "out")
		args := []string{"--train", path, "--classes", "3", "--train-per-class", "0", "--m", "200", "--p", "4", "--k", "60",
			"--lambdas", "0.1,1,10", "--out", out}
		if center {
			args = append(args, "--center")
		}
		c := heatmapCmd()
		var buf bytes.Buffer
		c.SetOut(&buf)
		c.SetArgs(args)
		if err := c.ExecuteContext(context.Background()); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(out, "heatmap.png")); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(out, "heatmap.json"))
		if err != nil {
			t.Fatal(err)
		}
		var st struct {
			Features  [][]float64
			MeanAbsOD [3]float64
		}
		if err := json.Unmarshal(b, &st); err != nil {
			t.Fatal(err)
		}
		if len(st.Features) != classes {
			t.Fatalf("heatmap.json: %d feature rows, want %d", len(st.Features), classes)
		}
		if center {
			// The class means minus the grand mean of the 3 classes.
			var proto [classes][]float64
			for c := range proto {
				proto[c] = make([]float64, d)
				for j := range proto[c] {
					var grand float64
					for k := 0; k < classes; k++ {
						grand += signal[k][j]
					}
					proto[c][j] = signal[c][j] - grand/classes
				}
			}
			for a := 0; a < classes; a++ {
				for b := 0; b < classes; b++ {
					want := stat.Correlation(proto[a], proto[b], nil)
					// 0.1 noise over 40 samples moves a mean by ~0.016 against
					// signals of size ~2: correlations agree to ~0.02.
					if math.Abs(st.Features[a][b]-want) > 0.03 {
						t.Errorf("centred r[%d][%d] = %.3f, want %.3f", a, b, st.Features[a][b], want)
					}
				}
			}
		}
		return st.MeanAbsOD
	}
	raw, cen := run(false), run(true)
	if raw[0] < 0.9 {
		t.Errorf("offset features: mean |r| %.3f, want > 0.9", raw[0])
	}
	if cen[0] > raw[0]-0.3 {
		t.Errorf("centring: mean |r| %.3f (raw %.3f), want much lower", cen[0], raw[0])
	}
	c := heatmapCmd()
	c.SilenceUsage, c.SilenceErrors = true, true
	c.SetArgs([]string{"--train", path, "--classes", "9"})
	if err := c.ExecuteContext(context.Background()); err == nil {
		t.Error("more classes than the data has: no error")
	}
}
