package server

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/deploy"
)

// Snapshot is an immutable view of a model: everything the read-only
// endpoints need. Its methods are safe for concurrent use, and a snapshot
// never changes after it is published; learning publishes a new one.
type Snapshot interface {
	Version() uint64
	// Dim is the feature dimension d.
	Dim() int
	// Classes lists the classes in score-column order.
	Classes() []Class
	// Scores returns the n×c class scores of the n×d features x. The
	// server scores concurrent requests together in one call, so a row's
	// scores should not depend on the other rows (flycl.Predictor's do
	// not, to the bit); otherwise a batched answer differs from the same
	// request's answer alone.
	Scores(ctx context.Context, x []float32) ([]float32, error)
	// Rank turns the scores of Scores into the top classes of every row,
	// best first (at most top; ties keep class order).
	Rank(scores []float32, top int) [][]Score
	Info() Info
}

// LearnOptions say how a Backend learns (the zero value: all samples as
// one task, λ by GCV on it, as in the paper).
type LearnOptions struct {
	// Lambda fixes λ (> 0) instead of GCV.
	Lambda float64
	// Online learns in mini-batches of Batch samples, re-solving after
	// each (λ by GCV on each batch unless Lambda is given).
	Online bool
	Batch  int
}

// deploy converts the options, checking them.
func (o LearnOptions) deploy() (deploy.LearnOptions, error) {
	switch {
	case !(o.Lambda >= 0) || math.IsInf(o.Lambda, 0):
		return deploy.LearnOptions{}, fmt.Errorf("lambda must be positive and finite (or absent for GCV), got %g", o.Lambda)
	case o.Batch < 0:
		return deploy.LearnOptions{}, fmt.Errorf("batch must be positive, got %d", o.Batch)
	case o.Batch > 0 && !o.Online:
		return deploy.LearnOptions{}, fmt.Errorf("batch applies to online learning only (give online: true)")
	case o.Online && o.Batch == 0:
		o.Batch = DefaultOnlineBatch
	}
	return deploy.LearnOptions{Lambda: o.Lambda, Online: o.Online, Batch: o.Batch}, nil
}

// DefaultOnlineBatch is the mini-batch size of an online learn that gives
// none (as flycl learn --online).
const DefaultOnlineBatch = 1000

// LearnReport describes one learning step done by a Backend.
type LearnReport struct {
	Samples    int
	NewClasses []string
	Lambda     float64
	Steps      int // solves: 1, or one per mini-batch online
	// Warnings say what succeeded but not as asked: a λ the solve had to
	// raise (deploy.LearnResult.Warnings).
	Warnings []string
	// Stages holds the wall time of each stage (projection, topk, gram,
	// gcv, factor, solve, save).
	Stages map[string]time.Duration
}

// Backend owns the model and its file. The server calls Learn and Forget
// from one goroutine only, never concurrently; Current may be called at
// any time. Learn and Forget must return only once the change is durably
// saved, and must leave both the model and the file as they were when
// they fail.
type Backend interface {
	Current() Snapshot
	Learn(ctx context.Context, x []float32, labels []string, opt LearnOptions) (LearnReport, Snapshot, error)
	// Forget removes a class; with x, the class's n×d features, exactly
	// (as if never learned), without, by dropping its column.
	Forget(ctx context.Context, class string, x []float32) (Snapshot, error)
}

// Errors a Backend returns that map to client errors.
var (
	// ErrUnknownClass: Forget of a class the model does not have (404);
	// the core's own sentinel, so either name matches with errors.Is.
	ErrUnknownClass = flycl.ErrUnknownClass
	// ErrNotTrained: Scores before any class was learned (409); the
	// core's own sentinel.
	ErrNotTrained = flycl.ErrNotTrained
	// ErrUnsupported: the backend cannot do this (501).
	ErrUnsupported = errors.New("not supported by this model")
)

// InputError wraps an error caused by the request's content (400).
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }
