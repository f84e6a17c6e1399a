package extract

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/flycl/flycl/vision/imageio"
	"github.com/flycl/flycl/vision/transform"
)

// synth is a data set of n small images with pixel values from the
// index; image bad (if ≥ 0) fails to decode. It counts decodes in flight.
type synth struct {
	n, bad         int
	inFlight, peak atomic.Int32
	mu             sync.Mutex
	decoded        []int
}

func (s *synth) Len() int          { return s.n }
func (s *synth) Label(i int) int   { return i % 2 }
func (s *synth) Classes() []string { return []string{"a", "b"} }
func (s *synth) Path(i int) string { return fmt.Sprintf("img%03d", i) }
func (s *synth) Image(i int) (*imageio.RGB, error) {
	c := s.inFlight.Add(1)
	defer s.inFlight.Add(-1)
	for {
		p := s.peak.Load()
		if c <= p || s.peak.CompareAndSwap(p, c) {
			break
		}
	}
	s.mu.Lock()
	s.decoded = append(s.decoded, i)
	s.mu.Unlock()
	if i == s.bad {
		return nil, errors.New("corrupt")
	}
	img := imageio.NewRGB(12, 10)
	for j := range img.Pix {
		img.Pix[j] = uint8(i*7 + j)
	}
	return img, nil
}

var tinyPreset = transform.Preset{Name: "tiny", Resize: 8, Filter: transform.Bicubic, Crop: 8, Mean: [3]float32{0.5, 0.5, 0.5}, Std: [3]float32{0.5, 0.5, 0.5}}

// TestPipelineOrderAndBound: batches come out in order with every image
// preprocessed exactly as a direct preset.Tensor call, and no more than
// depth distinct batch buffers ever exist (bounded memory).
func TestPipelineOrderAndBound(t *testing.T) {
	for _, c := range []struct{ n, lo, hi, batch, workers, depth int }{
		{23, 0, 23, 4, 3, 2}, {23, 5, 22, 5, 1, 3}, {8, 0, 8, 8, 4, 2}, {3, 0, 3, 4, 2, 5},
	} {
		ds := &synth{n: c.n, bad: -1}
		p := newPipeline(context.Background(), ds, tinyPreset, c.lo, c.hi, c.batch, c.workers, c.depth)
		per := 3 * 8 * 8
		bufs := map[*float32]bool{}
		want := c.lo
		for {
			b, err := p.next(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if b == nil {
				break
			}
			if b.lo != want || b.n != min(c.batch, c.hi-want) {
				t.Fatalf("%+v: batch at %d of %d images, want at %d", c, b.lo, b.n, want)
			}
			ref := make([]float32, per)
			for i := 0; i < b.n; i++ {
				img, _ := ds.Image(b.lo + i)
				tinyPreset.Tensor(img, ref)
				if !slices.Equal(ref, b.x[i*per:(i+1)*per]) {
					t.Fatalf("%+v: image %d differs from a direct preprocessing", c, b.lo+i)
				}
			}
			bufs[&b.x[:1][0]] = true
			want += b.n
			p.release(b)
		}
		p.close()
		if want != c.hi {
			t.Fatalf("%+v: ended at %d", c, want)
		}
		if len(bufs) > max(c.depth, 2) {
			t.Errorf("%+v: %d batch buffers, bound %d", c, len(bufs), c.depth)
		}
	}
}

// TestPipelineErrorAndCancel: a decoding error names the image and stops
// the pipeline; cancelling mid-way returns without deadlock or leaks, and
// the workers stop decoding new images soon after.
func TestPipelineErrorAndCancel(t *testing.T) {
	ds := &synth{n: 40, bad: 13}
	p := newPipeline(context.Background(), ds, tinyPreset, 0, 40, 4, 2, 2)
	var err error
	for {
		var b *pbatch
		if b, err = p.next(context.Background()); err != nil || b == nil {
			break
		}
		p.release(b)
	}
	p.close()
	if err == nil || !strings.Contains(err.Error(), "img013") {
		t.Fatalf("error %v, want one naming img013", err)
	}

	ds = &synth{n: 1000, bad: -1}
	ctx, cancel := context.WithCancel(context.Background())
	p = newPipeline(ctx, ds, tinyPreset, 0, 1000, 4, 2, 2)
	b, err := p.next(ctx)
	if err != nil || b == nil {
		t.Fatal(err)
	}
	cancel() // the consumer stops without releasing
	p.close()
	ds.mu.Lock()
	n := len(ds.decoded)
	ds.mu.Unlock()
	// at most depth batches claimed plus the jobs queued: far fewer than 1000
	if n > 2*4+4+2 {
		t.Errorf("%d images decoded after cancelling at the first batch", n)
	}
}
