package bench

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/deploy"
	"github.com/flycl/flycl/format/features"
	"github.com/flycl/flycl/format/modelfile"
	"github.com/flycl/flycl/internal/codec"
	"github.com/flycl/flycl/internal/procmem"
)

// CameraSet is one data set of the camera benchmark: features of labelled
// photos. With Test nil, each split learns Shots photos per class of Train
// and tests on the rest; with Test, it learns Shots per class of Train (0:
// all of Train) and tests on Test.
type CameraSet struct {
	Name        string
	Train, Test *features.Set
	Shots       int
}

// CameraGrids are the λ grids the camera benchmark compares: the paper's
// absolute grid, the relative grid, and the relative grid widened while
// GCV's optimum is at an edge (deploy.DefaultImageConfig's); "rel:X" also
// names a fixed λ of X times the mean diagonal of G.
var CameraGrids = []string{"paper", "relative", "widen"}

// CameraOptions are the inputs of Camera.
type CameraOptions struct {
	Sets   []CameraSet
	M      []int    // expansion dimensions; k = 0.3·m, p as deploy.DefaultImageConfig
	Grids  []string // of CameraGrids
	Splits int      // random splits (samples and seed of W) per set
	Seed   uint64
}

// CameraRow is one line of the camera benchmark.
type CameraRow struct {
	Set        string
	M, K, P    int
	Grid       string
	Learns     int
	Train      int     // samples per learn
	LearnP50   float64 // seconds, first learn of a new model after extraction (deploy.Model.Learn)
	LearnMax   float64
	FileBytes  int64   // model file size
	PeakRSS    int64   // process peak RSS during learn and save (the features included)
	Acc, AccSD float64 // test accuracy over the splits, mean and standard deviation
	Kept       float64 // share of the known test photos the "unknown" threshold keeps (mean)
	Edge       int     // learns whose GCV choice was at an edge of the grid scored
	EdgeLow    int     // of them, at the low edge
	Flat       int     // learns whose GCV curve was flat (flycl.LambdaFlat)
	// Accs are the accuracies of the splits; Delta and DeltaSE the mean
	// paired difference (same splits) from the row of the largest m of
	// the same set and grid, and its standard error (0 for that row).
	Accs           []float64
	Delta, DeltaSE float64
	// Lambda is the median λ chosen relative to the mean diagonal of the
	// learn's Gram matrix (HᵀH/m: the relative grid's unit).
	Lambda float64
}

// cameraConfig is deploy.DefaultImageConfig with m, k = 0.3·m (flycl.KForM) and the
// named grid.
func cameraConfig(m, d int, grid string, seed uint64) (flycl.Config, error) {
	c := deploy.DefaultImageConfig(d)
	c.M, c.K, c.Seed = m, flycl.KForM(m), seed
	switch grid {
	case "paper":
		c.LambdaScale, c.Lambdas, c.WidenGrid = flycl.LambdaAbsolute, slices.Clone(flycl.DefaultLambdas), false
	case "relative":
		c.WidenGrid = false
	case "widen":
	default:
		if v, ok := strings.CutPrefix(grid, "rel:"); ok {
			l, err := strconv.ParseFloat(v, 64)
			if err != nil || !(l > 0) {
				return c, fmt.Errorf("bench camera: grid %q: want rel:X, X > 0", grid)
			}
			c.Lambdas, c.WidenGrid = []float64{l}, false
			return c, nil
		}
		return c, fmt.Errorf("bench camera: unknown grid %q (want one of %v)", grid, CameraGrids)
	}
	return c, nil
}

// split draws the learn and test samples of split s.
func (set CameraSet) split(s int, seed uint64) (xtr []float32, ntr []string, xte []float32, nte []string, err error) {
	tr := set.Train
	name := func(fs *features.Set, i int) string {
		l := fs.Labels[i]
		if l >= 0 && l < len(fs.ClassNames) && fs.ClassNames[l] != "" {
			return fs.ClassNames[l]
		}
		return fmt.Sprint(l)
	}
	byClass := map[int][]int{}
	for i, l := range tr.Labels {
		byClass[l] = append(byClass[l], i)
	}
	classes := make([]int, 0, len(byClass))
	for l := range byClass {
		classes = append(classes, l)
	}
	sort.Ints(classes)
	r := rand.New(rand.NewPCG(seed, uint64(s)))
	add := func(fs *features.Set, i int, x *[]float32, n *[]string) {
		*x = append(*x, fs.X[i*fs.D:(i+1)*fs.D]...)
		*n = append(*n, name(fs, i))
	}
	for _, l := range classes {
		idx := slices.Clone(byClass[l])
		r.Shuffle(len(idx), func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })
		k := len(idx)
		if set.Shots > 0 {
			k = min(k, set.Shots)
		}
		if set.Test == nil && k >= len(idx) {
			return nil, nil, nil, nil, fmt.Errorf("bench camera: %s: class %s has %d samples, none left to test after %d shots", set.Name, name(tr, idx[0]), len(idx), set.Shots)
		}
		for _, i := range idx[:k] {
			add(tr, i, &xtr, &ntr)
		}
		if set.Test == nil {
			for _, i := range idx[k:] {
				add(tr, i, &xte, &nte)
			}
		}
	}
	if te := set.Test; te != nil {
		if te.D != tr.D {
			return nil, nil, nil, nil, fmt.Errorf("bench camera: %s: train has d=%d, test d=%d", set.Name, tr.D, te.D)
		}
		for i := 0; i < te.N; i++ {
			add(te, i, &xte, &nte)
		}
	}
	return xtr, ntr, xte, nte, nil
}

// Camera measures, for a new model learned from photos (deploy.New and
// deploy.Model.Learn, as flycl learn does), per set, m and λ grid: the
// first learn's time after extraction, the model file's size, the peak
// RSS, the test accuracy, the share of known test photos the "unknown"
// threshold keeps, and how many learns chose an edge of the grid scored.
// Every (m, grid) sees the same splits.
func Camera(ctx context.Context, out io.Writer, o CameraOptions) ([]CameraRow, error) {
	if o.Splits < 1 {
		return nil, fmt.Errorf("bench camera: splits must be at least 1, got %d", o.Splits)
	}
	var rows []CameraRow
	for _, set := range o.Sets {
		d := set.Train.D
		for _, m := range o.M {
			for _, grid := range o.Grids {
				row := CameraRow{Set: set.Name, M: m, Grid: grid}
				var times, accs, kept, rel []float64
				for s := 0; s < o.Splits; s++ {
					cfg, err := cameraConfig(m, d, grid, o.Seed+uint64(s))
					if err != nil {
						return nil, err
					}
					row.K, row.P = cfg.K, cfg.P
					xtr, ntr, xte, nte, err := set.split(s, o.Seed)
					if err != nil {
						return nil, err
					}
					row.Train = len(ntr)
					runtime.GC()
					debug.FreeOSMemory()
					procmem.ResetPeak()
					model, err := deploy.New(cfg, d, nil, nil)
					if err != nil {
						return nil, err
					}
					t0 := time.Now()
					res, err := model.Learn(ctx, xtr, ntr, nil, deploy.LearnOptions{})
					if err != nil {
						return nil, fmt.Errorf("bench camera: %s m=%d %s split %d: %w", set.Name, m, grid, s, err)
					}
					times = append(times, time.Since(t0).Seconds())
					// the model file's size: its encoding, counted (a
					// file is written by the store only)
					var size countWriter
					if err := modelfile.Encode(&size, &modelfile.File{Snapshot: codec.View(model.Model), Pipeline: model.Pipeline}); err != nil {
						return nil, err
					}
					row.FileBytes = int64(size)
					row.PeakRSS = max(row.PeakRSS, procmem.Peak())
					switch res.Steps[len(res.Steps)-1].LambdaIssue() {
					case flycl.LambdaLowEdge:
						row.Edge++
						row.EdgeLow++
					case flycl.LambdaHighEdge:
						row.Edge++
					case flycl.LambdaFlat:
						row.Flat++
					}
					rel = append(rel, relativeLambda(ctx, model, xtr, res.Lambda))
					acc, k, err := cameraScore(ctx, model, xte, nte)
					if err != nil {
						return nil, err
					}
					accs, kept = append(accs, acc), append(kept, k)
				}
				row.Learns = len(times)
				slices.Sort(times)
				row.LearnP50, row.LearnMax = times[len(times)/2], times[len(times)-1]
				row.Acc, row.AccSD = meanSD(accs)
				row.Accs = accs
				row.Kept, _ = meanSD(kept)
				slices.Sort(rel)
				row.Lambda = rel[len(rel)/2]
				rows = append(rows, row)
				if out != nil {
					fmt.Fprintf(out, "%s m=%d %s: learn %.3fs, acc %.2f%%\n", set.Name, m, grid, row.LearnP50, 100*row.Acc)
				}
			}
		}
	}
	pairedDeltas(rows)
	return rows, nil
}

// pairedDeltas fills Delta and DeltaSE: each row's accuracy minus that of
// the row of the largest m of its set and grid, split by split.
func pairedDeltas(rows []CameraRow) {
	for i := range rows {
		ref := -1
		for j, r := range rows {
			if r.Set == rows[i].Set && r.Grid == rows[i].Grid && (ref < 0 || r.M > rows[ref].M) {
				ref = j
			}
		}
		if ref == i || len(rows[ref].Accs) != len(rows[i].Accs) {
			continue
		}
		d := make([]float64, len(rows[i].Accs))
		for k := range d {
			d[k] = rows[i].Accs[k] - rows[ref].Accs[k]
		}
		mean, sd := meanSD(d)
		rows[i].Delta, rows[i].DeltaSE = mean, sd/math.Sqrt(float64(len(d)))
	}
}

// relativeLambda returns λ over the mean diagonal of HᵀH, H the codes of
// x (the unit of the relative grid), or NaN when they cannot be computed.
func relativeLambda(ctx context.Context, m *deploy.Model, x []float32, lambda float64) float64 {
	h, err := codec.Expand(ctx, m.Model, x)
	if err != nil {
		return math.NaN()
	}
	var tr float64
	for _, v := range h {
		tr += float64(v) * float64(v)
	}
	return lambda / (tr / float64(m.Model.Config().M))
}

// cameraScore returns the accuracy of the model on x (names the true
// classes) and the share of x its rejection keeps (1 when it has none).
func cameraScore(ctx context.Context, m *deploy.Model, x []float32, names []string) (acc, kept float64, err error) {
	p := m.Model.Predictor()
	scores, cos, err := p.ScoresCosines(ctx, x)
	if err != nil {
		return 0, 0, err
	}
	nc := p.Classes().Len()
	classNames := p.Classes().Names()
	rej := p.Rejection()
	hit, keep := 0, 0
	for i, want := range names {
		row := scores[i*nc : (i+1)*nc]
		best := 0
		for c, v := range row {
			if v > row[best] {
				best = c
			}
		}
		if classNames[best] == want {
			hit++
		}
		var c float64
		if cos != nil {
			c = cos[i]
		}
		if !rej.Enabled() || !rej.Reject(row, c) {
			keep++
		}
	}
	n := float64(len(names))
	return float64(hit) / n, float64(keep) / n, nil
}

func meanSD(v []float64) (mean, sd float64) {
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	for _, x := range v {
		sd += (x - mean) * (x - mean)
	}
	if len(v) > 1 {
		sd = math.Sqrt(sd / float64(len(v)-1))
	}
	return mean, sd
}

// PrintCamera writes the rows as a Markdown table.
func PrintCamera(w io.Writer, rows []CameraRow) {
	fmt.Fprintln(w, "| set | m | k | p | λ grid | learns | samples | first learn p50 (max) | file | peak RSS | accuracy (sd) | Δ vs largest m (se) | kept | λ/mean diag(G) (p50) | λ at an edge (low) |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, r := range rows {
		fmt.Fprintf(w, "| %s | %d | %d | %d | %s | %d | %d | %.3f s (%.3f) | %.1f MiB | %.0f MiB | %.2f%% (%.2f) | %+.2f (%.2f) | %.1f%% | %.3g | %d/%d (%d) |\n",
			r.Set, r.M, r.K, r.P, r.Grid, r.Learns, r.Train, r.LearnP50, r.LearnMax, float64(r.FileBytes)/(1<<20),
			float64(r.PeakRSS)/(1<<20), 100*r.Acc, 100*r.AccSD, 100*r.Delta, 100*r.DeltaSE, 100*r.Kept, r.Lambda, r.Edge, r.Learns, r.EdgeLow)
	}
}

// countWriter counts the bytes written to it.
type countWriter int64

func (c *countWriter) Write(p []byte) (int, error) {
	*c += countWriter(len(p))
	return len(p), nil
}
