package watch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/flycl/flycl/vision/imageio"
)

// ErrStalled ends a live stream that gave no frame for Config.Stall.
var ErrStalled = errors.New("watch: no frame from the source")

// ErrNoFrames is the error of a Run over a file source that ended
// without giving a single frame (an empty video, or a file ffmpeg reads
// as no frame at the rate asked for).
var ErrNoFrames = errors.New("watch: the source gave no frame")

// EventSink receives debounced events (a *Poster). Send must not block.
type EventSink interface {
	Send(Event)
}

// Update is a debounced event with the prediction of the frame that
// confirmed it (its top classes and calibrated probability): what a
// state publisher (an MQTT broker's retained state and attributes)
// needs beyond the event itself.
type Update struct {
	Event
	Prediction Prediction
	// Image is a copy of the frame (the zone's crop) that confirmed the
	// event, as it was classified: what an image entity shows.
	Image *imageio.RGB
}

// UpdateSink receives each debounced event with its prediction (an MQTT
// publisher). Update must not block.
type UpdateSink interface {
	Update(Update)
}

// Config is what Run watches and where its results go.
type Config struct {
	Source   Source
	Classify Classifier
	// Out receives one JSON line per classified frame (a FrameLine) and
	// one per event (an EventLine); nil discards them.
	Out io.Writer
	// Events receives the debounced events (nil: none sent).
	Events EventSink
	// Updates receives the debounced events with their predictions
	// (nil: none sent).
	Updates UpdateSink
	// Zones, when given, are classified each on its crop of every frame
	// (instead of the whole frame), each with its own debounced answer:
	// a frame line and events per zone, with the zone's name. A zone that
	// does not fit in a frame ends Run with an error wrapping ErrZone.
	// With Doubtful, a zone's doubtful crops go to a folder named after
	// the zone inside Doubtful.Dir.
	Zones []Zone
	// ZoneClassify gives a zone (by name) its own classifier: that zone's
	// crops are classified by it instead of by Classify (a zone with its
	// own model). Zones it does not name use Classify. A name that is not
	// one of Zones is an error wrapping ErrZone. Zones given one
	// classifier value share it, and a Pinner is pinned once per frame
	// for all the zones that share it.
	ZoneClassify map[string]Classifier
	// Debounce is the number of consecutive frames a new answer must
	// hold before it is an event (≤ 0: 1).
	Debounce int
	// Doubtful, when set, saves frames of doubtful predictions.
	Doubtful *Saver
	// Inbox, when set, keeps the frames (zone crops) the model is unsure
	// of in a labelling inbox; Classify must be a FeatureClassifier. The
	// crops of a zone with its own classifier (ZoneClassify) are not
	// kept: a label there learns into Classify's model.
	Inbox *Keeper
	// Collect, when set, saves a frame (or each zone's crop, in a folder
	// named after the zone inside Collect.Dir) every Collect.Every,
	// whatever the answer.
	Collect *Collector
	// Log receives progress (every Progress), reconnections and errors
	// (nil: slog.Default()).
	Log      *slog.Logger
	Progress time.Duration // default 10 s
	// Backoff is the first wait before reconnecting a live source,
	// doubled after each failed try up to MaxBackoff (defaults 1 s, 30 s).
	Backoff, MaxBackoff time.Duration
	// Retries bounds the reconnections of a live source in a row that
	// bring no frame (0: no bound).
	Retries int
	// EveryFrame classifies every frame of a live source too, holding the
	// source back while classification is behind (for a recorded stream
	// served live); by default a live source's waiting frame is replaced
	// by a newer one.
	EveryFrame bool
	// Stall ends a live stream that gives no frame for this long (it is
	// then reconnected; default 30 s; negative: never).
	Stall time.Duration
	// Now is the clock (nil: time.Now).
	Now func() time.Time
	// Camera names the stream in the frame lines and events (absent
	// when empty): several cameras in one process (package
	// app/watch/cameras).
	Camera string
	// Counters, when set, count the frames and events as Run goes (for
	// metrics).
	Counters *Counters
}

// FrameLine is the output line of a classified frame.
type FrameLine struct {
	Type string `json:"type"` // "frame"
	// Camera names the stream (absent for a single stream).
	Camera string    `json:"camera,omitempty"`
	Time   time.Time `json:"time"` // when the frame arrived
	Frame  int       `json:"frame"`
	// Zone is the zone classified (absent without zones).
	Zone string `json:"zone,omitempty"`
	Prediction
	// LatencyMS is the time from the frame's arrival to its prediction.
	LatencyMS float64 `json:"latency_ms"`
	// Saved is the file the frame was saved to (doubtful frames).
	Saved string `json:"saved,omitempty"`
}

// EventLine is the output line of an event.
type EventLine struct {
	Type string `json:"type"` // "event"
	Event
}

// Stats summarises a Run.
type Stats struct {
	Frames     int // frames read from the source
	Classified int // frames classified
	Stale      int // frames of a live source skipped because a newer one arrived
	Events     int
	Reconnects int
	Saved      int
	Collected  int // files saved by Config.Collect
}

// Run reads frames from the source, classifies them, writes a line per
// frame and per event, and sends the debounced events, until the end of a
// file source (ErrNoFrames when it gave none), ctx's end (a clean stop:
// nil error) or an error. A live
// source is reconnected with backoff when its stream ends or stalls.
//
// Memory stays bounded whatever the source does: three frame buffers are
// reused (one being read, one waiting, one being classified); a live
// source's waiting frame is replaced by a newer one when classification
// falls behind (Stats.Stale), a file's frames (and with EveryFrame a live
// source's) all wait their turn.
func Run(ctx context.Context, cfg Config) (Stats, error) {
	if err := cfg.checkInbox(); err != nil {
		return Stats{}, err
	}
	if err := cfg.checkZoneClassify(); err != nil {
		return Stats{}, err
	}
	r := &runner{cfg: cfg, deb: NewDebouncer(cfg.Debounce), log: cfg.Log, now: cfg.Now}
	r.main = r.pinSlot(cfg.Classify)
	for _, z := range cfg.Zones {
		zs := &zoneState{zone: z, deb: NewDebouncer(cfg.Debounce), pin: r.main}
		if c, ok := cfg.ZoneClassify[z.Name]; ok {
			zs.pin, zs.own = r.pinSlot(c), true
		}
		if cfg.Doubtful != nil {
			sv := *cfg.Doubtful
			sv.Dir = filepath.Join(sv.Dir, z.Name)
			if err := os.MkdirAll(sv.Dir, 0o755); err != nil {
				return Stats{}, fmt.Errorf("watch: zone %q: %w", z.Name, err)
			}
			zs.saver = &sv
		}
		r.zones = append(r.zones, zs)
	}
	if c := cfg.Collect; c != nil {
		dirs := []string{c.Dir}
		for _, z := range cfg.Zones {
			dirs = append(dirs, filepath.Join(c.Dir, z.Name))
		}
		for _, d := range dirs {
			if err := os.MkdirAll(d, 0o755); err != nil {
				return Stats{}, fmt.Errorf("watch: collect: %w", err)
			}
		}
	}
	if r.log == nil {
		r.log = slog.Default()
	}
	if r.now == nil {
		r.now = time.Now
	}
	if cfg.Out == nil {
		r.cfg.Out = io.Discard
	}
	r.enc = json.NewEncoder(r.cfg.Out)
	r.progress = cmpOr(cfg.Progress, 10*time.Second)
	back := cmpOr(cfg.Backoff, time.Second)
	maxBack := max(cmpOr(cfg.MaxBackoff, 30*time.Second), back)
	stall := cmpOr(cfg.Stall, 30*time.Second)
	live := cfg.Source.Live()
	r.start = r.now()
	r.lastLog = r.start
	wait, fails := back, 0
	for {
		before := r.frames.Load()
		err := r.stream(ctx, live, stall)
		if ctx.Err() != nil {
			return r.end(), nil
		}
		var fatal *fatalError
		if errors.As(err, &fatal) {
			return r.end(), fatal.err
		}
		if !live {
			if err == nil && r.frames.Load() == 0 {
				err = fmt.Errorf("%w: %s (is it a video or an image ffmpeg reads?)", ErrNoFrames, cfg.Source)
			}
			return r.end(), err
		}
		if r.frames.Load() > before {
			wait, fails = back, 0
		}
		fails++
		if cfg.Retries > 0 && fails > cfg.Retries {
			return r.end(), fmt.Errorf("watch: %s: %d reconnections without a frame: %w", cfg.Source, cfg.Retries, err)
		}
		r.log.Warn("source ended; reconnecting", "source", cfg.Source.String(), "err", errText(err), "wait", wait, "frames", r.frames.Load())
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return r.end(), nil
		case <-t.C:
		}
		wait = min(2*wait, maxBack)
		r.stats.Reconnects++
		cfg.Counters.reconnect()
	}
}

func errText(err error) string {
	if err == nil {
		return "end of stream"
	}
	return err.Error()
}

func cmpOr(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

// fatalError ends Run whatever the source (a classifier or output error).
type fatalError struct{ err error }

func (e *fatalError) Error() string { return e.err.Error() }

// zoneState is a zone's crop buffer, debouncer, saver and classifier.
type zoneState struct {
	zone  Zone
	crop  *imageio.RGB
	deb   *Debouncer
	saver *Saver
	pin   int  // the zone's classifier: an index into runner.pins
	own   bool // the zone has its own classifier (Config.ZoneClassify)
}

type runner struct {
	cfg      Config
	pins     []pinned // the distinct classifiers and their pin for the frame being classified
	main     int      // Config.Classify's index in pins
	deb      *Debouncer
	zones    []*zoneState
	log      *slog.Logger
	now      func() time.Time
	enc      *json.Encoder
	stats    Stats // Frames and Stale are in frames and stale
	frames   atomic.Int64
	stale    atomic.Int64
	events   int64
	progress time.Duration
	start    time.Time
	totalLat time.Duration

	// progress since the last log line
	lastLog time.Time
	logN    int
	logLat  time.Duration
	logMax  time.Duration
}

// end logs the run's summary and returns its statistics.
func (r *runner) end() Stats {
	s := r.stats
	s.Frames, s.Stale = int(r.frames.Load()), int(r.stale.Load())
	attrs := []any{"source", r.cfg.Source.String(), "frames", s.Classified, "read", s.Frames, "stale", s.Stale, "events", s.Events, "reconnects", s.Reconnects}
	if el := r.now().Sub(r.start); s.Classified > 0 && el > 0 {
		attrs = append(attrs, "frames_per_s", float64(s.Classified)/el.Seconds(),
			"latency_ms_mean", float64(r.totalLat.Microseconds())/1000/float64(s.Classified))
	}
	r.log.Info("watch ended", attrs...)
	return s
}

type slot struct {
	img   *imageio.RGB
	frame int
	at    time.Time
	t     frameTime // for Collect
}

// stream opens the source once and classifies its frames until it ends:
// nil at a clean end, ctx's end, or the error that ended it.
func (r *runner) stream(ctx context.Context, live bool, stall time.Duration) error {
	st, err := r.cfg.Source.Open(ctx)
	if err != nil {
		return err
	}
	free := make(chan *imageio.RGB, 3)
	for range 3 {
		free <- &imageio.RGB{}
	}
	ready := make(chan slot, 1)
	done := make(chan struct{})
	var readErr error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(ready)
		for {
			var buf *imageio.RGB
			select {
			case buf = <-free:
			case <-done:
				return
			}
			img, err := st.Next(buf)
			if err != nil {
				if err != io.EOF {
					readErr = err
				}
				return
			}
			s := slot{img: img, frame: int(r.frames.Add(1) - 1), at: r.now()}
			r.cfg.Counters.frameRead(s.at)
			s.t.at = s.at
			if tm, ok := r.cfg.Source.(Timed); ok {
				s.t.stream, s.t.timed = tm.FrameTime(s.frame)
			}
			if live && !r.cfg.EveryFrame {
				select {
				case ready <- s:
				default: // the waiting frame is stale: replace it
					select {
					case old := <-ready:
						free <- old.img
						r.stale.Add(1)
						r.cfg.Counters.frameDropped()
					default: // taken meanwhile
					}
					ready <- s // the only sender: there is room now
				}
				continue
			}
			select {
			case ready <- s:
			case <-done:
				return
			}
		}
	}()
	finish := func() {
		close(done)
		st.Close() // unblocks a Next in progress
		for s := range ready {
			free <- s.img
		}
		wg.Wait()
	}
	var timer *time.Timer
	var timeout <-chan time.Time
	if live && stall > 0 {
		timer = time.NewTimer(stall)
		defer timer.Stop()
		timeout = timer.C
	}
	for {
		var s slot
		var ok bool
		select {
		case s, ok = <-ready:
		case <-ctx.Done():
			finish()
			return ctx.Err()
		case <-timeout:
			finish()
			return fmt.Errorf("%w for %s", ErrStalled, stall)
		}
		if !ok {
			finish()
			return readErr
		}
		if timer != nil {
			timer.Reset(stall)
		}
		err := r.frame(ctx, s)
		free <- s.img
		if err != nil {
			finish()
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return &fatalError{err}
		}
		r.logProgress()
	}
}

// frame classifies one frame (or each zone's crop of it) and writes its
// lines and events.
func (r *runner) frame(ctx context.Context, s slot) error {
	r.pin()
	if len(r.zones) == 0 {
		r.collect(s, "", s.img)
		lat, err := r.classify(ctx, s, s.img, "", r.pins[r.main].cur, true, r.deb, r.cfg.Doubtful)
		if err != nil {
			return err
		}
		r.count(lat)
		return nil
	}
	var lat time.Duration
	for _, z := range r.zones {
		rect, err := z.zone.Rect(s.img.W, s.img.H)
		if err != nil {
			return fmt.Errorf("watch: frame %d: %w", s.frame, err)
		}
		z.crop = Crop(z.crop, s.img, rect)
		r.collect(s, z.zone.Name, z.crop)
		if lat, err = r.classify(ctx, s, z.crop, z.zone.Name, r.pins[z.pin].cur, !z.own, z.deb, z.saver); err != nil {
			return err
		}
	}
	if r.cfg.Doubtful != nil {
		r.stats.Saved = 0
		for _, z := range r.zones {
			r.stats.Saved += z.saver.Saved()
		}
	}
	r.count(lat)
	return nil
}

// collect gives img (s's frame or zone's crop of it) to Config.Collect.
func (r *runner) collect(s slot, zone string, img *imageio.RGB) {
	c := r.cfg.Collect
	if c == nil || c.Full() {
		return
	}
	if _, err := c.maybe(zone, s.frame, s.t, img); err != nil {
		r.log.Error("collecting a frame", "frame", s.frame, "zone", zone, "err", err)
	}
	r.stats.Collected = c.Saved()
	if c.Full() {
		r.log.Info("collected the most frames asked for; collecting no more", "dir", c.Dir, "files", c.Saved())
	}
}

// count counts a classified frame and its latency (to its last zone's
// prediction).
func (r *runner) count(lat time.Duration) {
	r.stats.Classified++
	r.cfg.Counters.frameClassified()
	r.logN++
	r.logLat += lat
	r.totalLat += lat
	r.logMax = max(r.logMax, lat)
}

// classify classifies img (s's frame or a zone's crop of it) with cl and
// writes its line and event; it returns the latency of the prediction.
// inbox says whether the inbox may keep it (a zone with its own model is
// not kept: the inbox learns into the stream's model).
func (r *runner) classify(ctx context.Context, s slot, img *imageio.RGB, zone string, cl Classifier, inbox bool, deb *Debouncer, saver *Saver) (time.Duration, error) {
	p, x, err := r.predict(ctx, cl, inbox, img)
	if err != nil {
		if zone != "" {
			return 0, fmt.Errorf("watch: frame %d, zone %q: %w", s.frame, zone, err)
		}
		return 0, fmt.Errorf("watch: frame %d: %w", s.frame, err)
	}
	lat := r.now().Sub(s.at)
	line := FrameLine{Type: "frame", Camera: r.cfg.Camera, Time: s.at, Frame: s.frame, Zone: zone, Prediction: p, LatencyMS: float64(lat.Microseconds()) / 1000}
	if saver != nil {
		path, err := saver.Maybe(s.frame, img, p)
		if err != nil {
			r.log.Error("saving a doubtful frame", "frame", s.frame, "zone", zone, "err", err)
		}
		line.Saved = path
		if zone == "" {
			r.stats.Saved = saver.Saved()
		}
	}
	if err := r.enc.Encode(line); err != nil {
		return 0, fmt.Errorf("watch: write: %w", err)
	}
	c, changed := deb.Observe(s.frame, p.Answer)
	if inbox {
		r.keep(s.frame, zone, img, p, x, changed)
	}
	if !changed {
		return lat, nil
	}
	r.events++
	r.stats.Events++
	r.cfg.Counters.event()
	ev := Event{ID: r.events, Camera: r.cfg.Camera, Time: s.at, Source: r.cfg.Source.String(), Zone: zone, Class: c.To, Previous: c.From, Frame: c.Frame, Since: c.Since,
		ModelVersion: p.ModelVersion}
	if len(p.Top) > 0 {
		ev.Score = p.Top[0].Score
	}
	if err := r.enc.Encode(EventLine{Type: "event", Event: ev}); err != nil {
		return 0, fmt.Errorf("watch: write: %w", err)
	}
	if zone != "" {
		r.log.Info("event", "zone", zone, "class", ev.Class, "previous", ev.Previous, "frame", ev.Frame)
	} else {
		r.log.Info("event", "class", ev.Class, "previous", ev.Previous, "frame", ev.Frame)
	}
	if r.cfg.Events != nil {
		r.cfg.Events.Send(ev)
	}
	if r.cfg.Updates != nil {
		r.cfg.Updates.Update(Update{Event: ev, Prediction: p, Image: &imageio.RGB{W: img.W, H: img.H, Pix: slices.Clone(img.Pix[:3*img.W*img.H])}})
	}
	return lat, nil
}

// logProgress logs frames/s and latency every Progress.
func (r *runner) logProgress() {
	now := r.now()
	el := now.Sub(r.lastLog)
	if el < r.progress || r.logN == 0 {
		return
	}
	r.log.Info("progress", "frames", r.stats.Classified, "read", r.frames.Load(), "stale", r.stale.Load(),
		"frames_per_s", float64(r.logN)/el.Seconds(),
		"latency_ms_mean", float64(r.logLat.Microseconds())/1000/float64(r.logN),
		"latency_ms_max", float64(r.logMax.Microseconds())/1000)
	r.lastLog, r.logN, r.logLat, r.logMax = now, 0, 0, 0
}
