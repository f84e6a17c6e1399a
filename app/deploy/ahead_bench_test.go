package deploy

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/flycl/flycl/format/modelfile"
	"github.com/flycl/flycl/internal/proctime"
	"github.com/flycl/flycl/vision/extract"
)

// photos15Files returns 15 photos, 5 of each of 3 classes (CIFAR-10 JPEGs of
// ../shared, else drawn pictures: cifarFolder), their class names, and
// the MobileNetV2 extractor of ../shared's weights (else the built-in
// ones) through ONNX Runtime; it skips when ONNX Runtime is missing.
func photos15Files(tb testing.TB) ([]string, []string, *extract.Extractor) {
	tb.Helper()
	bm := squeezeNet(tb, "mobilenetv2")
	e, err := extract.NewExtractor(bm, "mobilenetv2", "features", nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { e.Close() })
	dir := cifarFolder(tb, []string{"bird", "cat", "ship"}, 5, 0)
	var paths, names []string
	for _, c := range []string{"bird", "cat", "ship"} {
		ents, err := os.ReadDir(filepath.Join(dir, "train", c))
		if err != nil {
			tb.Fatal(err)
		}
		for _, f := range ents {
			paths, names = append(paths, filepath.Join(dir, "train", c, f.Name())), append(names, c)
		}
	}
	if len(paths) != 15 {
		tb.Fatalf("%d photos, want 15", len(paths))
	}
	return paths, names, e
}

// BenchmarkNewModel15Photos: a new model from 15 photos (3 classes × 5)
// through MobileNetV2 (d = 1280) at the defaults of a model from images,
// as flycl learn creates it: W generated after the photos are extracted
// (W-after: deploy.New, flycl.New's generation) or while they are
// (W-ahead: StartNew before the extraction, Ahead.New after). after-ms
// is the wall time from the end of the extraction to the model learned
// (created and taught), the figure the first learn's target is about;
// extract-ms the extraction's; cpu-ms the process's CPU time for both.
// p = 500 is flycl learn's (DefaultImageConfig: the paper's 300 of
// d = 768 scaled to 1280); p = 300 the Python package's default.
func BenchmarkNewModel15Photos(b *testing.B) {
	ctx := context.Background()
	paths, names, e := photos15Files(b)
	if err := e.Open(); err != nil {
		b.Fatal(err)
	}
	if _, err := e.Files(ctx, paths); err != nil { // ONNX Runtime's session made and warm
		b.Fatal(err)
	}
	d := e.Dim()
	for _, p := range []int{500, 300} {
		cfg := DefaultImageConfig(d)
		cfg.P = p
		for _, ahead := range []bool{false, true} {
			name := map[bool]string{false: "W-after", true: "W-ahead"}[ahead]
			b.Run(fmt.Sprintf("p=%d/%s", p, name), func(b *testing.B) {
				var extract, after time.Duration
				c0 := proctime.CPU()
				for range b.N {
					var a *Ahead
					t0 := time.Now()
					if ahead {
						a = StartNew(ctx, cfg, d)
					}
					s, err := e.Files(ctx, paths)
					if err != nil {
						b.Fatal(err)
					}
					t1 := time.Now()
					m, err := a.New(ctx, cfg, d, e.Pipeline())
					if err != nil {
						b.Fatal(err)
					}
					if _, err := m.Learn(ctx, s.X, names, e.Pipeline(), LearnOptions{}); err != nil {
						b.Fatal(err)
					}
					t2 := time.Now()
					extract += t1.Sub(t0)
					after += t2.Sub(t1)
				}
				n := float64(b.N)
				b.ReportMetric(float64(after.Microseconds())/n/1e3, "after-ms/op")
				b.ReportMetric(float64(extract.Microseconds())/n/1e3, "extract-ms/op")
				b.ReportMetric(float64((proctime.CPU()-c0).Microseconds())/n/1e3, "cpu-ms/op")
			})
		}
	}
}

// TestNewModel15Photos: a new model from 15 real photos (3 classes × 5,
// CIFAR-10 through MobileNetV2, d = 1280) at the defaults of a model from
// images (DefaultImageConfig: m = 10000, the dual form), its W generated
// while they are extracted, learns them with no warning (no λ raised,
// GCV's λ inside its grid) and makes a model file of at most 1 MiB, the
// size a new model from a few photos is to stay within (the primal
// form's G alone, m×m, would be hundreds of MiB).
func TestNewModel15Photos(t *testing.T) {
	ctx := context.Background()
	paths, names, e := photos15Files(t)
	if err := e.Open(); err != nil {
		t.Fatal(err)
	}
	cfg := DefaultImageConfig(e.Dim())
	a := StartNew(ctx, cfg, e.Dim())
	defer a.Stop()
	s, err := e.Files(ctx, paths)
	if err != nil {
		t.Fatal(err)
	}
	m, err := a.New(ctx, cfg, s.D, e.Pipeline())
	if err != nil {
		t.Fatal(err)
	}
	res, err := m.Learn(ctx, s.X, names, e.Pipeline(), LearnOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Warnings) > 0 || !slices.Equal(res.Added, []string{"bird", "cat", "ship"}) {
		t.Errorf("added %v, warnings %q; want bird, cat, ship and none", res.Added, res.Warnings)
	}
	if c := m.Model.Config(); c.M != 10000 || c.Dual == 0 {
		t.Errorf("m = %d, dual limit %d; want the image defaults' m = 10000 and the dual form", c.M, c.Dual)
	}
	var buf bytes.Buffer
	if err := modelfile.Encode(&buf, m.FileView()); err != nil {
		t.Fatal(err)
	}
	if buf.Len() > 1<<20 {
		t.Errorf("model file %d bytes, want at most 1 MiB", buf.Len())
	}
	t.Logf("model file %d bytes (%.0f KiB), λ %g", buf.Len(), float64(buf.Len())/1024, res.Lambda)
}
