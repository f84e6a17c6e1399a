package watch

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/flycl/flycl/app/locate"
	"github.com/flycl/flycl/app/store"
	"github.com/flycl/flycl/vision/backbone"
	"github.com/flycl/flycl/vision/extract"
)

// File is a model file opened to classify images (the frames of flycl
// watch, the snapshots of flycl frigate): its classifier and the
// extractor the classifier runs. Close closes the extractor.
type File struct {
	*ModelClassifier
	Extractor *extract.Extractor
}

// Close closes the extractor.
func (f *File) Close() error { return f.Extractor.Close() }

// OpenFile loads the model file at path (store.LoadFile; warn, when not
// nil, is told what loading it noticed and ignored) and opens its
// classifier (NewModelClassifier, o.Name defaulting to path): its
// backbone through r, which loads ONNX Runtime first (locate.Resolver:
// InitORT, OpenBackboneSpec). o.Open, when not nil, opens the backbone
// instead of r.
func OpenFile(ctx context.Context, path string, o ModelOptions, r locate.Resolver, warn func(string)) (*File, error) {
	mf, err := store.LoadFile(path)
	if err != nil {
		return nil, err
	}
	if warn != nil {
		for _, w := range mf.Warnings {
			warn(w)
		}
	}
	if o.Name == "" {
		o.Name = path
	}
	if o.Open == nil {
		o.Open = func(s extract.BackboneSpec) (*backbone.Model, error) {
			if _, err := r.InitORT(); err != nil {
				return nil, err
			}
			bm, err := r.OpenBackboneSpec(s)
			if err != nil {
				return nil, fmt.Errorf("open the model's backbone (give --backbone for another copy of the same weights): %w", err)
			}
			return bm, nil
		}
	}
	if o.Pool == nil {
		o.Pool = mf.Snapshot.State().CalibrationPool
	}
	mc, ex, err := NewModelClassifier(ctx, mf.Snapshot.Predictor(), mf.Pipeline, o)
	if err != nil {
		return nil, err
	}
	return &File{ModelClassifier: mc, Extractor: ex}, nil
}

// Follow returns f's classifier that follows the model file at path:
// with every > 0, a Reloading fed by a FileWatcher that polls path every
// so often (unknown is FileWatcher.Unknown), and stop, which ends the
// watcher and logs its reloads (with args); else f's own classifier, and
// a stop that does nothing.
func (f *File) Follow(ctx context.Context, path string, every time.Duration, unknown string, log *slog.Logger, args ...any) (Classifier, func()) {
	if every <= 0 {
		return f.ModelClassifier, func() {}
	}
	rl := NewReloading(f.ModelClassifier)
	fw := &FileWatcher{Path: path, Interval: every, Into: rl, Unknown: unknown, Pipeline: f.Extractor.Pipeline(), Log: log}
	stopWatcher := fw.Start(ctx)
	return rl, func() {
		n, failed := stopWatcher()
		log.Info("model reloads", append(args, "reloads", n, "failed", failed)...)
	}
}
