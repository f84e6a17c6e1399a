package projection

import (
	"context"
	"fmt"
)

// Pending is a W being generated in the background (Start): a new model's
// W depends only on m, d, p and the seed, all known before its first
// samples are read, so it can be made while they are (their features
// extracted) instead of after. It has one consumer: Wait takes the W, or
// Stop drops it.
type Pending struct {
	m, d, p int
	seed    uint64
	cancel  context.CancelFunc
	done    chan struct{} // closed when the goroutine has ended
	w       *Matrix
	err     error
}

// Start starts Generate(m, d, p, seed) in a goroutine and returns at once.
// The goroutine ends when W is made, or soon after (within a few rows of
// W per CPU) ctx is done, Stop is called, or a Wait gives up. The W it
// gives has the same bits as Generate's.
func Start(ctx context.Context, m, d, p int, seed uint64) *Pending {
	ctx, cancel := context.WithCancel(ctx)
	g := &Pending{m: m, d: d, p: p, seed: seed, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(g.done)
		defer cancel() // the context's resources, once W is made
		g.w, g.err = generate(ctx, m, d, p, seed)
	}()
	return g
}

// Is reports whether g generates the W of m, d, p and seed, the one
// Generate(m, d, p, seed) returns.
func (g *Pending) Is(m, d, p int, seed uint64) bool {
	return g.m == m && g.d == d && g.p == p && g.seed == seed
}

// Wait returns W once it is made, or Generate's error (a bad shape), or
// the error of the context Start was given when it was done first. When
// ctx is done first, Wait stops the generation (Stop) and returns ctx's
// error, wrapped: W is then lost, as a Pending has one consumer. A Wait
// after Stop returns W only when it was made before, else the
// cancellation's error (wrapping context.Canceled).
func (g *Pending) Wait(ctx context.Context) (*Matrix, error) {
	select {
	case <-g.done:
		return g.w, g.err
	default:
	}
	select {
	case <-g.done:
		return g.w, g.err
	case <-ctx.Done():
		g.Stop()
		return nil, fmt.Errorf("projection: waiting for W (m=%d d=%d p=%d seed %d): %w", g.m, g.d, g.p, g.seed, ctx.Err())
	}
}

// Stop stops the generation when it is still running and returns once its
// goroutine has ended: a W that will not be used (the model turned out to
// exist, or its creation failed) costs no more CPU. Stop after Wait, or
// twice, does nothing.
func (g *Pending) Stop() {
	g.cancel()
	<-g.done
}
