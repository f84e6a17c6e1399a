package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/flycl/flycl/internal/flagbind"

	"github.com/spf13/cobra"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/inbox"
	"github.com/flycl/flycl/app/server"
	"github.com/flycl/flycl/format/modelfile"
	"github.com/flycl/flycl/vision/extract"
)

// serveFlags are the options of flycl serve: server.Options, bound to
// flags, and what only the command knows.
type serveFlags struct {
	o         server.Options
	logFormat string
	create    modelFlags
	wait      waitFlag
}

func (f *serveFlags) addFlags(c *cobra.Command) {
	fs := c.Flags()
	fs.StringVar(&f.o.Model, "model", "", "model file (created at the first learn when absent)")
	fs.StringVar(&f.o.Addr, "addr", "127.0.0.1:8080", "address to listen on")
	fs.StringVar(&f.o.Backbone, "backbone", "", "backbone for images: "+strings.Join(extract.Backbones, ", ")+" (without it only feature vectors are accepted)")
	fs.StringVar(&f.o.Access.TokenFile, "token-file", "", "file holding the bearer token required to learn and forget (created, with a random token, when it does not exist)")
	fs.BoolVar(&f.o.Access.Insecure, "insecure-no-token", false, "listen beyond loopback without --token-file: anyone who can reach the address may then change the model")
	fs.StringSliceVar(&f.o.Config.Hosts, "allowed-host", nil, "without a token, a host name (besides IP addresses and localhost) the server answers to, e.g. the name of a reverse proxy in front of it (repeatable)")
	fs.BoolVar(&f.o.Access.TokenForAll, "auth-all", false, "require the token for every request under /v1 and /metrics, not only changes")
	fs.StringVar(&f.logFormat, "log-format", "text", "log format: text or json")
	fs.String("ort-lib", "", "path to libonnxruntime.so (default $"+envORTLib+", else where scripts/install-deps puts it; see flycl help environment)")
	fs.IntVar(&f.o.Threads, "threads", 0, "ONNX Runtime threads (0: one per CPU)")
	fs.BoolVar(&f.o.Spin, "ort-spin", false, "let ONNX Runtime's idle threads spin (its own default): lower latency of a backbone run alone, but the spinning takes the CPU that concurrent requests and learns need (flycl bench serve --ort-spin measures both)")
	fs.IntVar(&f.o.Dim, "dim", 0, "feature dimension of a new model without --backbone")
	fs.StringVar(&f.o.Precision, "precision", "fp32", "backbone arithmetic of a new model: fp32, or int8 (calibrated on the images of the first learn, on --calib of them spread evenly, as flycl learn --precision int8 calibrates on its data); an existing model keeps its own")
	fs.IntVar(&f.o.Calib, "calib", 64, "int8: images of the first learn for the activation ranges")
	fs.StringVar(&f.o.CalibMethod, "calib-method", defaultCalibMethod, "int8: how the activation ranges are chosen: minmax, mse, percentile or percentile:P")
	fs.Int64Var(&f.o.Config.MaxBodyBytes, "max-body", f.o.Config.MaxBodyBytes, "request body limit in bytes")
	fs.Int64Var(&f.o.Config.MaxDecodeBytes, "max-decode", 0, "bytes of request bodies read and not yet answered, all requests together (503 with Retry-After beyond; 0: twice --max-body)")
	fs.IntVar(&f.o.Config.MaxPixels, "max-pixels", f.o.Config.MaxPixels, "largest image accepted, in pixels (width×height)")
	fs.Int64Var(&f.o.Config.MaxRequestPixels, "max-request-pixels", f.o.Config.MaxRequestPixels, "pixels of all the images of one request together")
	fs.IntVar(&f.o.Config.MaxImages, "max-images", f.o.Config.MaxImages, "images per request")
	fs.Int64Var(&f.o.Config.MaxLearnBytes, "max-learn-bytes", f.o.Config.MaxLearnBytes, "memory one learn may need for its task, in bytes (rows × m, rows × classes, new classes × m; 413 beyond; docs/DEPLOY.md)")
	fs.IntVar(&f.o.Config.QueueLength, "queue", f.o.Config.QueueLength, "learns that may wait behind the running one (503 beyond)")
	fs.Int64Var(&f.o.Config.DecodePixels, "decode-pixels", f.o.Config.DecodePixels, "pixels of the images decoded and not yet through the backbone, all requests together: larger images take turns, an image that fits goes on at once (-1: no bound; docs/DEPLOY.md)")
	fs.DurationVar(&f.o.Config.DecodeWait, "decode-wait", f.o.Config.DecodeWait, "how long a request waits for --decode-pixels to be free before it gets 503 with Retry-After")
	fs.IntVar(&f.o.Config.Extractions, "extractions", f.o.Config.Extractions, "backbone extractions running at once")
	fs.StringVar(&f.o.Config.Unknown, "unknown", "auto", "answer \"unknown\" below a threshold: auto (the model's calibrated one, docs/UNKNOWN.md), off, or a number")
	fs.DurationVar(&f.o.Timeouts.Read, "read-timeout", f.o.Timeouts.Read, "time to read a whole request")
	fs.DurationVar(&f.o.Timeouts.Write, "write-timeout", f.o.Timeouts.Write, "time to handle a request and write its response")
	fs.DurationVar(&f.o.Timeouts.Idle, "idle-timeout", f.o.Timeouts.Idle, "keep-alive idle time")
	fs.DurationVar(&f.o.Timeouts.Shutdown, "shutdown-timeout", f.o.Timeouts.Shutdown, "how long shutdown waits for requests in flight")
	f.create.register(fs)
	f.wait.register(c)
	fs.IntVar(&f.o.Checkpoints.Entries, "checkpoint-every", 16, "make a change durable by appending it to the model's journal (FILE.journal: its features, synced) and rewrite the model file whole only every N changes, or --checkpoint-bytes of journal, and at shutdown (0: rewrite the file at every change); loading replays the journal")
	fs.Int64Var(&f.o.Checkpoints.Bytes, "checkpoint-bytes", 256<<20, "journal size that makes the next change write a checkpoint")
	fs.TextVar(&f.o.LambdaPolicy, "lambda-policy", flycl.LambdaGCV, "learns without a λ: "+flycl.LambdaPolicyHelp)
	fs.StringVar(&f.o.InboxDir, "inbox", "", "keep the inputs the model answered unknown or was unsure of in this folder, for a person to label on the web page or through /v1/inbox (docs/DEPLOY.md, Labelling inbox)")
	fs.IntVar(&f.o.Inbox.MaxItems, "inbox-max-items", inbox.DefaultMaxItems, "inbox: items kept (the oldest are dropped first)")
	fs.Int64Var(&f.o.Inbox.MaxBytes, "inbox-max-bytes", inbox.DefaultMaxBytes, "inbox: bytes of its files (the oldest items are dropped first)")
	fs.Float64Var(&f.o.InboxPolicy.Probability, "inbox-below", inbox.DefaultProbability, "inbox: also keep predictions whose calibrated probability is below this")
	fs.Float64Var(&f.o.InboxPolicy.Margin, "inbox-margin", inbox.DefaultMargin, "inbox: for a model without calibrated probabilities, keep predictions whose two best scores differ by less than this")
	fs.BoolVar(&f.o.ReadOnly, "read-only", false, "serve predictions only: take no lock, write nothing, refuse changes (405), and follow the model file's writer: a new version is served once it has loaded whole")
	fs.DurationVar(&f.o.ReloadEvery, "reload-every", time.Second, "--read-only: how often to look for a new version of the model file (its and its journal's identity: inode, size, modification time)")
}

func serveCmd() *cobra.Command {
	f := serveFlags{o: server.Options{Config: server.DefaultConfig(), Timeouts: server.DefaultTimeouts()}}
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
	perInputDefaults(c)
	c.MarkFlagRequired("model")
	return c
}

// runServe checks the options before --log-format (as serve always has),
// starts the server (server.Start), logs where it serves and serves.
func runServe(ctx context.Context, cmd *cobra.Command, f *serveFlags) error {
	o := f.options(cmd)
	if err := o.Check(); err != nil {
		return serveFlagNames(err)
	}
	log, err := newLogger(f.logFormat)
	if err != nil {
		return err
	}
	o.Logger = log
	r, err := server.Start(ctx, o)
	if err != nil {
		return serveFlagNames(err)
	}
	sn := r.Server.View()
	log.Info("serving", "addr", "http://"+r.Listener.Addr().String(), "model", o.Model, "version", sn.Version(),
		"classes", len(sn.Classes()), "d", sn.Dim(), "backbone", r.Backbone, "auth", r.Auth, "read_only", o.ReadOnly)
	return r.Serve(ctx)
}

// options are the server.Options the flags give: the bound ones, the
// lock, the Fly-CL flags of a new model, where ONNX Runtime is, and the
// fields whose flags were given.
func (f *serveFlags) options(cmd *cobra.Command) server.Options {
	o := f.o
	o.Lock = modelfile.LockOptions{Wait: f.wait.d, Command: fmt.Sprintf("flycl serve on %s", o.Addr)}
	o.ModelConfig = f.create.bound()
	o.Resolver = resolver(cmd.Flags())
	for field, name := range serveFlagNamesOf() {
		if cmd.Flags().Changed(strings.TrimPrefix(name, "--")) {
			o.Given = append(o.Given, field)
		}
	}
	slices.Sort(o.Given)
	return o
}

// serveFlagNamesOf names the flag of each field of server.Options that
// has one (their flag tags: flagbind.Names).
func serveFlagNamesOf() map[string]string { return flagbind.Names(server.Options{}) }

// serveFlagNames makes a *server.OptionError in err name flags.
func serveFlagNames(err error) error { return namedByFlags(err, serveFlagNamesOf()) }
