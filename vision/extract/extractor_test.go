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

// TestExtractorSubset: Subset extracts images of a data set by position
// through the extractor's one session: all of them in order are Dataset's
// features bit for bit (the same batches), any others their rows (up to
// ONNX Runtime's rounding of other batches, as above); images are decoded
// with the extractor's Decoder, a decoding error naming the image's
// position in the data set; a position outside it is refused.
func TestExtractorSubset(t *testing.T) {
	m, ds, _ := squeezeNetFolder(t, 6)
	e, err := NewExtractor(m, "squeezenet", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	e.BatchSize, e.Workers = 2, 3
	defer e.Close()
	ctx := context.Background()
	ref, _, err := e.Dataset(ctx, ds, "")
	if err != nil {
		t.Fatal(err)
	}
	all := []int{0, 1, 2, 3, 4, 5}
	got, err := e.Subset(ctx, ds, all)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, ref.X) {
		t.Error("Subset of every image in order differs from Dataset")
	}
	idx := []int{4, 1, 3}
	if got, err = e.Subset(ctx, ds, idx); err != nil {
		t.Fatal(err)
	}
	d, scale := ref.D, float64(slices.Max(ref.X))
	for k, i := range idx {
		for j := range d {
			if g, w := got[k*d+j], ref.X[i*d+j]; math.Abs(float64(g-w)) > 1e-5*scale {
				t.Fatalf("image %d (row %d of the subset), feature %d: %g, Dataset gave %g", i, k, j, g, w)
			}
		}
	}
	if _, err := e.Subset(ctx, ds, []int{0, 6}); err == nil {
		t.Error("image 6 of 6: no error")
	}
	small := e.clone(m)
	small.Decoder = imageio.Decoder{MaxPixels: 100} // the images have 1200 pixels or more
	defer small.Close()
	_, err = small.Subset(ctx, ds, idx)
	ie, ok := errors.AsType[*ImageError](err)
	if !ok || (ie.Index != 4 && ie.Index != 1) || ie.Path != ds.Path(ie.Index) {
		t.Errorf("over the decoder's pixel limit: %v, want an *ImageError naming image 4 or 1 (the first batch)", err)
	}
}

// TestDefaultBackbone: the default backbone is a built-in one (read from a
// models folder or the weights built in, without a path).
func TestDefaultBackbone(t *testing.T) {
	s, err := ParseBackbone(DefaultBackbone)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := ModelFolder(s.Name); !ok || s.Path != "" {
		t.Errorf("DefaultBackbone %q: not a built-in backbone", DefaultBackbone)
	}
}
