package projection

import (
	"context"
	"errors"
	"runtime"
	"testing"

	"github.com/flycl/flycl/internal/leakcheck"
)

// TestStartSameW: the W a Pending gives is Generate's, bit for bit: its
// digest is the one TestGenerateStable holds for the same m, d, p and
// seed (recorded from the generator as it shipped), at one CPU and at
// several (the rows split among other workers).
func TestStartSameW(t *testing.T) {
	const want = "46908d8492643fa6581a946f1567e70075ca56000b80b5729de5f021cc7343aa"
	for _, procs := range []int{1, 3} {
		prev := runtime.GOMAXPROCS(procs)
		g := Start(context.Background(), 3000, 512, 300, 42)
		if !g.Is(3000, 512, 300, 42) || g.Is(3000, 512, 300, 43) || g.Is(3000, 511, 300, 42) {
			t.Errorf("GOMAXPROCS=%d: Is does not name exactly the W started", procs)
		}
		w, err := g.Wait(context.Background())
		runtime.GOMAXPROCS(prev)
		if err != nil {
			t.Fatal(err)
		}
		if got := w.Digest(); got != want {
			t.Errorf("GOMAXPROCS=%d: digest %s, want %s", procs, got, want)
		}
		if w.Seed == nil || *w.Seed != 42 {
			t.Errorf("GOMAXPROCS=%d: W's seed %v, want 42", procs, w.Seed)
		}
		// taken: a second Wait and a Stop give the same W and end nothing
		w2, err := g.Wait(context.Background())
		g.Stop()
		if err != nil || w2 != w {
			t.Errorf("GOMAXPROCS=%d: second Wait = %p, %v; want the same W", procs, w2, err)
		}
	}
}

// TestStartBadShape: a shape Generate refuses is Wait's error, Generate's.
func TestStartBadShape(t *testing.T) {
	_, want := Generate(10, 8, 9, 1)
	if want == nil {
		t.Fatal("Generate accepted p > d")
	}
	w, err := Start(context.Background(), 10, 8, 9, 1).Wait(context.Background())
	if w != nil || err == nil || err.Error() != want.Error() {
		t.Fatalf("Wait = %v, %v; want nil, %v", w, err, want)
	}
}

// TestPendingStops: the generation's goroutines end, with no W and an
// error wrapping the cancellation, when Start's context is cancelled,
// when Wait's is, and on Stop; a W of 60 000 rows (some 0.4 s of CPU)
// is still being made when they are.
func TestPendingStops(t *testing.T) {
	const m, d, p = 60000, 512, 300
	base := runtime.NumGoroutine()
	check := func(name string, w *Matrix, err error, g *Pending) {
		t.Helper()
		select {
		case <-g.done:
		default:
			t.Errorf("%s: the generation is still running", name)
		}
		if w != nil || !errors.Is(err, context.Canceled) {
			t.Errorf("%s: Wait = %v, %v; want no W and context.Canceled", name, w, err)
		}
		leakcheck.Settled(t, base)
	}

	ctx, cancel := context.WithCancel(context.Background())
	g := Start(ctx, m, d, p, 1)
	cancel()
	w, err := g.Wait(context.Background())
	check("Start's context cancelled", w, err, g)

	g = Start(context.Background(), m, d, p, 1)
	wctx, wcancel := context.WithCancel(context.Background())
	wcancel()
	w, err = g.Wait(wctx)
	check("Wait's context cancelled", w, err, g)
	// W is lost: waiting again does not restart it
	w, err = g.Wait(context.Background())
	check("Wait after a cancelled Wait", w, err, g)

	g = Start(context.Background(), m, d, p, 1)
	g.Stop()
	w, err = g.Wait(context.Background())
	check("Stop", w, err, g)
	g.Stop() // twice: nothing
}
