package cameras

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"time"

	"github.com/flycl/flycl/app/inbox"
	"github.com/flycl/flycl/app/watch"
	"github.com/flycl/flycl/app/watch/mqtt"
)

// Run checks s (Check), opens what it names and runs the camera until
// its source ends (a file), fails, or ctx is done (or one of Signals
// arrives, once the model is open); then it finishes the
// webhook's queue and the MQTT publisher (each given Flush to empty),
// stops the model files' watchers, closes the inbox and the models, and
// returns watch.Run's statistics. In order, before the models load: the
// MQTT password and CA files are read and the broker's options checked,
// FFmpeg is looked up; then the model, Save.Dir (created), the model
// file's watcher, the inbox, the zones' own models (each file once) and
// the MQTT publisher. The errors of a field are *FieldError; a model
// file's error is watch.OpenFile's; watch.Run's is returned as it is,
// unless it ended cleanly and the webhook (then MQTT) failed to deliver.
func (s *Single) Run(ctx context.Context) (st watch.Stats, err error) {
	if err := s.Check(); err != nil {
		return st, err
	}
	zones, _ := watch.ParseZones(s.Zones)
	zoneFiles, _ := watch.ParseZoneModels(s.ZoneModels, zones)
	var mo *mqtt.Options
	if s.MQTT.Broker != "" {
		if mo, err = s.MQTT.options(); err != nil {
			return st, err
		}
		mo.Camera = s.Camera
		if _, err := mqtt.New(*mo); err != nil { // checked before the model loads
			return st, failed("MQTT.Broker", s.MQTT.Broker, err)
		}
		for _, z := range zones {
			mo.Zones = append(mo.Zones, z.Name)
			if file, ok := zoneFiles[z.Name]; ok {
				if mo.ZoneModels == nil {
					mo.ZoneModels = map[string]string{}
				}
				mo.ZoneModels[z.Name] = filepath.Base(file)
			}
		}
	}
	ffmpeg, log, err := tools(s.FFmpeg, s.Log, s.LogFormat, s.LogTo)
	if err != nil {
		return st, err
	}
	var closers []func() // run at the end, last first
	defer func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}()

	mc, err := s.open(ctx, s.Model, s.Backbone)
	if err != nil {
		return st, err
	}
	closers = append(closers, func() { mc.Close() })
	loadCtx := ctx // the zones' models load under it, the rest runs under ctx
	if len(s.Signals) > 0 {
		var stop context.CancelFunc
		ctx, stop = signal.NotifyContext(ctx, s.Signals...)
		closers = append(closers, stop)
	}
	p := mc.Predictor
	short := watch.ShortSideFor(mc.Extractor.Preset)
	if len(zones) > 0 {
		short = 0 // zones are cropped from the source's own pixels
	}
	cfg := watch.Config{
		Source:     &watch.FFmpeg{Path: ffmpeg, Input: s.Source, FPS: s.FPS, ShortSide: short, MaxPixels: s.MaxPixels},
		Classify:   mc.ModelClassifier,
		Out:        s.Out,
		Zones:      zones,
		Debounce:   s.Debounce,
		Log:        log,
		Retries:    s.Retries,
		EveryFrame: s.EveryFrame,
		Stall:      s.Stall,
	}
	if s.Save.Dir != "" {
		if err := os.MkdirAll(s.Save.Dir, 0o755); err != nil {
			return st, failed("Save.Dir", s.Save.Dir, err)
		}
		cfg.Doubtful = &watch.Saver{Dir: s.Save.Dir, Below: s.Save.Below, Max: s.Save.Max, Every: s.Save.Every}
	}
	if s.Collect.Dir != "" {
		cfg.Collect = &watch.Collector{Dir: s.Collect.Dir, Every: s.Collect.Every, Max: s.Collect.Max}
	}
	var stopReload func()
	cfg.Classify, stopReload = mc.Follow(ctx, s.Model, s.Reload, s.Unknown, log)
	closers = append(closers, stopReload)
	if s.Inbox.Dir != "" {
		k, stop, err := s.keeper(log)
		if err != nil {
			return st, err
		}
		cfg.Inbox = k
		closers = append(closers, stop)
	}
	// the classes answers may name: the event entity's types
	classes := p.Classes().Names()
	// the zones' own models, each file opened once
	opened := map[string]watch.Classifier{}
	for _, z := range zones {
		file, ok := zoneFiles[z.Name]
		if !ok || opened[file] != nil {
			continue
		}
		zc, err := s.open(loadCtx, file, "")
		if err != nil {
			return st, failedValue("ZoneModels", z.Name+"="+file, err)
		}
		closers = append(closers, func() { zc.Close() })
		log.Info("zone model", "zone", z.Name, "model", file, "classes", zc.Predictor.Classes().Len(), "version", zc.Predictor.Version())
		classes = append(classes, zc.Predictor.Classes().Names()...)
		var stop func()
		opened[file], stop = zc.Follow(ctx, file, s.Reload, s.Unknown, log, "model", file)
		closers = append(closers, stop)
	}
	for zone, file := range zoneFiles {
		if cfg.ZoneClassify == nil {
			cfg.ZoneClassify = map[string]watch.Classifier{}
		}
		cfg.ZoneClassify[zone] = opened[file]
	}
	var pub *mqtt.Publisher
	if mo != nil {
		mo.Log, mo.Model, mo.ModelVersion, mo.SWVersion = log, filepath.Base(s.Model), p.Version(), s.SWVersion
		slices.Sort(classes)
		mo.Classes = slices.Compact(classes)
		if pub, err = mqtt.New(*mo); err != nil {
			return st, failed("MQTT.Broker", s.MQTT.Broker, err)
		}
	}
	finishPoster := func(time.Duration) error { return nil }
	if s.Webhook != "" {
		poster := watch.NewPoster(s.Webhook, watch.PosterOptions{Queue: s.WebhookQueue, Log: log})
		cfg.Events = poster
		finishPoster = poster.Start()
	}
	if pub != nil {
		pub.Start(5 * time.Second)
		cfg.Updates = pub
	}
	log.Info("watching", "source", s.Source, "model", s.Model, "classes", p.Classes().Len(), "backbone", mc.Extractor.Backbone.Name,
		"fps", s.FPS, "scale_short_side", short, "zones", len(zones))
	st, err = watch.Run(ctx, cfg)
	if perr := finishPoster(s.Flush); perr != nil && err == nil {
		err = failedValue("Webhook", s.Webhook, perr)
	}
	if pub != nil {
		if merr := pub.Finish(s.Flush); merr != nil && err == nil {
			err = failedValue("MQTT.Broker", s.MQTT.Broker, merr)
		}
	}
	return st, err
}

// open opens a model file with s's rejection, threads and top, its
// backbone at backbone ("": the model's own).
func (s *Single) open(ctx context.Context, path, backbone string) (*watch.File, error) {
	f, err := watch.OpenFile(ctx, path, watch.ModelOptions{What: "frames", Backbone: backbone, Unknown: s.Unknown, Threads: s.Threads},
		s.Resolver, s.Warn)
	if err != nil {
		return nil, err
	}
	f.Top = s.Top
	return f, nil
}

// keeper opens the labelling inbox and its Keeper; stop closes both and
// logs what was kept.
func (s *Single) keeper(log *slog.Logger) (*watch.Keeper, func(), error) {
	ib, err := OpenInbox(s.Inbox.Dir, inbox.Options{MaxItems: s.Inbox.MaxItems, MaxBytes: s.Inbox.MaxBytes}, log)
	if err != nil {
		return nil, nil, err
	}
	k := &watch.Keeper{Inbox: ib, Policy: inbox.Policy{Probability: s.Inbox.Below, Margin: s.Inbox.Margin}, Camera: s.Camera,
		Changes: s.Inbox.Changes, Every: s.Inbox.Every, Log: log}
	return k, func() {
		k.Close()
		st := k.Stats()
		log.Info("inbox", "kept", st.Kept, "dropped", st.Dropped, "failed", st.Failed)
		ib.Close()
	}, nil
}

// OpenInbox opens the labelling inbox in dir (the field Inbox.Dir: its
// error is a *FieldError) with o, logging to log, and logs what it
// holds.
func OpenInbox(dir string, o inbox.Options, log *slog.Logger) (*inbox.Inbox, error) {
	o.Logger = log
	ib, err := inbox.Open(dir, o)
	if err != nil {
		return nil, failed("Inbox.Dir", dir, err)
	}
	n, b := ib.Len()
	log.Info("labelling inbox", "dir", dir, "items", n, "bytes", b, "max_items", o.MaxItems, "max_bytes", o.MaxBytes)
	return ib, nil
}
