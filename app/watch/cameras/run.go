package cameras

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/flycl/flycl/app/watch"
	"github.com/flycl/flycl/app/watch/mqtt"
	"github.com/flycl/flycl/internal/smallfile"
)

// Model is a loaded model, as Options.Open returns it.
type Model struct {
	// Classifier classifies frames; it is called from several goroutines
	// at once when cameras share the model.
	Classifier watch.Classifier
	// ShortSide is the model transform's resize: frames of a camera
	// without zones are scaled by ffmpeg so that their shorter side has
	// this many pixels (0: not scaled).
	ShortSide int
	// Name and Version are the model's (for Home Assistant and the MQTT
	// attributes).
	Name    string
	Version uint64
	// Close releases the model (nil: nothing to release).
	Close func() error
}

// Options are what a Set needs beyond the file.
type Options struct {
	// Open loads a model; it is called once per distinct ModelKey (of a
	// camera or of a zone with its own model).
	Open func(ctx context.Context, key ModelKey) (*Model, error)
	// FFmpeg is the ffmpeg program ("": "ffmpeg"); MaxPixels bounds a
	// frame (0: watch.DefaultMaxPixels).
	FFmpeg    string
	MaxPixels int
	// Out receives every camera's JSON lines (with their "camera"), each
	// line written whole; nil discards them.
	Out io.Writer
	Log *slog.Logger // default slog.Default()
	// MetricsAddr is where the Prometheus metrics are served
	// (http://ADDR/metrics; "": not served).
	MetricsAddr string
	// Flush is how long a camera's webhook queue and MQTT publisher may
	// take to empty at its end (default 10 s).
	Flush time.Duration
	// SWVersion is flycl's version (for Home Assistant).
	SWVersion string
	// Backoff and MaxBackoff are the reconnection waits (watch.Config's;
	// defaults 1 s and 30 s).
	Backoff, MaxBackoff time.Duration
	// MQTTBackoff is the MQTT publishers' longest reconnection wait
	// (default 30 s).
	MQTTBackoff time.Duration
}

// Result is how a camera's run ended.
type Result struct {
	Camera string
	Stats  watch.Stats
	// Err is what stopped the camera (nil: its file ended, or the Set was
	// stopped).
	Err error
}

// camera is a camera of a Set, ready to run.
type camera struct {
	cfg      Camera
	model    *Model
	zones    map[string]*Model // the zones' own models, by zone
	counters watch.Counters
	poster   *watch.Poster
	pub      *mqtt.Publisher
	log      *slog.Logger
	start    time.Time

	mu      sync.Mutex
	running bool
	err     error
}

// Set is the cameras of a file, ready to run. Make one with New, Run it
// once.
type Set struct {
	o       Options
	cams    []*camera
	models  []*Model
	ln      net.Listener
	metrics *metrics
	out     *lockedWriter
	log     *slog.Logger
}

// New loads the cameras' models (each once), prepares their outputs and
// listens for the metrics: what can be checked before the cameras run
// fails here, with the camera's name and line.
func New(ctx context.Context, f *File, o Options) (s *Set, err error) {
	if o.Open == nil {
		return nil, errors.New("cameras: no Options.Open")
	}
	log := cmp.Or(o.Log, slog.Default())
	s = &Set{o: o, log: log, out: &lockedWriter{w: cmp.Or[io.Writer](o.Out, io.Discard)}}
	opened := s // s is nil once an error is returned
	defer func() {
		if err != nil {
			opened.close()
		}
	}()
	var mo *mqtt.Options
	if f.MQTT != nil {
		if mo, err = mqttOptions(f.MQTT); err != nil {
			return nil, err
		}
	}
	models := map[ModelKey]*Model{}
	load := func(k ModelKey) (*Model, error) {
		m, ok := models[k]
		if !ok {
			if m, err = o.Open(ctx, k); err != nil {
				return nil, err
			}
			models[k] = m
			s.models = append(s.models, m)
		}
		return m, nil
	}
	for _, c := range f.Cameras {
		m, err := load(c.Key())
		if err != nil {
			return nil, fmt.Errorf("camera %q (line %d): model %s: %w", c.Name, c.Line, c.Model, err)
		}
		cam := &camera{cfg: c, model: m, log: log.With("camera", c.Name)}
		for _, z := range c.Zones {
			k, ok := c.ZoneKey(z.Name)
			if !ok {
				continue
			}
			zm, err := load(k)
			if err != nil {
				return nil, fmt.Errorf("camera %q (line %d): zone %q: model %s: %w", c.Name, c.Line, z.Name, k.Model, err)
			}
			if cam.zones == nil {
				cam.zones = map[string]*Model{}
			}
			cam.zones[z.Name] = zm
		}
		if c.Webhook != "" {
			cam.poster = watch.NewPoster(c.Webhook, watch.PosterOptions{Queue: c.WebhookQueue, Log: cam.log})
		}
		if c.MQTT {
			po := *mo
			po.Camera, po.Log, po.Model, po.ModelVersion, po.SWVersion = c.Name, cam.log, m.Name, m.Version, o.SWVersion
			po.MaxBackoff = o.MQTTBackoff
			for _, z := range c.Zones {
				po.Zones = append(po.Zones, z.Name)
				if zm, ok := cam.zones[z.Name]; ok {
					if po.ZoneModels == nil {
						po.ZoneModels = map[string]string{}
					}
					po.ZoneModels[z.Name] = zm.Name
				}
			}
			if cam.pub, err = mqtt.New(po); err != nil {
				return nil, fmt.Errorf("camera %q (line %d): %w", c.Name, c.Line, err)
			}
		}
		s.cams = append(s.cams, cam)
	}
	s.metrics = newMetrics(s.cams)
	if o.MetricsAddr != "" {
		if s.ln, err = net.Listen("tcp", o.MetricsAddr); err != nil {
			return nil, fmt.Errorf("metrics: %w", err)
		}
	}
	return s, nil
}

// mqttOptions resolves the file's broker (the password read from its
// file, the CA's certificates).
func mqttOptions(m *MQTT) (*mqtt.Options, error) {
	o, err := m.options()
	var fe *FieldError
	if errors.As(err, &fe) {
		fe.Name = func(field string) string { return fileMQTTKey[field] }
	}
	return o, err
}

// fileMQTTKey names the fields of MQTT that options names as a
// configuration file writes them.
var fileMQTTKey = map[string]string{"MQTT.PasswordFile": "mqtt: password_file", "MQTT.CA": "mqtt: ca"}

// options resolves the broker's options: the password read from
// PasswordFile, the certificates of CA. The errors are *FieldError
// naming those fields.
func (m *MQTT) options() (*mqtt.Options, error) {
	o := &mqtt.Options{Broker: m.Broker, Username: m.User, ClientID: m.ClientID, Prefix: m.Prefix, Discovery: m.Discovery,
		DiscoveryPrefix: m.DiscoveryPrefix, Image: m.Image}
	if m.PasswordFile != "" {
		b, err := smallfile.Read(m.PasswordFile, smallfile.SecretLimit)
		if err != nil {
			return nil, failed("MQTT.PasswordFile", m.PasswordFile, err)
		}
		if o.Password, err = mqtt.ParsePassword(b); err != nil {
			return nil, failedValue("MQTT.PasswordFile", m.PasswordFile, err)
		}
	}
	if m.CA != "" {
		pem, err := smallfile.Read(m.CA, smallfile.CALimit)
		if err != nil {
			return nil, failed("MQTT.CA", m.CA, err)
		}
		if o.TLS, err = mqtt.ParseCA(pem); err != nil {
			return nil, failedValue("MQTT.CA", m.CA, err)
		}
	}
	return o, nil
}

// Addr is the metrics' address (nil when not served).
func (s *Set) Addr() net.Addr {
	if s.ln == nil {
		return nil
	}
	return s.ln.Addr()
}

// Handler serves the metrics in Prometheus's text format.
func (s *Set) Handler() http.Handler { return s.metrics.handler() }

// Run runs every camera until its end or ctx's, and returns each one's
// result, in the file's order; its error joins the cameras' errors (nil
// when none failed). A camera that fails stops alone. Run releases the
// models and the metrics' listener at its end.
func (s *Set) Run(ctx context.Context) ([]Result, error) {
	defer s.close()
	var srv *http.Server
	if s.ln != nil {
		mux := http.NewServeMux()
		mux.Handle("/metrics", s.Handler())
		srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		go srv.Serve(s.ln)
		s.log.Info("serving metrics", "addr", "http://"+s.ln.Addr().String()+"/metrics")
	}
	res := make([]Result, len(s.cams))
	var wg sync.WaitGroup
	for i, c := range s.cams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res[i] = s.runCamera(ctx, c)
		}()
	}
	wg.Wait()
	if srv != nil {
		sctx, cancel := context.WithTimeout(context.Background(), time.Second)
		srv.Shutdown(sctx)
		cancel()
		s.ln = nil
	}
	var errs []error
	for _, r := range res {
		if r.Err != nil {
			errs = append(errs, fmt.Errorf("camera %q: %w", r.Camera, r.Err))
		}
	}
	return res, errors.Join(errs...)
}

// runCamera runs one camera with its outputs and reports how it ended.
func (s *Set) runCamera(ctx context.Context, c *camera) Result {
	cfg := c.cfg
	short := c.model.ShortSide
	if len(cfg.Zones) > 0 {
		short = 0 // zones are cropped from the source's own pixels
	}
	src := &watch.FFmpeg{Path: s.o.FFmpeg, Input: cfg.Source, FPS: cfg.FPS, ShortSide: short, MaxPixels: s.o.MaxPixels}
	if strings.HasPrefix(strings.ToLower(cfg.Source), "rtsp") {
		src.InputArgs = []string{"-rtsp_transport", cmp.Or(cfg.RTSPTransport, "tcp")}
	}
	wc := watch.Config{Source: src, Classify: c.model.Classifier, Out: s.out, Zones: cfg.Zones, Debounce: cfg.Debounce,
		Log: c.log, Retries: cfg.Retries, EveryFrame: cfg.EveryFrame, Stall: cfg.Stall, Camera: cfg.Name, Counters: &c.counters,
		Backoff: s.o.Backoff, MaxBackoff: s.o.MaxBackoff}
	for name, m := range c.zones {
		if wc.ZoneClassify == nil {
			wc.ZoneClassify = map[string]watch.Classifier{}
		}
		wc.ZoneClassify[name] = m.Classifier
	}
	finishPoster := func(time.Duration) error { return nil }
	if c.poster != nil {
		wc.Events = c.poster
		finishPoster = c.poster.Start()
	}
	if c.pub != nil {
		c.pub.Start(5 * time.Second)
		wc.Updates = c.pub
	}
	c.setRunning(true, nil)
	c.log.Info("watching", "source", cfg.Source, "model", cfg.Model, "fps", cfg.FPS, "zones", len(cfg.Zones))
	st, err := watch.Run(ctx, wc)
	if err != nil {
		c.log.Error("camera stopped", "err", err)
	}
	flush := cmp.Or(s.o.Flush, 10*time.Second)
	if perr := finishPoster(flush); perr != nil && err == nil {
		err = fmt.Errorf("webhook %s: %w", cfg.Webhook, perr)
	}
	if c.pub != nil {
		if merr := c.pub.Finish(flush); merr != nil && err == nil {
			err = fmt.Errorf("mqtt: %w", merr)
		}
	}
	c.setRunning(false, err)
	return Result{Camera: cfg.Name, Stats: st, Err: err}
}

func (c *camera) setRunning(running bool, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if running {
		c.start = time.Now()
	}
	c.running, c.err = running, err
}

func (c *camera) state() (running bool, start time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.running, c.start
}

// close releases the models and the listener.
func (s *Set) close() {
	for _, m := range s.models {
		if m.Close != nil {
			m.Close()
		}
	}
	s.models = nil
	if s.ln != nil {
		s.ln.Close()
		s.ln = nil
	}
}

// lockedWriter writes each Write whole, one at a time (json.Encoder
// writes a line per Write).
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
