package cameras

import (
	"context"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"time"

	"github.com/flycl/flycl/app/locate"
	"github.com/flycl/flycl/app/watch"
)

// Several is the cameras of a configuration file as a command gives
// them (flycl watch --config), with the settings that apply to all of
// them. Check applies its rules; Run loads the file, opens its models
// and runs the cameras (New, Set.Run). Its errors that name a field are
// *FieldError.
type Several struct {
	// Config is the configuration file (Load).
	Config string `flag:"config"`
	// FFmpeg is the ffmpeg program (looked up in $PATH), MaxPixels the
	// largest frame read (> 0).
	FFmpeg    string
	MaxPixels int
	// Threads are ONNX Runtime's threads per model (0: one per CPU).
	Threads int
	// Reload is how often each model file is checked for a new version
	// (0: never; each file reloads on its own).
	Reload time.Duration
	// Flush is Options.Flush, Metrics Options.MetricsAddr.
	Flush   time.Duration
	Metrics string
	// LogFormat is the log's format, text or json: Run logs to Log, or,
	// when Log is nil, in this format to LogTo (nil: os.Stderr).
	LogFormat string
	Log       *slog.Logger
	LogTo     io.Writer
	// Resolver finds ONNX Runtime and the backbones (watch.OpenFile);
	// Warn is told what loading a model file noticed and ignored.
	Resolver locate.Resolver
	Warn     func(string)
	// Out receives every camera's JSON lines (nil: discarded).
	Out io.Writer
	// SWVersion is flycl's version (for Home Assistant).
	SWVersion string
	// Signals, once the file is loaded, stop the cameras cleanly (their
	// outputs finished) instead of ending the process
	// (signal.NotifyContext; none: only Run's context stops them).
	Signals []os.Signal
}

// Check applies the rules that need nothing opened: LogFormat text or
// json, MaxPixels positive. The error is a *FieldError.
func (v *Several) Check() error {
	if err := CheckLogFormat(v.LogFormat); err != nil {
		return err
	}
	if v.MaxPixels <= 0 {
		return mustBe("MaxPixels", v.MaxPixels, "positive")
	}
	return nil
}

// Run checks v (Check), loads the file (a *FieldError naming Config),
// looks FFmpeg up, checks Reload, opens the cameras' models (each
// ModelKey once, with watch.OpenFile, each file reloading on its own
// with Reload; Signals then stop the cameras) and runs the cameras (New, Set.Run) until they end or
// ctx is done; it logs how each camera ended and returns Set.Run's
// results and error. New's error is a *FieldError naming Config.
func (v *Several) Run(ctx context.Context) ([]Result, error) {
	if err := v.Check(); err != nil {
		return nil, err
	}
	file, err := Load(v.Config)
	if err != nil {
		return nil, failed("Config", v.Config, err)
	}
	ffmpeg, log, err := tools(v.FFmpeg, v.Log, v.LogFormat, v.LogTo)
	if err != nil {
		return nil, err
	}
	if err := CheckReload(v.Reload); err != nil {
		return nil, err
	}
	if len(v.Signals) > 0 {
		var stop context.CancelFunc
		ctx, stop = signal.NotifyContext(ctx, v.Signals...)
		defer stop()
	}
	open := func(ctx context.Context, k ModelKey) (*Model, error) {
		mc, err := watch.OpenFile(ctx, k.Model, watch.ModelOptions{What: "frames", Backbone: k.Backbone, Unknown: k.Unknown, Threads: v.Threads},
			v.Resolver, v.Warn)
		if err != nil {
			return nil, err
		}
		mc.Top = k.Top
		log.Info("model", "model", k.Model, "classes", mc.Predictor.Classes().Len(), "backbone", mc.Extractor.Name())
		cl, stop := mc.Follow(ctx, k.Model, v.Reload, k.Unknown, log, "model", k.Model)
		return &Model{Classifier: cl, ShortSide: watch.ShortSideFor(mc.Extractor.Preset), Name: filepath.Base(k.Model),
			Version: mc.Predictor.Version(), Close: func() error { stop(); return mc.Close() }}, nil
	}
	set, err := New(ctx, file, Options{Open: open, FFmpeg: ffmpeg, MaxPixels: v.MaxPixels, Out: v.Out, Log: log,
		MetricsAddr: v.Metrics, Flush: v.Flush, SWVersion: v.SWVersion})
	if err != nil {
		return nil, failedValue("Config", v.Config, err)
	}
	res, err := set.Run(ctx)
	for _, r := range res {
		log.Info("camera ended", "camera", r.Camera, "frames", r.Stats.Classified, "read", r.Stats.Frames, "dropped", r.Stats.Stale,
			"events", r.Stats.Events, "reconnects", r.Stats.Reconnects, "err", r.Err)
	}
	return res, err
}

// tools finds the ffmpeg program (FFmpeg: its name or path) and returns
// the logger: log when given, else one in format to w (NewLogger).
func tools(ffmpegName string, log *slog.Logger, format string, w io.Writer) (string, *slog.Logger, error) {
	ffmpeg, err := exec.LookPath(ffmpegName)
	if err != nil {
		return "", nil, withForm(&FieldError{Field: "FFmpeg", Value: ffmpegName, Err: err, Problem: " (install ffmpeg, e.g. apt-get install ffmpeg)"}, formValueErr)
	}
	if log == nil {
		if log, err = NewLogger(format, w); err != nil {
			return "", nil, err
		}
	}
	return ffmpeg, log, nil
}
