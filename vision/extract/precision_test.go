package extract

import (
	"context"
	"math"
	"testing"

	"github.com/flycl/flycl/vision/backbone"
)

// TestInt8Job: the int8 graph's calibration is deterministic (same images,
// same Hash, same cache key), its cache key differs from the fp32 graph's
// and from another calibration's, and its features stay close to fp32
// (cosine ≥ 0.97 on random-noise images, far from ImageNet statistics).
func TestInt8Job(t *testing.T) {
	m, ds, _ := squeezeNetFolder(t, 6)
	ctx := context.Background()
	q1, err := Int8(ctx, m, ds, m.Preset, backbone.CalibMinMax, 4, 0)
	if err != nil {
		t.Fatal(err)
	}
	q2, err := Int8(ctx, m, ds, m.Preset, backbone.CalibMinMax, 4, 0)
	if err != nil {
		t.Fatal(err)
	}
	q3, err := Int8(ctx, m, ds, m.Preset, backbone.CalibMinMax, 3, 0)
	if err != nil {
		t.Fatal(err)
	}
	if q1.Hash != q2.Hash || q1.Hash == q3.Hash || q1.Hash == m.Hash || q1.Precision != backbone.INT8 {
		t.Fatalf("hashes: int8 %s, again %s, other calibration %s, fp32 %s", q1.Hash, q2.Hash, q3.Hash, m.Hash)
	}
	job := func(m *backbone.Model) *Job {
		return &Job{Data: ds, DataKey: "k", Model: m, Preset: m.Preset, BatchSize: 4}
	}
	if job(q1).Key() == job(m).Key() || job(q1).Key() == job(q3).Key() || job(q1).Key() != job(q2).Key() {
		t.Fatal("cache key does not follow precision and calibration")
	}
	sf, _, err := Run(ctx, job(m))
	if err != nil {
		t.Fatal(err)
	}
	sq, _, err := Run(ctx, job(q1))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < sf.N; i++ {
		a, b := sf.X[i*sf.D:(i+1)*sf.D], sq.X[i*sf.D:(i+1)*sf.D]
		var ab, aa, bb float64
		for j := range a {
			ab += float64(a[j]) * float64(b[j])
			aa += float64(a[j]) * float64(a[j])
			bb += float64(b[j]) * float64(b[j])
		}
		if c := ab / math.Sqrt(aa*bb); c < 0.97 {
			t.Errorf("image %d: cosine fp32/int8 %.4f", i, c)
		}
	}
}

// TestMeasurePipeline: the three rates are measured on the asked number of
// images and the end-to-end pass really extracts (no cache written).
func TestMeasurePipeline(t *testing.T) {
	m, ds, _ := squeezeNetFolder(t, 7)
	r, err := MeasurePipeline(context.Background(), Job{Data: ds, Model: m, Preset: m.Preset, BatchSize: 2, CacheDir: t.TempDir()}, 5)
	if err != nil {
		t.Fatal(err)
	}
	if r.Images != 5 || !(r.Decode > 0 && r.Model > 0 && r.EndToEnd > 0) || math.IsInf(r.Ratio(), 0) {
		t.Fatalf("rates %+v", r)
	}
	if s := r.Shared(); !(s < min(r.Decode, r.Model)) {
		t.Errorf("shared-CPU ceiling %g not below both stages %+v", s, r)
	}
}
