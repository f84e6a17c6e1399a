package extract

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/flycl/flycl/vision/backbone"
	"github.com/flycl/flycl/vision/imageio"
)

// TestExtractorFeaturesAndDataset: an Extractor's two paths give the same
// features: Features of decoded images (a server's, through its one
// session, from concurrent callers) and Dataset (Run over the data set,
// the path of learn and extract), up to ONNX Runtime's float32 rounding
// of batches of another size (1e-5 of the largest feature: the features
// are sums of thousands of products, so rounding stays far below that and
// any real difference far above). It also implements Interface.
func TestExtractorFeaturesAndDataset(t *testing.T) {
	m, ds, _ := squeezeNetFolder(t, 5)
	e, err := NewExtractor(m, "squeezenet", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	e.BatchSize = 2
	var _ Interface = e
	defer e.Close()
	ctx := context.Background()
	ref, _, err := e.Dataset(ctx, ds, "")
	if err != nil {
		t.Fatal(err)
	}
	imgs := make([]*imageio.RGB, ds.Len())
	for i := range imgs {
		if imgs[i], err = ds.Image(i); err != nil {
			t.Fatal(err)
		}
	}
	if e.Dim() != ref.D || e.Name() != m.Name {
		t.Fatalf("Dim %d Name %q, want %d %q", e.Dim(), e.Name(), ref.D, m.Name)
	}
	scale := float64(slices.Max(ref.X))
	var wg sync.WaitGroup
	for g := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := e.Features(ctx, imgs[g:])
			if err != nil {
				t.Error(err)
				return
			}
			want := ref.X[g*ref.D:]
			for i := range got {
				if math.Abs(float64(got[i]-want[i])) > 1e-5*scale {
					t.Errorf("caller %d: feature %d: %g, Dataset gave %g", g, i, got[i], want[i])
					return
				}
			}
		}()
	}
	wg.Wait()
	// Close releases the session; the extractor compiles a new one if used again
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Features(ctx, imgs[:1]); err != nil {
		t.Fatalf("Features after Close: %v", err)
	}
}

// TestInt8Later: an extractor that waits for its int8 calibration refuses
// Features until Calibrate, which calibrates on the images it is given as
// Int8 does on the same images as a data set: the same graph (weights
// digest), pipeline and features, bit for bit (the same graph on the same
// batches). A second Calibrate changes nothing.
func TestInt8Later(t *testing.T) {
	m, ds, _ := squeezeNetFolder(t, 4)
	e, err := NewExtractor(m, "squeezenet", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	o := CalibOptions{N: 3, Method: backbone.CalibMinMax, Threads: 1}
	later := e.Int8Later(o)
	defer later.Close()
	ctx := context.Background()
	imgs := make([]*imageio.RGB, ds.Len())
	for i := range imgs {
		if imgs[i], err = ds.Image(i); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := later.Features(ctx, imgs); !errors.Is(err, ErrUncalibrated) || later.Calibrated() || !e.Calibrated() {
		t.Fatalf("before Calibrate: %v (calibrated %v; fp32 %v), want ErrUncalibrated", err, later.Calibrated(), e.Calibrated())
	}
	if !strings.HasSuffix(later.Name(), " (int8)") || later.Dim() != e.Dim() {
		t.Fatalf("Name %q Dim %d", later.Name(), later.Dim())
	}
	p, err := later.Calibrate(ctx, len(imgs), func(i int) (*imageio.RGB, error) { return imgs[i], nil })
	if err != nil {
		t.Fatal(err)
	}
	direct, err := e.Int8(ctx, ds, o)
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close()
	if !later.Calibrated() || p.Precision != "int8" || p.WeightsHash != direct.Backbone.Hash || p.Calibration != direct.Pipeline().Calibration {
		t.Fatalf("calibrated pipeline %+v, Int8 on the same images %+v", p, direct.Pipeline())
	}
	got, err := later.Features(ctx, imgs)
	if err != nil {
		t.Fatal(err)
	}
	want, err := direct.Features(ctx, imgs)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Error("features of the calibrated extractor differ from Int8's on the same images")
	}
	again, err := later.Calibrate(ctx, 1, func(int) (*imageio.RGB, error) { return nil, errors.New("not called") })
	if err != nil || again.Calibration != p.Calibration {
		t.Errorf("second Calibrate: %v, calibration changed %v", err, again.Calibration != p.Calibration)
	}
}
