package main

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/flycl/flycl/app/watch"
	"github.com/flycl/flycl/app/watch/mqtt"
)

type watchFlags struct {
	model, source, backbone, webhook, unknown, ffmpeg, saveDir, logFormat string
	fps, saveBelow                                                        float64
	debounce, top, threads, queue, saveMax, saveEvery, retries, maxPixels int
	stall, flush                                                          time.Duration
	collectDir                                                            string
	collectEvery                                                          time.Duration
	collectMax                                                            int
	everyFrame                                                            bool
	zones, zoneModels                                                     []string

	mqtt, mqttUser, mqttPasswordFile, mqttClientID, mqttPrefix, mqttCA, camera, haPrefix string
	haDiscovery, haImage                                                                 bool

	config, metrics string // several cameras from a file (watch_cameras.go)
	teach           watchTeachFlags
}

func watchCmd() *cobra.Command {
	var f watchFlags
	c := &cobra.Command{
		Use:   "watch --model FILE --source SRC [--fps N] [--webhook URL] [--debounce N]",
		Short: "Classify a video stream (file, RTSP/HTTP/MJPEG URL, /dev/videoN) frame by frame; events to a webhook or MQTT (Home Assistant)",
		Long: `Reads a video through ffmpeg (a subprocess), samples it at --fps, classifies
every sampled frame with the model's backbone, transform and classifier (as
flycl predict classifies an image, "unknown" included), and prints one JSON
line per frame and one per event on stdout. An event is a change of the
answer that holds for --debounce frames; with --webhook it is also POSTed
there as JSON (retried with backoff from a bounded queue). With --mqtt the
answer is published to an MQTT broker (retained PREFIX/CAMERA/state,
attributes and availability) and announced to Home Assistant as a sensor.

A file ends the command at its end. A network stream or a camera is
reconnected with backoff when it drops or stalls; SIGTERM or Ctrl-C stops
cleanly. Progress (frames/s, latency) goes to stderr. With --config FILE
several cameras, each with its source, model, zones and outputs, run in one
process (--metrics: Prometheus metrics per camera). See docs/WATCH.md.`,
		Example: `  flycl watch --model cam.flycl --source clip.mp4 --fps 2
  flycl watch --model cam.flycl --source rtsp://camera.local/stream --fps 1 --debounce 3 --webhook http://alerts.local/hook
  flycl watch --model cam.flycl --source /dev/video0 --save-doubtful inbox/
  flycl watch --model cam.flycl --source rtsp://camera.local/stream --collect unsorted/ --collect-every 1m
  flycl watch --model cam.flycl --source rtsp://camera.local/stream --zone gate=0,0,0.5,1.0 --zone porch=1280,360,640,720
  flycl watch --model yard.flycl --source rtsp://camera.local/stream --zone gate=0,0,0.5,1.0 --zone car=0.5,0.3,0.5,0.7 --zone-model gate=gate.flycl
  flycl watch --model cam.flycl --source rtsp://camera.local/stream --camera drive --mqtt mqtt://homeassistant.local --mqtt-user flycl --mqtt-password-file mqtt.pw
  flycl watch --config cameras.yaml --metrics 127.0.0.1:9101`,
		RunE: func(cmd *cobra.Command, args []string) error { return runWatch(cmd, &f) },
	}
	fs := c.Flags()
	fs.StringVar(&f.model, "model", "", "model file")
	fs.StringVar(&f.source, "source", "", "video file, rtsp:// or http(s):// URL (MJPEG included), or /dev/videoN")
	fs.Float64Var(&f.fps, "fps", 1, "frames per second to classify (0: every frame)")
	fs.StringArrayVar(&f.zones, "zone", nil, "NAME=X,Y,W,H: classify this rectangle of the frame on its own (repeatable); pixels of the source, or fractions of the frame when a number has a decimal point (left=0,0,0.5,1.0)")
	fs.StringArrayVar(&f.zoneModels, "zone-model", nil, "NAME=FILE: classify zone NAME with the model FILE instead of --model (repeatable; zones naming one file share one loaded copy, reloaded on its own)")
	fs.IntVar(&f.debounce, "debounce", 3, "frames a new answer must hold before it is an event")
	fs.StringVar(&f.webhook, "webhook", "", "URL to POST events to (JSON)")
	fs.IntVar(&f.queue, "webhook-queue", 256, "events waiting for the webhook at most (the oldest is dropped beyond)")
	fs.IntVar(&f.top, "top", 3, "classes per frame line")
	fs.StringVar(&f.unknown, "unknown", "auto", "answer \"unknown\" below a threshold: auto (the model's calibrated one), off, or a number")
	fs.StringVar(&f.backbone, "backbone", "", "another location of the model's backbone weights (default: the model's own)")
	fs.IntVar(&f.threads, "threads", 0, "ONNX Runtime threads (0: one per CPU)")
	fs.String("ort-lib", "", "path to libonnxruntime.so (default $"+envORTLib+", else where scripts/install-deps puts it; see flycl help environment)")
	fs.StringVar(&f.ffmpeg, "ffmpeg", "ffmpeg", "the ffmpeg program")
	fs.IntVar(&f.maxPixels, "max-frame-pixels", watch.DefaultMaxPixels, "largest frame (width × height) read from ffmpeg")
	fs.StringVar(&f.saveDir, "save-doubtful", "", "folder to save frames answered unknown (or below --save-below) for labelling")
	fs.Float64Var(&f.saveBelow, "save-below", 0, "also save frames whose calibrated probability is below this")
	fs.IntVar(&f.saveMax, "save-max", 1000, "frames saved at most")
	fs.IntVar(&f.saveEvery, "save-every", 10, "frames between two saved frames at least")
	fs.StringVar(&f.collectDir, "collect", "", "folder to save a frame (or each zone's crop, in DIR/ZONE/) every --collect-every, whatever the answer, to sort into class folders and learn")
	fs.DurationVar(&f.collectEvery, "collect-every", 10*time.Second, "time between two collected frames of a zone (the video's time for a file)")
	fs.IntVar(&f.collectMax, "collect-max", 500, "files collected at most (then collecting stops)")
	fs.BoolVar(&f.everyFrame, "every-frame", false, "classify every frame of a live source too, holding it back when classification is behind (default: skip to the newest frame)")
	fs.IntVar(&f.retries, "retries", 0, "reconnections in a row without a frame before giving up (0: never give up)")
	fs.DurationVar(&f.stall, "stall", 30*time.Second, "reconnect a stream that gives no frame for this long")
	fs.DurationVar(&f.flush, "flush", 10*time.Second, "at the end, wait this long at most for the webhook queue to empty")
	fs.StringVar(&f.logFormat, "log-format", "text", "log format on stderr: text or json")
	fs.StringVar(&f.mqtt, "mqtt", "", "MQTT broker to publish the answer to: mqtt://HOST[:PORT] or mqtts://HOST[:PORT] (TLS)")
	fs.StringVar(&f.mqttUser, "mqtt-user", "", "MQTT user name")
	fs.StringVar(&f.mqttPasswordFile, "mqtt-password-file", "", "file holding the MQTT password (its first line)")
	fs.StringVar(&f.mqttClientID, "mqtt-client-id", "", "MQTT client id (default flycl-PREFIX_CAMERA)")
	fs.StringVar(&f.mqttPrefix, "mqtt-prefix", "flycl", "first level of the MQTT topics: PREFIX/CAMERA/state, …")
	fs.StringVar(&f.mqttCA, "mqtt-ca", "", "PEM file of the CA that signed an mqtts:// broker's certificate (default: the system's)")
	fs.StringVar(&f.camera, "camera", "camera", "name of this stream in the MQTT topics and in Home Assistant")
	fs.BoolVar(&f.haDiscovery, "ha-discovery", true, "with --mqtt, announce a sensor to Home Assistant (MQTT discovery)")
	fs.StringVar(&f.haPrefix, "ha-prefix", "homeassistant", "Home Assistant's discovery prefix")
	fs.BoolVar(&f.haImage, "ha-image", false, "with --mqtt, also publish the frame (zone crop) that confirmed each answer as a JPEG on PREFIX/CAMERA[/ZONE]/image, a Home Assistant image entity")
	fs.StringVar(&f.config, "config", "", "YAML file of several cameras, each with its source, fps, zones, model, webhook and MQTT (instead of --model, --source, …)")
	fs.StringVar(&f.metrics, "metrics", "", "with --config, serve Prometheus metrics per camera on http://ADDR/metrics (e.g. 127.0.0.1:9101)")
	f.teach.register(fs)
	return c
}

func runWatch(cmd *cobra.Command, f *watchFlags) error {
	if f.config != "" {
		return runWatchCameras(cmd, f)
	} else if f.metrics != "" {
		return fmt.Errorf("--metrics needs --config FILE")
	}
	for _, name := range []string{"collect-every", "collect-max"} {
		if f.collectDir == "" && cmd.Flags().Changed(name) {
			return fmt.Errorf("--%s needs --collect DIR", name)
		}
	}
	switch {
	case f.model == "":
		return fmt.Errorf("give --model FILE")
	case f.source == "":
		return fmt.Errorf("give --source (a video file, a URL or /dev/videoN)")
	case f.fps < 0:
		return fmt.Errorf("--fps must be 0 (every frame) or positive, got %g", f.fps)
	case f.top <= 0:
		return fmt.Errorf("--top must be positive, got %d", f.top)
	case f.queue <= 0:
		return fmt.Errorf("--webhook-queue must be positive, got %d", f.queue)
	case f.maxPixels <= 0:
		return fmt.Errorf("--max-frame-pixels must be positive, got %d", f.maxPixels)
	case f.collectEvery <= 0:
		return fmt.Errorf("--collect-every must be positive, got %s", f.collectEvery)
	case f.collectMax <= 0:
		return fmt.Errorf("--collect-max must be positive, got %d", f.collectMax)
	case f.logFormat != "text" && f.logFormat != "json":
		return fmt.Errorf("--log-format %q: want text or json", f.logFormat)
	}
	if err := f.teach.check(); err != nil {
		return err
	}
	zones, err := watch.ParseZones(f.zones)
	if err != nil {
		return fmt.Errorf("--zone: %w", err)
	}
	zoneFiles, err := watch.ParseZoneModels(f.zoneModels, zones)
	if err != nil {
		return fmt.Errorf("--zone-model %w", err)
	}
	mqttOpts, err := f.mqttOptions()
	if err != nil {
		return err
	}
	if mqttOpts != nil {
		for _, z := range zones {
			mqttOpts.Zones = append(mqttOpts.Zones, z.Name)
			if file, ok := zoneFiles[z.Name]; ok {
				if mqttOpts.ZoneModels == nil {
					mqttOpts.ZoneModels = map[string]string{}
				}
				mqttOpts.ZoneModels[z.Name] = filepath.Base(file)
			}
		}
	}
	ffmpeg, err := exec.LookPath(f.ffmpeg)
	if err != nil {
		return fmt.Errorf("--ffmpeg %s: %w (install ffmpeg, e.g. apt-get install ffmpeg)", f.ffmpeg, err)
	}
	log, err := newLogger(f.logFormat)
	if err != nil {
		return err
	}

	mc, err := openImageClassifier(cmd, f.model, f.backbone, f.unknown, f.threads, "frames")
	if err != nil {
		return err
	}
	defer mc.Close()
	mc.Top = f.top
	p := mc.Predictor

	ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	short := watch.ShortSideFor(mc.Extractor.Preset)
	if len(zones) > 0 {
		short = 0 // zones are cropped from the source's own pixels
	}
	cfg := watch.Config{
		Source:     &watch.FFmpeg{Path: ffmpeg, Input: f.source, FPS: f.fps, ShortSide: short, MaxPixels: f.maxPixels},
		Classify:   mc.ModelClassifier,
		Out:        os.Stdout,
		Zones:      zones,
		Debounce:   f.debounce,
		Log:        log,
		Retries:    f.retries,
		EveryFrame: f.everyFrame,
		Stall:      f.stall,
	}
	if f.saveDir != "" {
		if err := os.MkdirAll(f.saveDir, 0o755); err != nil {
			return fmt.Errorf("--save-doubtful: %w", err)
		}
		cfg.Doubtful = &watch.Saver{Dir: f.saveDir, Below: f.saveBelow, Max: f.saveMax, Every: f.saveEvery}
	}
	if f.collectDir != "" {
		cfg.Collect = &watch.Collector{Dir: f.collectDir, Every: f.collectEvery, Max: f.collectMax}
	}
	stopTeach, err := f.teach.setup(ctx, &cfg, mc, f.model, f.unknown, f.camera, log)
	if err != nil {
		return err
	}
	defer stopTeach()
	// the zones' own models, each file opened once
	opened := map[string]*watch.File{}
	for _, z := range zones {
		file, ok := zoneFiles[z.Name]
		if !ok || opened[file] != nil {
			continue
		}
		zc, err := openImageClassifier(cmd, file, "", f.unknown, f.threads, "frames")
		if err != nil {
			return fmt.Errorf("--zone-model %s=%s: %w", z.Name, file, err)
		}
		defer zc.Close()
		zc.Top = f.top
		opened[file] = zc
		log.Info("zone model", "zone", z.Name, "model", file, "classes", zc.Predictor.Classes().Len(), "version", zc.Predictor.Version())
	}
	byFile, stopZones := f.teach.reloadEach(ctx, opened, f.unknown, log)
	defer stopZones()
	for zone, file := range zoneFiles {
		if cfg.ZoneClassify == nil {
			cfg.ZoneClassify = map[string]watch.Classifier{}
		}
		cfg.ZoneClassify[zone] = byFile[file]
	}
	var pub *mqtt.Publisher
	if mqttOpts != nil {
		mqttOpts.Log, mqttOpts.Model, mqttOpts.ModelVersion = log, filepath.Base(f.model), p.Version()
		mqttOpts.SWVersion, _ = buildVersion()
		if pub, err = mqtt.New(*mqttOpts); err != nil {
			return fmt.Errorf("--mqtt: %w", err)
		}
	}
	finishPoster := func(time.Duration) error { return nil }
	if f.webhook != "" {
		poster := watch.NewPoster(f.webhook, watch.PosterOptions{Queue: f.queue, Log: log})
		cfg.Events = poster
		finishPoster = poster.Start()
	}
	if pub != nil {
		pub.Start(5 * time.Second)
		cfg.Updates = pub
	}
	log.Info("watching", "source", f.source, "model", f.model, "classes", p.Classes().Len(), "backbone", mc.Extractor.Backbone.Name, "fps", f.fps, "scale_short_side", short, "zones", len(zones))
	_, runErr := watch.Run(ctx, cfg)
	if err := finishPoster(f.flush); err != nil && runErr == nil {
		runErr = fmt.Errorf("--webhook %s: %w", f.webhook, err)
	}
	if pub != nil {
		if err := pub.Finish(f.flush); err != nil && runErr == nil {
			runErr = fmt.Errorf("--mqtt %s: %w", f.mqtt, err)
		}
	}
	return runErr
}

// mqttOptions resolves the MQTT flags (nil without --mqtt).
func (f *watchFlags) mqttOptions() (*mqtt.Options, error) {
	if f.mqtt == "" {
		if f.haImage {
			return nil, fmt.Errorf("--ha-image needs --mqtt")
		}
		for _, fl := range []struct{ name, v string }{{"mqtt-user", f.mqttUser}, {"mqtt-password-file", f.mqttPasswordFile},
			{"mqtt-client-id", f.mqttClientID}, {"mqtt-ca", f.mqttCA}} {
			if fl.v != "" {
				return nil, fmt.Errorf("--%s needs --mqtt", fl.name)
			}
		}
		return nil, nil
	}
	o := &mqtt.Options{Broker: f.mqtt, Username: f.mqttUser, ClientID: f.mqttClientID, Prefix: f.mqttPrefix, Camera: f.camera,
		Discovery: f.haDiscovery, DiscoveryPrefix: f.haPrefix, Image: f.haImage}
	if f.mqttPasswordFile != "" {
		b, err := os.ReadFile(f.mqttPasswordFile)
		if err != nil {
			return nil, fmt.Errorf("--mqtt-password-file: %w", err)
		}
		if o.Password, err = mqtt.ParsePassword(b); err != nil {
			return nil, fmt.Errorf("--mqtt-password-file %s: %w", f.mqttPasswordFile, err)
		}
	}
	if f.mqttCA != "" {
		pem, err := os.ReadFile(f.mqttCA)
		if err != nil {
			return nil, fmt.Errorf("--mqtt-ca: %w", err)
		}
		if o.TLS, err = mqtt.ParseCA(pem); err != nil {
			return nil, fmt.Errorf("--mqtt-ca %s: %w", f.mqttCA, err)
		}
	}
	if _, err := mqtt.New(*o); err != nil { // checked before the model loads
		return nil, fmt.Errorf("--mqtt: %w", err)
	}
	return o, nil
}
