package imageio

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
)

// DefaultBudgetPixels is the pixels in flight a Budget of the default
// size admits: one image at a server's 40-megapixel limit and room for
// ordinary photos beside it, but not two images at the limit (an
// image in flight costs about 3 bytes a pixel decoded, and up to 4 more
// while its decoder's own image exists).
const DefaultBudgetPixels = 64_000_000

// ErrBudget is the error of an Acquire that gave up waiting (its context
// ended) for pixels of the Budget to be free.
var ErrBudget = errors.New("imageio: too many pixels being decoded at once")

// Budget bounds the pixels of the images being decoded (and, for callers
// that hold them longer, processed) at once, by all the goroutines that
// share it: an image is admitted against the width × height its header
// announces, before any pixel is decoded, whatever its compressed size (an
// all-zero PNG of 40 megapixels is 100 kB on the wire and 120 MB decoded).
//
// Unlike a first-in-first-out semaphore, a Budget admits any request that
// fits the pixels free now, even while a larger one waits: a small image
// is not queued behind large ones. A large request waits until enough
// pixels are free, or until its context ends (ErrBudget); a request larger
// than the whole budget is admitted alone, once nothing else is in
// flight. A nil *Budget admits everything at once.
type Budget struct {
	max int64

	mu   sync.Mutex
	used int64
	peak int64
	// wake is closed (and replaced) whenever pixels are released.
	wake chan struct{}
}

// NewBudget returns a budget of max pixels in flight; max <= 0 returns
// nil, the budget that admits everything.
func NewBudget(max int64) *Budget {
	if max <= 0 {
		return nil
	}
	return &Budget{max: max, wake: make(chan struct{})}
}

// Max returns the budget's size in pixels (0 for a nil Budget: no bound).
func (b *Budget) Max() int64 {
	if b == nil {
		return 0
	}
	return b.max
}

// weight is what a request of n pixels holds: at most the whole budget.
func (b *Budget) weight(n int64) int64 { return max(0, min(n, b.max)) }

// Acquire waits until n pixels are free and takes them, or returns an
// error wrapping ErrBudget and the context's error when ctx ends first.
// Release them with Release(n).
func (b *Budget) Acquire(ctx context.Context, n int64) error {
	if b == nil {
		return nil
	}
	w := b.weight(n)
	for {
		b.mu.Lock()
		if b.used+w <= b.max {
			b.used += w
			b.peak = max(b.peak, b.used)
			b.mu.Unlock()
			return nil
		}
		wake := b.wake
		b.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return fmt.Errorf("%w (%d pixels wanted, %d of %d in flight): %w", ErrBudget, n, b.InUse(), b.max, context.Cause(ctx))
		}
	}
}

// Release gives back n pixels taken by Acquire(ctx, n). The caller must
// no longer reference their images.
//
// A release of a quarter of the budget or more first runs a garbage
// collection, before any waiter is admitted: Go's collector lets the
// heap grow to about twice what is live before it collects, so the
// decoded images of one large request, garbage now, would otherwise
// still be in memory while the next one decodes, and the peak would be
// twice the budget's. The collection marks only what is live (the
// decoded images are pointer-free and not scanned); it is rare, as such
// images are.
func (b *Budget) Release(n int64) {
	if b == nil {
		return
	}
	w := b.weight(n)
	if w >= b.max/4 {
		runtime.GC()
	}
	b.mu.Lock()
	b.used -= w
	if b.used < 0 {
		b.mu.Unlock()
		panic("imageio: Budget.Release of pixels never acquired")
	}
	close(b.wake)
	b.wake = make(chan struct{})
	b.mu.Unlock()
}

// InUse returns the pixels in flight now.
func (b *Budget) InUse() int64 {
	if b == nil {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// Peak returns the most pixels that were in flight at once.
func (b *Budget) Peak() int64 {
	if b == nil {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.peak
}
