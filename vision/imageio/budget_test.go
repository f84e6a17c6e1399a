package imageio

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
)

// TestBudgetAdmitsWhatFits: a request that fits the pixels free is
// admitted while a larger one waits (no head-of-line blocking), the
// larger one is admitted once pixels are released, a request larger than
// the budget is admitted alone, and an ended context refuses with
// ErrBudget and the context's cause.
func TestBudgetAdmitsWhatFits(t *testing.T) {
	b := NewBudget(100)
	ctx := context.Background()
	if err := b.Acquire(ctx, 80); err != nil {
		t.Fatal(err)
	}
	bigIn := make(chan error, 1)
	go func() { bigIn <- b.Acquire(ctx, 50) }()
	// 20 fit beside the 80 held, whether or not the 50 is waiting yet.
	if err := b.Acquire(ctx, 20); err != nil {
		t.Fatal(err)
	}
	if got := b.InUse(); got != 100 {
		t.Fatalf("in use %d, want 100", got)
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	if err := b.Acquire(done, 1); !errors.Is(err, ErrBudget) || !errors.Is(err, context.Canceled) {
		t.Fatalf("acquire with a full budget and an ended context: %v", err)
	}
	b.Release(20)
	b.Release(80)
	if err := <-bigIn; err != nil {
		t.Fatal(err)
	}
	if got := b.InUse(); got != 50 {
		t.Fatalf("in use %d, want the 50 of the waiter", got)
	}
	b.Release(50)
	// Larger than the budget: admitted alone, holding the whole budget.
	if err := b.Acquire(ctx, 1000); err != nil {
		t.Fatal(err)
	}
	if err := b.Acquire(done, 1); !errors.Is(err, ErrBudget) {
		t.Fatalf("acquire beside an image larger than the budget: %v", err)
	}
	b.Release(1000)
	if b.InUse() != 0 || b.Peak() != 100 {
		t.Fatalf("in use %d, peak %d; want 0 and 100", b.InUse(), b.Peak())
	}
	var none *Budget
	if err := none.Acquire(done, 1<<40); err != nil || NewBudget(0) != nil || NewBudget(-1) != nil {
		t.Fatalf("the nil budget refuses: %v", err)
	}
	none.Release(1 << 40)
}

// TestDecoderBudget: decoders that share a Budget, run from many
// goroutines, hold each image's pixels (from its header) while they
// decode it: never more than the budget at once, and exactly one image's
// pixels at the peak when two do not fit. An all-zero PNG of 64 kilopixels
// is a few hundred bytes: it counts as its pixels, not its bytes. With
// the budget spent, a decode whose context ends is refused with ErrBudget
// and decodes nothing.
func TestDecoderBudget(t *testing.T) {
	const side = 256
	var enc bytes.Buffer
	if err := png.Encode(&enc, image.NewGray(image.Rect(0, 0, side, side))); err != nil {
		t.Fatal(err)
	}
	if enc.Len() > side*side/50 {
		t.Fatalf("all-zero PNG of %d bytes", enc.Len())
	}
	b := NewBudget(side * side * 3 / 2)
	d := Decoder{Budget: b}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for range 16 {
		wg.Go(func() {
			m, err := d.DecodeContext(context.Background(), enc.Bytes())
			if err == nil && (m.W != side || m.H != side) {
				err = errors.New("wrong size")
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if b.Peak() != side*side || b.InUse() != 0 {
		t.Fatalf("peak %d pixels in flight, %d still held; want %d and 0", b.Peak(), b.InUse(), side*side)
	}
	if err := b.Acquire(context.Background(), side*side); err != nil {
		t.Fatal(err)
	}
	done, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := d.DecodeContext(done, enc.Bytes()); !errors.Is(err, ErrBudget) {
		t.Fatalf("decode with the budget spent and an ended context: %v", err)
	}
}

// TestInPlaceRGB: the conversion of a decoder's RGBA or NRGBA image in
// its own buffer gives, pixel by pixel, what color.NRGBAModel gives (the
// un-premultiplied colour, alpha dropped, as PIL's convert("RGB")), and
// reuses the buffer; an image whose rows are not contiguous (a sub-image)
// is left to the copying path, with the same result.
func TestInPlaceRGB(t *testing.T) {
	const w, h = 29, 17
	r := rand.New(rand.NewPCG(5, 6))
	for _, premul := range []bool{false, true} {
		var im image.Image
		pix := make([]uint8, 4*w*h)
		for i := range w * h {
			a := uint8(255)
			if r.IntN(3) == 0 {
				a = uint8(r.IntN(256))
			}
			for k := range 3 {
				v := uint8(r.IntN(256))
				if premul {
					v = uint8(int(v) * int(a) / 255) // a valid premultiplied colour
				}
				pix[4*i+k] = v
			}
			pix[4*i+3] = a
		}
		want := make([]uint8, 0, 3*w*h)
		for i := range w * h {
			var c color.Color = color.NRGBA{pix[4*i], pix[4*i+1], pix[4*i+2], pix[4*i+3]}
			if premul {
				c = color.RGBA{pix[4*i], pix[4*i+1], pix[4*i+2], pix[4*i+3]}
			}
			n := color.NRGBAModel.Convert(c).(color.NRGBA)
			want = append(want, n.R, n.G, n.B)
		}
		sub := func(im image.Image) image.Image {
			return im.(interface {
				SubImage(image.Rectangle) image.Image
			}).SubImage(image.Rect(1, 0, w, h))
		}
		if premul {
			im = &image.RGBA{Pix: pix, Stride: 4 * w, Rect: image.Rect(0, 0, w, h)}
		} else {
			im = &image.NRGBA{Pix: pix, Stride: 4 * w, Rect: image.Rect(0, 0, w, h)}
		}
		// the sub-image first: the in-place conversion changes pix
		s := toRGB(sub(im))
		for y := range h {
			if !bytes.Equal(s.Pix[3*(w-1)*y:3*(w-1)*(y+1)], want[3*(w*y+1):3*w*(y+1)]) {
				t.Fatalf("premultiplied %v: sub-image row %d differs", premul, y)
			}
		}
		got := toRGB(im)
		if !bytes.Equal(got.Pix, want) || &got.Pix[0] != &pix[0] || got.W != w || got.H != h {
			t.Fatalf("premultiplied %v: in-place conversion differs from NRGBAModel (or copied)", premul)
		}
	}
}

// TestBudgetCollects: giving back a quarter of the budget or more runs a
// garbage collection (before a waiter is admitted), so that the next
// large image reuses the memory of the last instead of adding to it.
func TestBudgetCollects(t *testing.T) {
	b := NewBudget(1000)
	var before, after runtime.MemStats
	if err := b.Acquire(context.Background(), 250); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&before)
	b.Release(250)
	runtime.ReadMemStats(&after)
	if after.NumGC <= before.NumGC {
		t.Fatalf("a release of a quarter of the budget ran no collection (%d, then %d)", before.NumGC, after.NumGC)
	}
}
