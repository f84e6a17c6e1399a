package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math"
	"net"
	"os"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/inbox"
	"github.com/flycl/flycl/app/intake"
	"github.com/flycl/flycl/vision/backbone"
	"github.com/flycl/flycl/vision/extract"
)

// Running is a model served as Start assembled it: opened, listening,
// not yet serving. Serve serves it; Close (not needed after Serve) closes
// it unserved.
type Running struct {
	Server   *Server
	Listener net.Listener
	// Backbone is the spec of the backbone images go through ("": feature
	// vectors only).
	Backbone string
	// Auth says a bearer token guards changes.
	Auth bool

	timeouts Timeouts
	closers  []func() error // in the order opened
}

// Serve serves until ctx is cancelled (Server.Serve, with Options'
// Timeouts), then closes the server, the extractor, the inbox and the
// model file.
func (r *Running) Serve(ctx context.Context) error {
	defer r.closeAll()
	return r.Server.Serve(ctx, r.Listener, r.timeouts)
}

// Close closes a server that was not served: its listener, the server,
// and what it served.
func (r *Running) Close() error {
	r.Listener.Close()
	r.Server.Close()
	r.closeAll()
	return nil
}

func (r *Running) closeAll() {
	for i := len(r.closers) - 1; i >= 0; i-- {
		r.closers[i]()
	}
	r.closers = nil
}

// Start starts the model o names for serving, as flycl serve does, and
// listens on o.Addr:
//
//   - it checks o (Check) and the bearer token (Access.Token: read or
//     created, or who may listen without one);
//   - it opens o.Backbone, whose dimension is that of a new model, and
//     opens the model file (Open) as its writer, creating a missing file
//     at the first learn when a dimension is known (ModelConfig.NewConfig),
//     or, after CheckReadOnly, as a read-only server;
//   - it checks an existing model against the options given (Dim,
//     ModelConfig.AgreeModel);
//   - it resolves the extractor (ResolveExtractor: the model file's
//     pipeline fixes the backbone; a new model's int8 one is calibrated
//     on the first learn), through o.Resolver, and opens it;
//   - it opens the inbox, makes the Server (New), listens, and checks the
//     address bound (Access.Listening).
//
// What it refuses of o is an *OptionError; errors of ModelConfig and
// Access are theirs. On an error, what was opened is closed.
func Start(ctx context.Context, o Options) (_ *Running, err error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	cfg := o.Config
	if cfg.DecodePixels == -1 {
		cfg.DecodePixels = math.MaxInt64 // no bound
	}
	cfg.Logger, cfg.TokenForAll = log, o.Access.TokenForAll
	access := o.Access
	access.ReadOnly = o.ReadOnly
	if cfg.Token, err = access.Token(ctx, o.Addr, log); err != nil {
		return nil, err
	}
	dim := o.Dim
	var bb *backbone.Model
	if o.Backbone != "" {
		if bb, err = o.Resolver.OpenBackbone(o.Backbone); err != nil {
			return nil, err
		}
		dim = bb.Dim()
	}
	mcfg := flycl.DefaultConfig()
	if o.ModelConfig != nil {
		if mcfg, err = o.ModelConfig.NewConfig(dim, bb != nil); err != nil { // images: deploy.DefaultImageConfig
			return nil, err
		}
	}
	var create func() (*flycl.Model, error)
	if dim > 0 {
		create = func() (*flycl.Model, error) { return flycl.New(mcfg, dim) }
	}
	_, statErr := os.Stat(o.Model)
	be, err := o.open(ctx, create, log)
	if err != nil {
		return nil, err
	}
	r := &Running{Backbone: o.Backbone, Auth: cfg.Token != "", timeouts: o.Timeouts, closers: []func() error{be.Close}}
	defer func() {
		if err != nil {
			r.closeAll()
		}
	}()
	if statErr == nil {
		// An existing model: its configuration is fixed, as for learn.
		if d := be.Current().Dim(); o.given("Dim") && o.Dim != d {
			return nil, optionErr(&OptionError{Field: "Dim", Value: o.Dim, Rule: ErrModelFixed, OtherValue: d}, o.Model)
		}
		if o.ModelConfig != nil {
			if err := o.ModelConfig.AgreeModel(be.Config()); err != nil {
				return nil, fmt.Errorf("%s: %w", o.Model, err)
			}
		}
	}
	if bb != nil || be.Pipeline() != nil {
		ex, err := o.extractor(ctx, be, bb)
		if err != nil {
			return nil, err
		}
		r.closers = append(r.closers, ex.Close)
		cfg.Extractor, r.Backbone = ex, ex.Spec
	} else if f := o.firstGiven("Precision", "Calib", "CalibMethod"); f != "" {
		return nil, optionErr(&OptionError{Field: f, Rule: ErrNotApplicable, Other: "Backbone"}, "")
	}
	cfg.Backend = be
	if o.InboxDir != "" {
		ib, err := o.openInbox(log)
		if err != nil {
			return nil, err
		}
		r.closers = append(r.closers, ib.Close)
		cfg.Inbox, cfg.InboxPolicy = ib, o.InboxPolicy
	} else if f := o.firstGiven("Inbox.MaxItems", "Inbox.MaxBytes", "InboxPolicy.Probability", "InboxPolicy.Margin"); f != "" {
		return nil, optionErr(&OptionError{Field: f, Rule: ErrNotApplicable, Other: "InboxDir"}, "")
	}
	if r.Server, err = New(cfg); err != nil {
		return nil, err
	}
	if r.Listener, err = net.Listen("tcp", o.Addr); err != nil {
		r.Server.Close()
		return nil, err
	}
	if err = access.Listening(r.Listener, o.Addr, cfg.Token, log); err != nil {
		r.Listener.Close()
		r.Server.Close()
		return nil, err
	}
	return r, nil
}

// open opens the model file as its writer or, with ReadOnly, as a reader
// that follows it (Open), after CheckReadOnly.
func (o Options) open(ctx context.Context, create func() (*flycl.Model, error), log *slog.Logger) (Served, error) {
	if err := o.CheckReadOnly(); err != nil {
		return nil, err
	}
	// The server is the model file's one writer while it runs: it holds
	// the file's lock (a learn, forget, merge or second serve on it fails,
	// or waits with Lock.Wait, until the server stops). The writer logs
	// to slog.Default(), as flycl serve always has (FileOptions.Logger).
	be, err := Open(ctx, o.Model, OpenOptions{ReadOnly: o.ReadOnly, Poll: o.ReloadEvery, Logger: log,
		File: FileOptions{Create: create, Lock: o.Lock, LambdaPolicy: o.LambdaPolicy, Checkpoints: o.Checkpoints}})
	switch {
	case err != nil && o.ReadOnly:
		return nil, optionErr(&OptionError{Field: "ReadOnly", Err: err}, "")
	case errors.Is(err, fs.ErrNotExist):
		return nil, optionErr(&OptionError{Field: "Model", Value: o.Model, Rule: ErrNoModel, Err: err}, "")
	}
	return be, err
}

// extractor resolves the served model's extractor (ResolveExtractor) from
// Backbone (bb, opened already) or the backbone the model file names,
// opened through Resolver, and opens it.
func (o Options) extractor(ctx context.Context, be Served, bb *backbone.Model) (*extract.Extractor, error) {
	if _, err := o.Resolver.InitORT(); err != nil {
		return nil, err
	}
	// (Precision and CalibMethod are checked already)
	prec, _ := backbone.ParsePrecision(o.Precision)
	method, _ := backbone.ParseCalibMethod(o.CalibMethod)
	var openErr error // returned as it is
	eo := intake.ExtractorOptions{Spec: o.Backbone, Calib: extract.CalibOptions{N: o.Calib, Method: method, Threads: o.Threads},
		CalibGiven: o.given("Calib") || o.given("CalibMethod"),
		Open: func(s extract.BackboneSpec) (*backbone.Model, error) {
			if bb != nil {
				return bb, nil
			}
			var err error
			if bb, err = o.Resolver.OpenBackboneSpec(s); err != nil {
				openErr = optionErr(&OptionError{Field: "Backbone", Err: err}, "")
				return nil, openErr
			}
			return bb, nil
		}}
	if o.given("Precision") || be.Pipeline() == nil {
		eo.Precision = prec // a model's pipeline fixes its own
	}
	ex, err := ResolveExtractor(ctx, be, eo)
	var refused *PipelineError
	switch {
	case openErr != nil:
		return nil, openErr
	case errors.As(err, &refused):
		return nil, refused.Err
	case errors.Is(err, intake.ErrPrecision), errors.Is(err, ErrInt8Learned):
		return nil, optionErr(&OptionError{Field: "Precision", Value: prec, Err: err}, o.Model)
	case errors.Is(err, intake.ErrCalibUnused):
		return nil, optionErr(&OptionError{Field: o.firstGiven("Calib", "CalibMethod"), OtherValue: intake.PipelinePrecision(be.Pipeline()), Err: err}, o.Model)
	case err != nil:
		return nil, fmt.Errorf("%s: %w", o.Model, err)
	}
	// idle threads sleep unless Spin (measured quietly by flycl-lab bench
	// serve: spinning costs about 7 ms of CPU per image and does not lower
	// the served predict's latency)
	ex.BatchSize, ex.Threads, ex.Spin = ExtractBatch, o.Threads, o.Spin
	if err := ex.Open(); err != nil {
		return nil, err
	}
	return ex, nil
}

// openInbox opens the inbox at InboxDir and logs what it holds.
func (o Options) openInbox(log *slog.Logger) (*inbox.Inbox, error) {
	opts := o.Inbox
	opts.Logger = log
	ib, err := inbox.Open(o.InboxDir, opts)
	if err != nil {
		return nil, optionErr(&OptionError{Field: "InboxDir", Err: err}, "")
	}
	n, b := ib.Len()
	log.Info("labelling inbox", "dir", o.InboxDir, "items", n, "bytes", b, "max_items", opts.MaxItems, "max_bytes", opts.MaxBytes)
	return ib, nil
}
