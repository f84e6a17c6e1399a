package deploy

import (
	"context"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/format/modelfile"
	"github.com/flycl/flycl/projection"
)

// Ahead is the W of a model not created yet, generated in the background
// (projection.Start) while its first samples are read, their features
// extracted: W depends only on the configuration's m, p and seed and on
// the features' dimension d, all known before the first image is, and
// its generation is most of what creating a model costs. A nil *Ahead
// holds none: its methods then generate W when the model is created, as
// flycl.New does.
type Ahead struct {
	w *projection.Pending
}

// StartNew starts generating the W of the model New(cfg, d, nil, p) (and
// flycl.New(cfg, d)) creates, for Ahead.New (or W) to take. The
// generation stops when ctx is done. A configuration New refuses starts
// nothing (nil): New reports it. Stop drops a W that will not be used.
func StartNew(ctx context.Context, cfg flycl.Config, d int) *Ahead {
	c := cfg.WithDefaults()
	if c.Validate(d) != nil {
		return nil
	}
	return &Ahead{w: projection.Start(ctx, c.M, d, c.P, c.Seed)}
}

// W returns the W flycl.New(cfg, d) generates when a was started for it
// (the same m, p and seed once the defaults are filled in, and the same
// d), waiting for it: flycl.NewWithProjection(cfg, W) is then that
// model, bit for bit. It returns nil and no error when a is nil, was
// started for another W (which it stops), or was stopped (its context
// done) while ctx is not: the caller generates W. Its error is ctx's,
// wrapped, when ctx is done before W is made.
func (a *Ahead) W(ctx context.Context, cfg flycl.Config, d int) (*projection.Matrix, error) {
	if a == nil {
		return nil, nil
	}
	c := cfg.WithDefaults()
	if !a.w.Is(c.M, d, c.P, c.Seed) {
		a.w.Stop()
		return nil, nil
	}
	w, err := a.w.Wait(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		return nil, nil
	}
	return w, nil
}

// New is New(cfg, d, nil, p) with a's W when it is that model's (W).
func (a *Ahead) New(ctx context.Context, cfg flycl.Config, d int, p *modelfile.Pipeline) (*Model, error) {
	w, err := a.W(ctx, cfg, d)
	if err != nil {
		return nil, err
	}
	return New(cfg, d, w, p)
}

// Stop stops the generation when it still runs and returns once it has
// ended (projection.Pending.Stop): a model that turned out to exist, or
// whose creation was refused, leaves no work behind. A nil a, a W taken,
// or a second Stop: nothing.
func (a *Ahead) Stop() {
	if a != nil {
		a.w.Stop()
	}
}
