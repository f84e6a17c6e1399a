package cameras

import (
	"errors"
	"io"
	"log/slog"
	"math"
	"os"
	"time"

	"github.com/flycl/flycl/app/inbox"
	"github.com/flycl/flycl/app/locate"
	"github.com/flycl/flycl/app/watch"
)

// Single is one camera given field by field (flycl watch's flags)
// rather than in a configuration file, as given, before anything is
// opened: its stream, its model (and its zones' own models), what it
// saves and where it sends its answers. Check applies its rules; Run
// opens everything, runs the camera and finishes its outputs. Its errors
// that name a field are *FieldError.
//
// Unlike a camera of a File, a Single writes its lines without a
// camera's name, and it may save doubtful frames (Save), collect frames
// (Collect), keep frames in a labelling inbox (Inbox) and reload its
// model files (Reload).
//
// A field's flag tag is flycl watch's flag for it (internal/flagbind.Names:
// how the command names the field in a FieldError and tells whether it
// was given).
type Single struct {
	// Model is the model file; Backbone another location of its
	// backbone's weights ("": the model's own); Unknown its rejection
	// (auto, off or a number); Top the classes per frame line (> 0);
	// Threads ONNX Runtime's threads (0: one per CPU).
	Model    string `flag:"model"`
	Backbone string `flag:"backbone"`
	Unknown  string `flag:"unknown"`
	Top      int    `flag:"top"`
	Threads  int    `flag:"threads"`
	// Source is what ffmpeg opens (a file, an rtsp:// or http:// URL, a
	// /dev/videoN device): a file ends Run at its end. FFmpeg is the
	// ffmpeg program (looked up in $PATH), MaxPixels the largest frame
	// read (> 0), FPS the frames sampled per second (0: every frame).
	Source    string  `flag:"source"`
	FFmpeg    string  `flag:"ffmpeg"`
	MaxPixels int     `flag:"max-frame-pixels"`
	FPS       float64 `flag:"fps"`
	// Zones are the zones, each NAME=X,Y,W,H (watch.ParseZones), and
	// ZoneModels the zones' own models, each NAME=FILE
	// (watch.ParseZoneModels): zones naming one file share one loaded
	// copy.
	Zones      []string `flag:"zone"`
	ZoneModels []string `flag:"zone-model"`
	// Debounce, Retries, EveryFrame and Stall are watch.Config's.
	Debounce   int           `flag:"debounce"`
	Retries    int           `flag:"retries"`
	EveryFrame bool          `flag:"every-frame"`
	Stall      time.Duration `flag:"stall"`
	// Webhook is a URL events are POSTed to ("": none), through a queue
	// of WebhookQueue events (> 0).
	Webhook      string `flag:"webhook"`
	WebhookQueue int    `flag:"webhook-queue"`
	// Flush is how long the webhook's queue and the MQTT publisher may
	// take to empty at the end.
	Flush time.Duration `flag:"flush"`
	// Save keeps doubtful frames (a watch.Saver; Save.Dir "": none).
	Save Save
	// Collect keeps a frame every Collect.Every (a watch.Collector;
	// Collect.Dir "": none).
	Collect Collect
	// MQTT publishes the answers to MQTT.Broker ("": none) as Camera;
	// MQTT.ClientID names the connection ("": the default).
	MQTT MQTT
	// Camera names the stream in the MQTT topics, to Home Assistant and
	// in the labelling inbox's items.
	Camera string `flag:"camera"`
	// Inbox keeps the frames the model is unsure of in a labelling inbox
	// (a watch.Keeper; Inbox.Dir "": none).
	Inbox Inbox
	// Reload is how often the model files are checked for a new version
	// (0: never; each file reloads on its own).
	Reload time.Duration `flag:"reload"`
	// LogFormat is the log's format, text or json: Run logs to Log, or,
	// when Log is nil, in this format to LogTo (nil: os.Stderr).
	LogFormat string `flag:"log-format"`
	Log       *slog.Logger
	LogTo     io.Writer
	// Metrics is refused: metrics are served for the cameras of a file
	// (it needs the field "Config" of the command).
	Metrics string `flag:"metrics"`
	// Given says whether a field was given (a flag set on the command
	// line): a field that applies only with another is refused without
	// it when given, even at its default value (nil: none given).
	Given func(field string) bool

	// Resolver finds ONNX Runtime and the backbones (watch.OpenFile);
	// Warn is told what loading a model file noticed and ignored (nil:
	// nothing told).
	Resolver locate.Resolver
	Warn     func(string)
	// Out receives the JSON lines (nil: discarded).
	Out io.Writer
	// SWVersion is flycl's version (for Home Assistant).
	SWVersion string
	// Signals, once the model is open, stop the camera cleanly (its
	// outputs finished) instead of ending the process
	// (signal.NotifyContext; none: only Run's context stops it).
	Signals []os.Signal
}

// Save is a Single's doubtful frames: those answered unknown, or whose
// calibrated probability is below Below, saved in Dir, at most Max, one
// in Every frames at most (watch.Saver).
type Save struct {
	Dir   string  `flag:"save-doubtful"`
	Below float64 `flag:"save-below"`
	Max   int     `flag:"save-max"`
	Every int     `flag:"save-every"`
}

// Collect is a Single's collected frames: one (each zone's crop) every
// Every (> 0), at most Max (> 0), in Dir (watch.Collector).
type Collect struct {
	Dir   string        `flag:"collect"`
	Every time.Duration `flag:"collect-every"`
	Max   int           `flag:"collect-max"`
}

// Inbox is a Single's labelling inbox (package inbox) in Dir: its bounds
// (MaxItems, MaxBytes: at least 1), the Keeper's policy (Below: a
// calibrated probability in (0, 1]; Margin: two best scores' difference,
// positive), one kept frame of a zone in Every (at least 1), and the
// frames that confirm a change (Changes).
type Inbox struct {
	Dir      string  `flag:"inbox"`
	MaxItems int     `flag:"inbox-max-items"`
	MaxBytes int64   `flag:"inbox-max-bytes"`
	Below    float64 `flag:"inbox-below"`
	Margin   float64 `flag:"inbox-margin"`
	Every    int     `flag:"inbox-every"`
	Changes  bool    `flag:"inbox-changes"`
}

// inboxFields are the fields of Inbox that apply with Inbox.Dir only.
var inboxFields = []string{"Inbox.MaxItems", "Inbox.MaxBytes", "Inbox.Below", "Inbox.Margin", "Inbox.Every", "Inbox.Changes"}

// Check applies the rules that need nothing opened, in this order: no
// Metrics; Collect's fields given only with Collect.Dir; a Model and a
// Source; FPS not negative; Top, WebhookQueue, MaxPixels, Collect.Every
// and Collect.Max positive; LogFormat text or json; the Inbox's fields
// given only with Inbox.Dir, and within their bounds; Reload not
// negative; the Zones and ZoneModels read; MQTT's fields only with
// MQTT.Broker. The error is a *FieldError.
func (s *Single) Check() error {
	given := s.Given
	if given == nil {
		given = func(string) bool { return false }
	}
	if s.Metrics != "" {
		return needs("Metrics", s.Metrics, "Config", "needs %s FILE")
	}
	for _, f := range []struct {
		name string
		v    any
	}{{"Collect.Every", s.Collect.Every}, {"Collect.Max", s.Collect.Max}} {
		if s.Collect.Dir == "" && given(f.name) {
			return needs(f.name, f.v, "Collect.Dir", "needs %s DIR")
		}
	}
	switch {
	case s.Model == "":
		return withForm(&FieldError{Field: "Model", Value: s.Model, Problem: " FILE"}, formGive)
	case s.Source == "":
		return withForm(&FieldError{Field: "Source", Value: s.Source, Problem: " (a video file, a URL or /dev/videoN)"}, formGive)
	case !(s.FPS >= 0) || math.IsInf(s.FPS, 1): // NaN too
		return mustBe("FPS", s.FPS, "0 (every frame) or positive")
	case s.Top <= 0:
		return mustBe("Top", s.Top, "positive")
	case s.WebhookQueue <= 0:
		return mustBe("WebhookQueue", s.WebhookQueue, "positive")
	case s.MaxPixels <= 0:
		return mustBe("MaxPixels", s.MaxPixels, "positive")
	case s.Collect.Every <= 0:
		return mustBe("Collect.Every", s.Collect.Every, "positive")
	case s.Collect.Max <= 0:
		return mustBe("Collect.Max", s.Collect.Max, "positive")
	}
	if err := CheckLogFormat(s.LogFormat); err != nil {
		return err
	}
	if err := s.checkInbox(given); err != nil {
		return err
	}
	if err := CheckReload(s.Reload); err != nil {
		return err
	}
	zones, err := watch.ParseZones(s.Zones)
	if err != nil {
		return failed("Zones", s.Zones, err)
	}
	if _, err := watch.ParseZoneModels(s.ZoneModels, zones); err != nil {
		return withForm(&FieldError{Field: "ZoneModels", Value: s.ZoneModels, Err: err}, formSpaceErr)
	}
	if s.MQTT.Broker == "" {
		if s.MQTT.Image {
			return needs("MQTT.Image", true, "MQTT.Broker", "needs %s")
		}
		for _, f := range []struct{ name, v string }{{"MQTT.User", s.MQTT.User}, {"MQTT.PasswordFile", s.MQTT.PasswordFile},
			{"MQTT.ClientID", s.MQTT.ClientID}, {"MQTT.CA", s.MQTT.CA}} {
			if f.v != "" {
				return needs(f.name, f.v, "MQTT.Broker", "needs %s")
			}
		}
	}
	return nil
}

// checkInbox refuses the Inbox's fields given without Inbox.Dir, and
// values out of their bounds.
func (s *Single) checkInbox(given func(string) bool) error {
	ib := s.Inbox
	if ib.Dir == "" {
		for _, name := range inboxFields {
			if given(name) {
				return needs(name, nil, "Inbox.Dir", "applies to the labelling inbox: give %s DIR")
			}
		}
	}
	var be *inbox.BoundError
	if errors.As(inbox.CheckGiven(inbox.Options{MaxItems: ib.MaxItems, MaxBytes: ib.MaxBytes}, inbox.Policy{Probability: ib.Below, Margin: ib.Margin}), &be) {
		switch be.Field {
		case "MaxItems", "MaxBytes":
			return withForm(&FieldError{Field: "Inbox.MaxItems", Value: ib.MaxItems, Other: "Inbox.MaxBytes", OtherValue: ib.MaxBytes,
				Problem: be.Problem}, formPair)
		case "Probability":
			return badValue("Inbox.Below", ib.Below, be.Problem)
		}
		return badValue("Inbox."+be.Field, be.Value, be.Problem)
	}
	if ib.Every < 1 {
		return badValue("Inbox.Every", ib.Every, "must be at least 1")
	}
	return nil
}

// CheckLogFormat refuses a log format (the field LogFormat) other than
// text and json, as a *FieldError.
func CheckLogFormat(format string) error {
	if format != "text" && format != "json" {
		return badValue("LogFormat", format, "want text or json")
	}
	return nil
}

// CheckReload refuses a negative interval between two checks of the
// model files (the field Reload), as a *FieldError.
func CheckReload(d time.Duration) error {
	if d < 0 {
		return badValue("Reload", d, "must be 0 (never) or positive")
	}
	return nil
}

// NewLogger returns a logger writing to w (nil: os.Stderr) in format,
// text or json (CheckLogFormat).
func NewLogger(format string, w io.Writer) (*slog.Logger, error) {
	if err := CheckLogFormat(format); err != nil {
		return nil, err
	}
	if w == nil {
		w = os.Stderr
	}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, nil)), nil
	}
	return slog.New(slog.NewTextHandler(w, nil)), nil
}
