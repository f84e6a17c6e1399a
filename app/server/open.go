package server

import (
	"context"
	"log/slog"
	"time"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/format/modelfile"
)

// Served is a model file as a server serves it: a *FileBackend (the
// file's one writer) or a *ReadOnlyBackend (a reader that follows the
// writer). Besides the Backend it gives the model's pipeline and
// configuration, which ResolveExtractor and the command check.
type Served interface {
	Backend
	Pipeline() *modelfile.Pipeline
	SetPipeline(*modelfile.Pipeline) error
	Config() flycl.Config
	Close() error
}

var (
	_ Served = (*FileBackend)(nil)
	_ Served = (*ReadOnlyBackend)(nil)
)

// OpenOptions say how Open opens a model file.
type OpenOptions struct {
	// ReadOnly opens the file as a ReadOnlyBackend: no lock, nothing
	// written, every change refused with ErrReadOnly; File is then not
	// used (a read-only server creates no model).
	ReadOnly bool
	// Poll is how often a read-only server looks for a new version of
	// the file (ReadOnlyOptions.Poll).
	Poll time.Duration
	// File are the writer's options (OpenFileWith).
	File FileOptions
	// Logger is the read-only backend's (nil: slog.Default()); a
	// writer's is File.Logger.
	Logger *slog.Logger
}

// Open opens the model file at path for serving: as its one writer
// (OpenFileWith, holding its lock until Close) or, with o.ReadOnly, as a
// reader that follows the writer (OpenReadOnly). A missing file is
// created only by a writer given File.Create; otherwise it is an error
// wrapping fs.ErrNotExist.
func Open(ctx context.Context, path string, o OpenOptions) (Served, error) {
	if o.ReadOnly {
		be, err := OpenReadOnly(path, ReadOnlyOptions{Poll: o.Poll, Logger: o.Logger})
		if err != nil {
			return nil, err
		}
		return be, nil
	}
	be, err := OpenFileWith(ctx, path, o.File)
	if err != nil {
		return nil, err
	}
	return be, nil
}
