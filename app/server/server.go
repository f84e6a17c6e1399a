package server

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/flycl/flycl/app/inbox"
	"github.com/flycl/flycl/app/teach"
	"github.com/flycl/flycl/vision/extract"
	"github.com/flycl/flycl/vision/imageio"
)

// Config configures a Server. Zero fields take the defaults of
// DefaultConfig.
type Config struct {
	Backend Backend // the model (required)
	// Extractor is the backbone (*extract.Extractor; one that waits for
	// its calibration is calibrated on the first learn); nil: only
	// feature vectors are accepted.
	Extractor extract.Interface

	// Token, when not empty, is the bearer token required for every
	// request that changes the model (learn, forget), and for every
	// /v1 request and /metrics when TokenForAll is set (the web page at
	// / is served without it).
	Token       string
	TokenForAll bool

	// Hosts are the host names, besides IP addresses, localhost and
	// names under .localhost, that a server without a Token answers to;
	// a request for another Host is refused (403). A web page whose
	// name is pointed at this server's address (DNS rebinding) is
	// same-origin to itself: only its Host header tells it apart. With a
	// Token every name is served.
	Hosts []string

	// MaxDecodeBytes bounds the bytes of request bodies read and not yet
	// answered, all requests together (default 2×MaxBodyBytes): the
	// bytes a request reads count until it is answered, and a read
	// beyond the budget fails the request with 503 and Retry-After
	// (giving its bytes back to the others). A body is kept at most about
	// twice its size in memory (feature values as float32, decoded
	// images), so this bounds the memory of requests whatever their
	// number; a slow upload holds only what it has sent.
	MaxDecodeBytes int64 `flag:"max-decode"`

	MaxBodyBytes int64 `flag:"max-body"`
	MaxPixels    int   `flag:"max-pixels"`
	// MaxRequestPixels bounds the pixels of all the images of one
	// request together (default 1 gigapixel): the decoding work a
	// request may ask for.
	MaxRequestPixels int64 `flag:"max-request-pixels"`
	// DecodePixels bounds the pixels of the images decoded and not yet
	// through the backbone, all requests together (default
	// imageio.DefaultBudgetPixels, 64 megapixels; math.MaxInt64: no
	// bound).
	// An image is admitted with the width × height of its header before
	// a pixel is decoded, so many images just under MaxPixels (or a tiny
	// file that decompresses to many pixels) take turns instead of adding
	// up; an image that fits the pixels free goes on at once, even while a
	// larger one waits. An image larger than DecodePixels is decoded
	// alone.
	DecodePixels int64 `flag:"decode-pixels"`
	// DecodeWait is how long a request waits for DecodePixels to be free
	// before it is refused with 503 and Retry-After (default 30 s).
	DecodeWait time.Duration `flag:"decode-wait"`
	MaxImages  int           `flag:"max-images"`
	MaxRows    int           // feature vectors per request (default 100000)
	// MaxLearnBytes bounds the memory one learn may need for its task
	// (flycl.Model.LearnBytes: rows × m, rows × classes, new classes × m;
	// an online learn counts one batch): a learn over it is refused with
	// 413 before anything is allocated for it (default 512 MiB).
	MaxLearnBytes int64 `flag:"max-learn-bytes"`
	MaxTop        int   // largest top-N a predict may ask for (default 100)
	QueueLength   int   `flag:"queue"`
	Extractions   int   `flag:"extractions"`

	// Unknown says when predict answers "unknown": "auto" or "" (the
	// model's calibrated rejection), "off", or a threshold on the
	// calibrated score (reject.ParseRule).
	Unknown string `flag:"unknown"`

	// Inbox, when not nil, keeps the predictions InboxPolicy keeps (rejected
	// as unknown, or least sure) for a person to label: GET /v1/inbox,
	// POST /v1/inbox/learn and /v1/inbox/discard (app/server/inbox.go). Its
	// endpoints need the Token, when there is one, for reading too: the
	// inbox holds the inputs themselves. The caller closes it after the
	// Server.
	Inbox       *inbox.Inbox
	InboxPolicy inbox.Policy

	Logger *slog.Logger // default: discard
}

// DefaultConfig returns the default limits.
func DefaultConfig() Config {
	return Config{MaxBodyBytes: 64 << 20, MaxDecodeBytes: 2 * 64 << 20, MaxPixels: 40_000_000, MaxRequestPixels: 1_000_000_000, DecodePixels: imageio.DefaultBudgetPixels, DecodeWait: 30 * time.Second, MaxImages: 256, MaxRows: 100_000, MaxLearnBytes: 512 << 20, MaxTop: 100,
		QueueLength: 8, Extractions: 2}
}

func (c Config) withDefaults() Config {
	d := DefaultConfig()
	orDefault(&c.MaxBodyBytes, d.MaxBodyBytes)
	orDefault(&c.MaxDecodeBytes, 2*c.MaxBodyBytes)
	orDefault(&c.MaxPixels, d.MaxPixels)
	orDefault(&c.MaxRequestPixels, d.MaxRequestPixels)
	orDefault(&c.DecodePixels, d.DecodePixels)
	orDefault(&c.DecodeWait, d.DecodeWait)
	orDefault(&c.MaxImages, d.MaxImages)
	orDefault(&c.MaxRows, d.MaxRows)
	orDefault(&c.MaxLearnBytes, d.MaxLearnBytes)
	orDefault(&c.MaxTop, d.MaxTop)
	orDefault(&c.QueueLength, d.QueueLength)
	orDefault(&c.Extractions, d.Extractions)
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return c
}

// orDefault sets *v to d when *v is not positive.
func orDefault[T int | int64 | time.Duration](v *T, d T) {
	if *v <= 0 {
		*v = d
	}
}

// Server serves one model over HTTP. Predictions read the current
// immutable snapshot and never wait for a learn; learns and forgets run
// one at a time on a goroutine of their own, in arrival order, and publish
// a new snapshot atomically once the model file is saved.
type Server struct {
	cfg     Config
	log     *slog.Logger
	cop     *http.CrossOriginProtection
	bodies  budget // bytes of request bodies being read (MaxDecodeBytes)
	met     *metrics
	snap    atomic.Pointer[snapHolder]
	extract chan struct{}   // extraction slots
	pixels  *imageio.Budget // pixels decoded at once (DecodePixels); nil: no bound
	pending atomic.Int64    // learns queued or running
	jobs    chan *job
	scoreq  chan *scoreReq // predictions waiting to be scored in a batch
	// scorersGone is closed when every scorer goroutine has stopped.
	scorersGone chan struct{}
	stop        chan struct{}
	done        chan struct{}
	once        sync.Once
	// mu orders submit against Close: once closed is set (under mu, with
	// stop closed) no job enters the queue, so the learner's final drain
	// sees every job that did.
	mu     sync.Mutex
	closed bool
	mux    *http.ServeMux
	// the inbox's keeper (app/server/inbox.go): keepq is closed by Close,
	// keepDone when the keeper has stored what it held
	keepq       chan keepReq
	keepBytes   atomic.Int64 // bytes of the images in keepq
	keepDone    chan struct{}
	inboxMu     sync.Mutex
	inboxClaims map[string]bool // items being learned or discarded
	teachMu     sync.Mutex
	teachLast   *teach.Report // the last teach report, for its version
	// readOnly: the backend takes no changes (ReadOnlyBackend); they are
	// refused before their bodies are read (app/server/readonly.go)
	readOnly bool
}

type snapHolder struct{ ModelView }

// job is a change of the model run by the learner goroutine.
type job struct {
	run    func(ctx context.Context) (ModelView, error)
	queued time.Time
	done   chan error
}

// New returns a server for cfg.Backend. Call Close to stop its learner.
func New(cfg Config) (*Server, error) {
	if cfg.Backend == nil {
		return nil, errors.New("server: no backend")
	}
	cfg = cfg.withDefaults()
	if cfg.MaxDecodeBytes < cfg.MaxBodyBytes {
		return nil, fmt.Errorf("server: MaxDecodeBytes %d is less than MaxBodyBytes %d: a request of the largest size could never be read", cfg.MaxDecodeBytes, cfg.MaxBodyBytes)
	}
	if err := checkUnknown(cfg.Unknown); err != nil {
		return nil, err
	}
	if err := cfg.InboxPolicy.Check(); err != nil {
		return nil, fmt.Errorf("server: InboxPolicy: %w", err)
	}
	cur := cfg.Backend.Current()
	if cfg.Extractor != nil && cfg.Extractor.Dim() != cur.Dim() {
		return nil, fmt.Errorf("server: backbone %s gives %d features, the model wants d=%d", cfg.Extractor.Name(), cfg.Extractor.Dim(), cur.Dim())
	}
	s := &Server{
		cfg: cfg, log: cfg.Logger, met: newMetrics(),
		cop:         http.NewCrossOriginProtection(),
		bodies:      budget{max: cfg.MaxDecodeBytes},
		extract:     make(chan struct{}, cfg.Extractions),
		pixels:      imageio.NewBudget(cfg.DecodePixels),
		jobs:        make(chan *job, cfg.QueueLength+1),
		scoreq:      make(chan *scoreReq, maxBatchRows),
		scorersGone: make(chan struct{}),
		stop:        make(chan struct{}), done: make(chan struct{}),
	}
	s.publish(cur)
	s.followBackend()
	s.routes()
	s.startKeeper()
	go s.learner()
	go func() { s.scorer(); close(s.scorersGone) }()
	return s, nil
}

// View returns the view of the model being served.
func (s *Server) View() ModelView { return s.snap.Load().ModelView }

func (s *Server) publish(sn ModelView) {
	s.snap.Store(&snapHolder{sn})
	s.met.model(sn)
}

// Close stops the learner after the learns already accepted.
//
// Close also closes the Backend when it has a Close method (a
// FileBackend then releases its model file's lock).
func (s *Server) Close() {
	s.once.Do(func() {
		s.mu.Lock()
		s.closed = true
		close(s.stop)
		if s.keepq != nil {
			close(s.keepq)
		}
		s.mu.Unlock()
	})
	<-s.done
	<-s.keepDone
	if c, ok := s.cfg.Backend.(interface{ Close() error }); ok {
		c.Close()
	}
}

func (s *Server) learner() {
	defer close(s.done)
	for {
		select {
		case j := <-s.jobs:
			s.runJob(j)
		case <-s.stop:
			for {
				select {
				case j := <-s.jobs:
					s.runJob(j)
				default:
					return
				}
			}
		}
	}
}

func (s *Server) runJob(j *job) {
	s.met.stages.WithLabelValues("queue").Observe(time.Since(j.queued).Seconds())
	// A learn is finished and saved even when its client has gone away.
	sn, err := s.runSafely(j)
	switch {
	case err == nil && sn == nil: // a job that only reads the model (the teach report)
	case err == nil:
		s.publish(sn)
		s.met.learns.WithLabelValues("ok").Inc()
	default:
		s.met.learns.WithLabelValues("error").Inc()
	}
	s.pending.Add(-1)
	s.met.queue.Set(float64(s.pending.Load()))
	j.done <- err
}

// runSafely runs a job, turning a panic of the backend into an error so
// that the learner goes on and the request gets its answer.
func (s *Server) runSafely(j *job) (sn ModelView, err error) {
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("panic in a model change", "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			sn, err = nil, fmt.Errorf("internal error: the model change panicked: %v", p)
		}
	}()
	return j.run(context.Background())
}

// errBusy is returned when the learn queue is full.
var errBusy = errors.New("too many learns queued; retry later")

// errShutdown is returned for a change that arrives after Close.
var errShutdown = errors.New("server is shutting down")

// reserve takes a place in the learn queue, or fails when it is full.
func (s *Server) reserve() bool {
	for {
		p := s.pending.Load()
		if p > int64(s.cfg.QueueLength) {
			s.met.learns.WithLabelValues("rejected").Inc()
			return false
		}
		if s.pending.CompareAndSwap(p, p+1) {
			s.met.queue.Set(float64(p + 1))
			return true
		}
	}
}

// release gives back a reserved place that was not used.
func (s *Server) release() {
	s.met.queue.Set(float64(s.pending.Add(-1)))
}

// submit runs a change on the learner (after reserve) and waits for it.
func (s *Server) submit(run func(ctx context.Context) (ModelView, error)) error {
	j := &job{run: run, queued: time.Now(), done: make(chan error, 1)}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		s.release()
		return errShutdown
	}
	// reserve keeps the jobs queued below the channel's capacity, so
	// this send does not block while holding mu.
	select {
	case s.jobs <- j:
	default:
		s.mu.Unlock()
		s.release()
		return errBusy
	}
	s.mu.Unlock()
	return <-j.done
}

// Handler returns the HTTP handler: the API under /v1, /metrics and the
// web page at /.
func (s *Server) Handler() http.Handler { return s.mux }

func (s *Server) routes() {
	s.mux = http.NewServeMux()
	s.handle("/v1/healthz", "healthz", false, map[string]http.HandlerFunc{"GET": s.healthz})
	s.handle("/v1/model", "model", false, map[string]http.HandlerFunc{"GET": s.modelInfo})
	s.handle("/v1/model/undo", "undo", true, map[string]http.HandlerFunc{"POST": s.undo})
	s.handle("/v1/model/history", "history", false, map[string]http.HandlerFunc{"GET": s.history})
	s.handle("/v1/classes", "classes", false, map[string]http.HandlerFunc{"GET": s.classes})
	s.handle("/v1/classes/{name}", "forget", true, map[string]http.HandlerFunc{"DELETE": s.forget})
	s.handle("/v1/predict", "predict", false, map[string]http.HandlerFunc{"POST": s.predict})
	s.handle("/v1/learn", "learn", true, map[string]http.HandlerFunc{"POST": s.learn})
	// the inbox holds the inputs themselves: reading it needs the token too
	s.handle("/v1/inbox", "inbox", true, map[string]http.HandlerFunc{"GET": s.inboxList})
	s.handle("/v1/inbox/{id}/image", "inbox-image", true, map[string]http.HandlerFunc{"GET": s.inboxImage})
	s.handle("/v1/inbox/learn", "inbox-learn", true, map[string]http.HandlerFunc{"POST": s.inboxLearn})
	s.handle("/v1/inbox/discard", "inbox-discard", true, map[string]http.HandlerFunc{"POST": s.inboxDiscard})
	s.handle("/v1/teach", "teach", false, map[string]http.HandlerFunc{"GET": s.teachReport})
	s.handle("/v1/", "unknown", false, nil)
	metricsHandler := promhttp.HandlerFor(s.met.reg, promhttp.HandlerOpts{Registry: s.met.reg})
	s.mux.Handle("/metrics", s.instrument("metrics", s.authorize(false, metricsHandler.ServeHTTP)))
	s.mux.Handle("/", s.instrument("page", s.servePage))
}

// handle registers an endpoint: method dispatch with JSON errors,
// cross-site refusal, authorization, body limits and metrics.
func (s *Server) handle(pattern, name string, changes bool, methods map[string]http.HandlerFunc) {
	h := func(w http.ResponseWriter, r *http.Request) {
		f, ok := methods[r.Method]
		if !ok {
			if methods == nil {
				writeError(w, http.StatusNotFound, "no such endpoint: %s", r.URL.Path)
				return
			}
			for m := range methods {
				w.Header().Add("Allow", m)
			}
			writeError(w, http.StatusMethodNotAllowed, "method %s not allowed on %s", r.Method, r.URL.Path)
			return
		}
		// A body that says it is larger than the limit is refused before
		// it is read. The bytes read count against the decoding budget
		// until the request is answered.
		if r.ContentLength > s.cfg.MaxBodyBytes {
			writeError(w, http.StatusRequestEntityTooLarge, "request body is larger than the limit of %d bytes", s.cfg.MaxBodyBytes)
			return
		}
		if changes && s.readOnly && r.Method != http.MethodGet {
			s.fail(w, ErrReadOnly)
			return
		}
		br := &budgetReader{r: http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes), b: &s.bodies}
		defer br.release()
		r.Body = br
		f(w, r)
	}
	s.mux.Handle(pattern, s.instrument(name, s.crossSite(s.authorize(changes, h))))
}

// crossSite refuses an unsafe request that a browser sent from a page of
// another origin (see crossSiteCheck).
func (s *Server) crossSite(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := crossSiteCheck(s.cop, r); err != nil {
			s.log.Warn("refused a cross-site request", "method", r.Method, "path", r.URL.Path, "origin", r.Header.Get("Origin"),
				"sec_fetch_site", r.Header.Get("Sec-Fetch-Site"), "remote", r.RemoteAddr)
			writeError(w, err.code, "%s", err.msg)
			return
		}
		next(w, r)
	}
}

// authorize checks the bearer token of requests that need one.
func (s *Server) authorize(changes bool, next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.cfg.Token != "" && (changes || s.cfg.TokenForAll) && r.Method != http.MethodOptions {
			got, ok := bearer(r)
			if !ok {
				w.Header().Set("WWW-Authenticate", `Bearer realm="flycl"`)
				writeError(w, http.StatusUnauthorized, "this request needs a bearer token (Authorization: Bearer TOKEN)")
				return
			}
			if subtle.ConstantTimeCompare([]byte(got), []byte(s.cfg.Token)) != 1 {
				writeError(w, http.StatusForbidden, "wrong token")
				return
			}
		}
		next(w, r)
	}
}

func bearer(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	const p = "Bearer "
	if len(h) <= len(p) || !equalFold(h[:len(p)], p) {
		return "", false
	}
	return h[len(p):], true
}

func equalFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range len(a) {
		x, y := a[i]|0x20, b[i]|0x20
		if x != y {
			return false
		}
	}
	return true
}

type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(c int) {
	if w.code == 0 {
		w.code = c
	}
	w.ResponseWriter.WriteHeader(c)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// instrument counts, times and logs the requests of an endpoint.
func (s *Server) instrument(name string, next http.HandlerFunc) http.Handler {
	lat := s.met.latency.WithLabelValues(name)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		if s.cfg.Token == "" && !hostAllowed(r.Host, s.cfg.Hosts) {
			s.log.Warn("refused a request for an unknown host name", "host", r.Host, "path", r.URL.Path, "remote", r.RemoteAddr)
			s.met.requests.WithLabelValues(name, "403").Inc()
			writeError(w, http.StatusForbidden, "host name %q refused: without a token this server answers only to IP addresses, localhost and the names given to it (flycl serve --allowed-host)", r.Host)
			return
		}
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				s.log.Error("panic", "endpoint", name, "panic", fmt.Sprint(p))
				if sw.code == 0 {
					writeError(sw, http.StatusInternalServerError, "internal error")
				}
			}
			d := time.Since(t)
			code := sw.code
			if code == 0 {
				code = http.StatusOK
			}
			lat.Observe(d.Seconds())
			s.met.requests.WithLabelValues(name, fmt.Sprint(code)).Inc()
			lvl := slog.LevelDebug
			if code >= 400 && !(name == "inbox" && code == http.StatusNotFound && s.cfg.Inbox == nil) {
				// (the page polls GET /v1/inbox: without an inbox its 404
				// is the expected answer, logged at DEBUG)
				lvl = slog.LevelInfo
			}
			if name == "learn" || name == "forget" || name == "inbox-learn" || name == "inbox-discard" {
				lvl = max(lvl, slog.LevelInfo)
			}
			s.log.Log(r.Context(), lvl, "request", "endpoint", name, "method", r.Method, "path", r.URL.Path,
				"status", code, "ms", float64(d.Microseconds())/1000, "remote", r.RemoteAddr)
		}()
		next(sw, r)
	})
}

// Timeouts are the HTTP server's connection timeouts.
type Timeouts struct {
	ReadHeader time.Duration
	Read       time.Duration `flag:"read-timeout"`
	Write      time.Duration `flag:"write-timeout"`
	Idle       time.Duration `flag:"idle-timeout"`
	// Shutdown bounds how long a graceful shutdown waits for in-flight
	// requests.
	Shutdown time.Duration `flag:"shutdown-timeout"`
}

// DefaultTimeouts suits learns of a few hundred images on a small machine.
func DefaultTimeouts() Timeouts {
	return Timeouts{ReadHeader: 10 * time.Second, Read: 2 * time.Minute, Write: 10 * time.Minute, Idle: 2 * time.Minute, Shutdown: 10 * time.Minute}
}

// Serve serves the handler on ln until ctx is cancelled, then shuts down
// gracefully: it stops accepting, lets in-flight requests (and the learns
// they wait for) finish, and stops the learner.
func (s *Server) Serve(ctx context.Context, ln net.Listener, t Timeouts) error {
	hs := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: t.ReadHeader, ReadTimeout: t.Read, WriteTimeout: t.Write, IdleTimeout: t.Idle,
		ErrorLog:    slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
		BaseContext: func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		s.Close()
		return err
	case <-ctx.Done():
	}
	s.log.Info("shutting down: finishing in-flight requests")
	sctx, cancel := context.WithTimeout(context.Background(), t.Shutdown)
	defer cancel()
	err := hs.Shutdown(sctx)
	s.Close()
	if err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	s.log.Info("stopped")
	return nil
}
