package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/deploy"
	"github.com/flycl/flycl/app/inbox"
	"github.com/flycl/flycl/app/server"
	"github.com/flycl/flycl/format/modelfile"
	"github.com/flycl/flycl/vision/backbone"
	"github.com/flycl/flycl/vision/extract"
	"github.com/spf13/cobra"
)

// serveFlags are the options of flycl serve.
type serveFlags struct {
	model, addr, backbone, tokenFile, logFormat string
	authAll, ortSpin, insecureNoToken           bool
	hosts                                       []string
	threads, dim                                int
	precision, calibMethod                      string
	calib                                       int
	limits                                      server.Config
	timeouts                                    server.Timeouts
	create                                      modelFlags
	wait                                        waitFlag
	lambdaPolicy                                flycl.LambdaPolicy
	checkpoints                                 server.Checkpoints
	inboxDir                                    string
	inbox                                       inbox.Options
	inboxPolicy                                 inbox.Policy
	readOnly                                    bool
	reloadEvery                                 time.Duration
}

// writerOnlyFlags are the flags of serve that change or create the model
// file, refused with --read-only.
var writerOnlyFlags = []string{"dim", "precision", "calib", "calib-method", "wait", "checkpoint-every", "checkpoint-bytes",
	"lambda-policy", "inbox", "inbox-max-items", "inbox-max-bytes", "inbox-below", "inbox-margin", "queue"}

func (f *serveFlags) addFlags(c *cobra.Command) {
	fs := c.Flags()
	fs.StringVar(&f.model, "model", "", "model file (created at the first learn when absent)")
	fs.StringVar(&f.addr, "addr", "127.0.0.1:8080", "address to listen on")
	fs.StringVar(&f.backbone, "backbone", "", "backbone for images: "+strings.Join(extract.Backbones, ", ")+" (without it only feature vectors are accepted)")
	fs.StringVar(&f.tokenFile, "token-file", "", "file holding the bearer token required to learn and forget (created, with a random token, when it does not exist)")
	fs.BoolVar(&f.insecureNoToken, "insecure-no-token", false, "listen beyond loopback without --token-file: anyone who can reach the address may then change the model")
	fs.StringSliceVar(&f.hosts, "allowed-host", nil, "without a token, a host name (besides IP addresses and localhost) the server answers to, e.g. the name of a reverse proxy in front of it (repeatable)")
	fs.BoolVar(&f.authAll, "auth-all", false, "require the token for every request under /v1 and /metrics, not only changes")
	fs.StringVar(&f.logFormat, "log-format", "text", "log format: text or json")
	fs.String("ort-lib", "", "path to libonnxruntime.so (default $"+envORTLib+", else where scripts/install-deps puts it; see flycl help environment)")
	fs.IntVar(&f.threads, "threads", 0, "ONNX Runtime threads (0: one per CPU)")
	fs.BoolVar(&f.ortSpin, "ort-spin", false, "let ONNX Runtime's idle threads spin (its own default): lower latency of a backbone run alone, but the spinning takes the CPU that concurrent requests and learns need (flycl bench serve --ort-spin measures both)")
	fs.IntVar(&f.dim, "dim", 0, "feature dimension of a new model without --backbone")
	fs.StringVar(&f.precision, "precision", "fp32", "backbone arithmetic of a new model: fp32, or int8 (calibrated on the images of the first learn, on --calib of them spread evenly, as flycl learn --precision int8 calibrates on its data); an existing model keeps its own")
	fs.IntVar(&f.calib, "calib", 64, "int8: images of the first learn for the activation ranges")
	fs.StringVar(&f.calibMethod, "calib-method", defaultCalibMethod, "int8: how the activation ranges are chosen: minmax, mse, percentile or percentile:P")
	fs.Int64Var(&f.limits.MaxBodyBytes, "max-body", f.limits.MaxBodyBytes, "request body limit in bytes")
	fs.Int64Var(&f.limits.MaxDecodeBytes, "max-decode", 0, "bytes of request bodies read and not yet answered, all requests together (503 with Retry-After beyond; 0: twice --max-body)")
	fs.IntVar(&f.limits.MaxPixels, "max-pixels", f.limits.MaxPixels, "largest image accepted, in pixels (width×height)")
	fs.Int64Var(&f.limits.MaxRequestPixels, "max-request-pixels", f.limits.MaxRequestPixels, "pixels of all the images of one request together")
	fs.IntVar(&f.limits.MaxImages, "max-images", f.limits.MaxImages, "images per request")
	fs.IntVar(&f.limits.QueueLength, "queue", f.limits.QueueLength, "learns that may wait behind the running one (503 beyond)")
	fs.Int64Var(&f.limits.DecodePixels, "decode-pixels", f.limits.DecodePixels, "pixels of the images decoded and not yet through the backbone, all requests together: larger images take turns, an image that fits goes on at once (-1: no bound; docs/DEPLOY.md)")
	fs.DurationVar(&f.limits.DecodeWait, "decode-wait", f.limits.DecodeWait, "how long a request waits for --decode-pixels to be free before it gets 503 with Retry-After")
	fs.IntVar(&f.limits.Extractions, "extractions", f.limits.Extractions, "backbone extractions running at once")
	fs.StringVar(&f.limits.Unknown, "unknown", "auto", "answer \"unknown\" below a threshold: auto (the model's calibrated one, docs/UNKNOWN.md), off, or a number")
	fs.DurationVar(&f.timeouts.Read, "read-timeout", f.timeouts.Read, "time to read a whole request")
	fs.DurationVar(&f.timeouts.Write, "write-timeout", f.timeouts.Write, "time to handle a request and write its response")
	fs.DurationVar(&f.timeouts.Idle, "idle-timeout", f.timeouts.Idle, "keep-alive idle time")
	fs.DurationVar(&f.timeouts.Shutdown, "shutdown-timeout", f.timeouts.Shutdown, "how long shutdown waits for requests in flight")
	f.create.register(fs)
	f.wait.register(c)
	fs.IntVar(&f.checkpoints.Entries, "checkpoint-every", 16, "make a change durable by appending it to the model's journal (FILE.journal: its features, synced) and rewrite the model file whole only every N changes, or --checkpoint-bytes of journal, and at shutdown (0: rewrite the file at every change); loading replays the journal")
	fs.Int64Var(&f.checkpoints.Bytes, "checkpoint-bytes", 256<<20, "journal size that makes the next change write a checkpoint")
	fs.TextVar(&f.lambdaPolicy, "lambda-policy", flycl.LambdaGCV, "learns without a λ: gcv chooses it on every learn; keep keeps the model's λ once it has one (a small learn then never refactors)")
	fs.StringVar(&f.inboxDir, "inbox", "", "keep the inputs the model answered unknown or was unsure of in this folder, for a person to label on the web page or through /v1/inbox (docs/DEPLOY.md, Labelling inbox)")
	fs.IntVar(&f.inbox.MaxItems, "inbox-max-items", inbox.DefaultMaxItems, "inbox: items kept (the oldest are dropped first)")
	fs.Int64Var(&f.inbox.MaxBytes, "inbox-max-bytes", inbox.DefaultMaxBytes, "inbox: bytes of its files (the oldest items are dropped first)")
	fs.Float64Var(&f.inboxPolicy.Probability, "inbox-below", inbox.DefaultProbability, "inbox: also keep predictions whose calibrated probability is below this")
	fs.Float64Var(&f.inboxPolicy.Margin, "inbox-margin", inbox.DefaultMargin, "inbox: for a model without calibrated probabilities, keep predictions whose two best scores differ by less than this")
	fs.BoolVar(&f.readOnly, "read-only", false, "serve predictions only: take no lock, write nothing, refuse changes (405), and follow the model file's writer: a new version is served once it has loaded whole")
	fs.DurationVar(&f.reloadEvery, "reload-every", time.Second, "--read-only: how often to look for a new version of the model file (its and its journal's identity: inode, size, modification time)")
}

func serveCmd() *cobra.Command {
	f := serveFlags{limits: server.DefaultConfig(), timeouts: server.DefaultTimeouts()}
	c := &cobra.Command{
		Use:   "serve --model FILE [--addr HOST:PORT] [--backbone B] [--token-file F]",
		Short: "Serve a model over HTTP: predict, learn and forget while serving, with a web page and Prometheus metrics",
		Long: `Serves the model file over HTTP (API under /v1, metrics at /metrics, a web
page at /). Predictions never wait for a learn; every learn is saved to the
model file (atomically) before it is acknowledged. When the file does not
exist it is created at the first learn, with --m/--p/--k/... and the
feature dimension of --backbone (or --dim); with --precision int8 its
backbone is quantized to int8, calibrated on the images of the first learn
(--calib of them, spread evenly, as flycl learn --precision int8 does on its
data), so that first learn must send images. An existing model keeps the
backbone output, transform and precision its file records.

The server is the model file's one writer while it runs: it holds the file's
lock, so flycl learn, forget, merge or a second serve on the same file fail
at once naming it (or wait, with --wait); predict, info and classes read the
file without a lock. A file replaced behind the server (by a copy or a
restore) is noticed: the server then refuses changes, says so in the log
and in /v1/healthz (503, "read-only"), and goes on answering predictions.

The bearer token for learn and forget is read from --token-file (never from
a flag); when that file does not exist, serve creates it (32 random bytes in
hex, readable by you only) and logs where. --auth-all requires the token for
every request under /v1 and /metrics (the web page itself is served without
it). Without a token, anyone who can reach the address may change the model:
serve warns, and refuses to listen beyond loopback unless --insecure-no-token
says you mean it. Whatever the token, a browser's change that does not come
from the server's own page (another site's form or script) is refused, and
without a token only requests for an IP address, localhost or an
--allowed-host name are answered (a page of another name pointed at this
address cannot use it). SIGTERM or Ctrl-C stops
accepting connections, finishes the requests in flight and exits.

With --read-only the server only answers predictions (and the model,
classes and history): it takes no lock and writes nothing, so it starts on
a file it may not write and beside the file's writer (a flycl serve,
learn, forget or merge). It loads the file as predict does and looks for
a new version every --reload-every; a new version replaces the one served
atomically once it has loaded whole (a file being written, torn or damaged
never does; /v1/healthz says why). Changes are refused with 405. Many
read-only servers can answer predictions from one model file while one
writer learns.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return runServe(ctx, cmd, &f)
		},
	}
	f.addFlags(c)
	c.MarkFlagRequired("model")
	return c
}

// check refuses flag values the server would otherwise replace by its
// defaults (a limit of 0) or could not honour, quoting the value.
func (f *serveFlags) check() error {
	for _, c := range []struct {
		flag string
		v    int64
		min  int64
	}{
		{"max-body", f.limits.MaxBodyBytes, 1}, {"max-pixels", int64(f.limits.MaxPixels), 1},
		{"max-request-pixels", f.limits.MaxRequestPixels, 1}, {"max-images", int64(f.limits.MaxImages), 1},
		{"queue", int64(f.limits.QueueLength), 1}, {"extractions", int64(f.limits.Extractions), 1},
		{"dim", int64(f.dim), 0}, {"threads", int64(f.threads), 0}, {"calib", int64(f.calib), 1},
	} {
		if c.v < c.min {
			return fmt.Errorf("--%s %d: must be at least %d", c.flag, c.v, c.min)
		}
	}
	for _, c := range []struct {
		flag string
		v    time.Duration
	}{
		{"read-timeout", f.timeouts.Read}, {"write-timeout", f.timeouts.Write},
		{"idle-timeout", f.timeouts.Idle}, {"shutdown-timeout", f.timeouts.Shutdown},
		{"decode-wait", f.limits.DecodeWait},
	} {
		if c.v <= 0 {
			return fmt.Errorf("--%s %v: must be positive", c.flag, c.v)
		}
	}
	if d := f.limits.MaxDecodeBytes; d < 0 || (d > 0 && d < f.limits.MaxBodyBytes) {
		return fmt.Errorf("--max-decode %d: must be 0 (twice --max-body) or at least --max-body %d, or a request of the largest size could never be read", d, f.limits.MaxBodyBytes)
	}
	if f.limits.DecodePixels == 0 || f.limits.DecodePixels < -1 {
		return fmt.Errorf("--decode-pixels %d: give a positive budget, or -1 for none", f.limits.DecodePixels)
	}
	if f.limits.DecodePixels == -1 {
		f.limits.DecodePixels = math.MaxInt64 // no bound
	}
	if int64(f.limits.MaxPixels) > f.limits.MaxRequestPixels {
		return fmt.Errorf("--max-pixels %d is more than --max-request-pixels %d", f.limits.MaxPixels, f.limits.MaxRequestPixels)
	}
	if _, err := backbone.ParsePrecision(f.precision); err != nil {
		return fmt.Errorf("--precision: %w", err)
	}
	if err := checkInboxFlags(f.inbox, f.inboxPolicy); err != nil {
		return err
	}
	if _, err := backbone.ParseCalibMethod(f.calibMethod); err != nil {
		return fmt.Errorf("--calib-method: %w", err)
	}
	return nil
}

func runServe(ctx context.Context, cmd *cobra.Command, f *serveFlags) error {
	if err := f.check(); err != nil {
		return err
	}
	log, err := newLogger(f.logFormat)
	if err != nil {
		return err
	}
	cfg := f.limits
	cfg.Logger = log
	cfg.TokenForAll = f.authAll
	cfg.Hosts = f.hosts
	access := server.Access{TokenFile: f.tokenFile, TokenForAll: f.authAll, Insecure: f.insecureNoToken, ReadOnly: f.readOnly}
	tok, err := access.Token(ctx, f.addr, log)
	if err != nil {
		return err
	}
	cfg.Token = tok
	dim := f.dim
	var bb *backbone.Model
	if f.backbone != "" {
		if bb, err = openBackbone(f.backbone); err != nil {
			return err
		}
		dim = bb.Dim()
	}
	mcfg, err := f.create.newConfig(dim, bb != nil) // images: deploy.DefaultImageConfig
	if err != nil {
		return err
	}
	var create func() (*flycl.Model, error)
	if dim > 0 {
		create = func() (*flycl.Model, error) { return flycl.New(mcfg, dim) }
	}
	_, statErr := os.Stat(f.model)
	be, err := openServed(ctx, cmd, f, create, log)
	if err != nil {
		return err
	}
	defer be.Close()
	if statErr == nil {
		// An existing model: its configuration is fixed, as for learn.
		if d := be.Current().Dim(); cmd.Flags().Changed("dim") && f.dim != d {
			return fmt.Errorf("--dim %d, but the model %s has d=%d: a model's configuration is fixed when it is created", f.dim, f.model, d)
		}
		if err := checkConfigOf(cmd, &f.create, be.Config()); err != nil {
			return fmt.Errorf("%s: %w", f.model, err)
		}
	}
	spec := f.backbone
	if bb != nil || be.Pipeline() != nil {
		ex, err := f.extractor(ctx, cmd, be, bb)
		if err != nil {
			return err
		}
		defer ex.Close()
		cfg.Extractor, spec = ex, ex.Spec
	} else if cmd.Flags().Changed("precision") || cmd.Flags().Changed("calib") || cmd.Flags().Changed("calib-method") {
		return fmt.Errorf("--precision, --calib and --calib-method apply to images through a backbone: give --backbone")
	}
	cfg.Backend = be
	if f.inboxDir != "" {
		ib, err := openInbox(f.inboxDir, f.inbox, log)
		if err != nil {
			return err
		}
		defer ib.Close()
		cfg.Inbox, cfg.InboxPolicy = ib, f.inboxPolicy
	} else if err := inboxOnly(cmd.Flags().Changed, "inbox-max-items", "inbox-max-bytes", "inbox-below", "inbox-margin"); err != nil {
		return err
	}
	srv, err := server.New(cfg)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		srv.Close()
		return err
	}
	if err := access.Listening(ln, f.addr, cfg.Token, log); err != nil {
		ln.Close()
		srv.Close()
		return err
	}
	sn := srv.View()
	log.Info("serving", "addr", "http://"+ln.Addr().String(), "model", f.model, "version", sn.Version(),
		"classes", len(sn.Classes()), "d", sn.Dim(), "backbone", spec, "auth", cfg.Token != "", "read_only", f.readOnly)
	return srv.Serve(ctx, ln, f.timeouts)
}

// extractor resolves the served model's extractor (server.ResolveExtractor:
// the model file's pipeline fixes the backbone, a new model's int8 one is
// calibrated on the first learn) from --backbone (bb, opened already) or
// the backbone the model file names, and compiles it.
func (f *serveFlags) extractor(ctx context.Context, cmd *cobra.Command, be server.Served, bb *backbone.Model) (*extract.Extractor, error) {
	lib, err := ortLibrary(cmd.Flags())
	if err != nil {
		return nil, err
	}
	if err := backbone.Init(lib); err != nil {
		return nil, err
	}
	// (--precision and --calib-method are checked already)
	prec, _ := backbone.ParsePrecision(f.precision)
	method, _ := backbone.ParseCalibMethod(f.calibMethod)
	var openErr error // returned as it is
	o := deploy.ExtractorOptions{Spec: f.backbone, Calib: extract.CalibOptions{N: f.calib, Method: method, Threads: f.threads},
		CalibGiven: cmd.Flags().Changed("calib") || cmd.Flags().Changed("calib-method"),
		Open: func(s extract.BackboneSpec) (*backbone.Model, error) {
			if bb != nil {
				return bb, nil
			}
			if bb, openErr = openBackboneSpec(s); openErr != nil {
				openErr = fmt.Errorf("open the model's backbone (give --backbone to use another copy of the same weights): %w", openErr)
			}
			return bb, openErr
		}}
	if cmd.Flags().Changed("precision") || be.Pipeline() == nil {
		o.Precision = prec // a model's pipeline fixes its own
	}
	ex, err := server.ResolveExtractor(ctx, be, o)
	var refused *server.PipelineError
	switch {
	case openErr != nil:
		return nil, openErr
	case errors.As(err, &refused):
		return nil, refused.Err
	case errors.Is(err, deploy.ErrPrecision):
		return nil, fmt.Errorf("--precision %s: %s: %w", prec, f.model, err)
	case errors.Is(err, server.ErrInt8Learned):
		return nil, fmt.Errorf("--precision int8: the model %s learned from feature vectors without a backbone; int8 is for a new model", f.model)
	case errors.Is(err, deploy.ErrCalibUnused):
		return nil, fmt.Errorf("--calib and --calib-method calibrate the backbone of a new model served with --precision int8; the model %s is served with %s features", f.model, deploy.PipelinePrecision(be.Pipeline()))
	case err != nil:
		return nil, fmt.Errorf("%s: %w", f.model, err)
	}
	// idle threads sleep unless --ort-spin (measured quietly by flycl bench
	// serve: spinning costs about 7 ms of CPU per image and does not lower
	// the served predict's latency)
	ex.BatchSize, ex.Threads, ex.Spin = server.ExtractBatch, f.threads, f.ortSpin
	if err := ex.Open(); err != nil {
		return nil, err
	}
	return ex, nil
}

// openServed opens the model file as its writer or, with --read-only, as
// a reader that follows it.
func openServed(ctx context.Context, cmd *cobra.Command, f *serveFlags, create func() (*flycl.Model, error), log *slog.Logger) (server.Served, error) {
	if f.readOnly {
		for _, name := range writerOnlyFlags {
			if cmd.Flags().Changed(name) {
				return nil, flycl.Input(fmt.Errorf("--%s: a --read-only server takes no changes and creates no model", name))
			}
		}
		if f.reloadEvery <= 0 {
			return nil, flycl.Input(fmt.Errorf("--reload-every %v: must be positive", f.reloadEvery))
		}
	}
	if !f.readOnly && cmd.Flags().Changed("reload-every") {
		return nil, flycl.Input(fmt.Errorf("--reload-every applies to a --read-only server"))
	}
	// The server is the model file's one writer while it runs: it holds
	// the file's lock (a learn, forget, merge or second serve on it fails,
	// or waits with --wait, until the server stops).
	be, err := server.Open(ctx, f.model, server.OpenOptions{ReadOnly: f.readOnly, Poll: f.reloadEvery, Logger: log,
		File: server.FileOptions{Create: create, Lock: modelfile.LockOptions{Wait: f.wait.d, Command: fmt.Sprintf("flycl serve on %s", f.addr)},
			LambdaPolicy: f.lambdaPolicy, Checkpoints: f.checkpoints}})
	switch {
	case err != nil && f.readOnly:
		return nil, fmt.Errorf("--read-only: %w", err)
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%w (give --backbone or --dim to create a new model)", err)
	}
	return be, err
}
