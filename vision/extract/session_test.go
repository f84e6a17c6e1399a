package extract

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/flycl/flycl/vision/imageio"
)

// TestSessionImages: a Session's features of decoded images (the
// server's path) are the backbone run on the images preprocessed one by
// one: identical bits when the batch holds them all (the same run), and
// equal up to ONNX Runtime's float32 rounding in batches of another size;
// a range of a data set lands at its rows; a cancelled context stops it.
func TestSessionImages(t *testing.T) {
	m, ds, _ := squeezeNetFolder(t, 7)
	var err error
	n, per := ds.Len(), 3*224*224
	imgs := make([]*imageio.RGB, n)
	x := make([]float32, n*per)
	for i := range imgs {
		if imgs[i], err = ds.Image(i); err != nil {
			t.Fatal(err)
		}
		m.Preset.Tensor(imgs[i], x[i*per:(i+1)*per])
	}
	sess, err := m.NewSession(0)
	if err != nil {
		t.Fatal(err)
	}
	res, err := sess.Run(x, n)
	sess.Close()
	if err != nil {
		t.Fatal(err)
	}
	ref := res[0]
	scale := 0.0
	for _, v := range ref {
		scale = max(scale, math.Abs(float64(v)))
	}
	ctx := context.Background()
	for _, o := range []sessionOptions{{BatchSize: n}, {BatchSize: 2, Workers: 3}, {BatchSize: 3, Workers: 1, Depth: 5}} {
		s, err := newSession(m, 0, m.Preset, o)
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.Images(ctx, imgs)
		if err != nil {
			t.Fatal(err)
		}
		if o.BatchSize == n {
			if !slices.Equal(got, ref) {
				t.Errorf("%+v: features differ from one run of the same batch", o)
			}
		} else {
			// Batches of another size may round a feature differently in
			// float32; the features are sums of thousands of products, so
			// 1e-5 of the largest is far above that and far below any
			// real difference (another image, another preprocessing).
			for i := range ref {
				if math.Abs(float64(got[i]-ref[i])) > 1e-5*scale {
					t.Fatalf("%+v: feature %d: %g, want %g", o, i, got[i], ref[i])
				}
			}
		}
		// images 2..6 of the data set into their own slice
		d := s.Dim()
		part := make([]float32, 4*d)
		last := 0
		if err := s.Extract(ctx, ds, 2, 6, part, func(done int) { last = done }); err != nil {
			t.Fatal(err)
		}
		for i := range part {
			if math.Abs(float64(part[i]-ref[2*d+i])) > 1e-5*scale {
				t.Fatalf("%+v: images 2..6: feature %d: %g, want %g", o, i, part[i], ref[2*d+i])
			}
		}
		if last != 6 {
			t.Errorf("%+v: last progress %d, want 6", o, last)
		}
		if err := s.Extract(ctx, ds, 2, 6, part[:d], nil); err == nil {
			t.Errorf("%+v: a slice of the wrong size: no error", o)
		}
		cancelled, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := s.Images(cancelled, imgs); err == nil {
			t.Errorf("%+v: cancelled: no error", o)
		}
		s.Close()
	}
	if _, err := newSession(m, len(m.Outputs), m.Preset, sessionOptions{}); err == nil {
		t.Error("an output the backbone does not have: no error")
	}
}
