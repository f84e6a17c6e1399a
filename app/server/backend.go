package server

import (
	"context"
	"errors"
	"time"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/deploy"
)

// ModelView is an immutable view of a model: everything the read-only
// endpoints need. Its methods are safe for concurrent use, and a snapshot
// never changes after it is published; learning publishes a new one.
type ModelView interface {
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

// LearnReport describes one learning step done by a Backend.
type LearnReport struct {
	Samples    int
	NewClasses []string
	Lambda     float64
	Steps      int // solves: 1, or one per mini-batch online
	// Warnings say what succeeded but not as asked: a λ the solve had to
	// raise (deploy.LearnResult.Warnings).
	Warnings []string
	// Stages holds the wall time of each stage of learning, and Save that
	// of saving the change.
	Stages flycl.Stages
	Save   time.Duration
}

// Backend owns the model and its file. The server calls Learn and Forget
// from one goroutine only, never concurrently; Current may be called at
// any time. Learn and Forget must return only once the change is durably
// saved, and must leave both the model and the file as they were when
// they fail.
//
// The options are checked already (deploy.LearnOptions.Check).
type Backend interface {
	Current() ModelView
	Learn(ctx context.Context, x []float32, labels []string, opt deploy.LearnOptions) (LearnReport, ModelView, error)
	// Forget removes a class; with x, the class's n×d features, exactly
	// (as if never learned), without, by dropping its column.
	Forget(ctx context.Context, class string, x []float32) (ModelView, error)
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
