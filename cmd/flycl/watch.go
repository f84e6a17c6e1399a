package main

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/flycl/flycl/app/watch"
	"github.com/flycl/flycl/app/watch/cameras"
	"github.com/flycl/flycl/cmd/internal/cli"
	"github.com/flycl/flycl/internal/flagbind"
)

// watchFlags are flycl watch's flags: one camera's (cameras.Single),
// or a file of cameras (--config: cameras.Several).
type watchFlags struct {
	cam        cameras.Single
	objectKeep float64 // --object-keep
	config     string  // several cameras from a file (watch_cameras.go)
	remove     bool    // --mqtt-remove
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
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runWatch(cmd, &f) },
	}
	fs := c.Flags()
	fs.StringVar(&f.cam.Model, "model", "", "model file")
	fs.StringVar(&f.cam.Source, "source", "", "video file, rtsp:// or http(s):// URL (MJPEG included), or /dev/videoN")
	fs.Float64Var(&f.cam.FPS, "fps", 1, "frames per second to classify (0: every frame)")
	fs.StringArrayVar(&f.cam.Zones, "zone", nil, "NAME=X,Y,W,H: classify this rectangle of the frame on its own (repeatable); pixels of the source, or fractions of the frame when a number has a decimal point (left=0,0,0.5,1.0)")
	fs.StringArrayVar(&f.cam.ZoneModels, "zone-model", nil, "NAME=FILE: classify zone NAME with the model FILE instead of --model (repeatable; zones naming one file share one loaded copy, reloaded on its own)")
	fs.IntVar(&f.cam.Debounce, "debounce", 3, "frames a new answer must hold before it is an event")
	fs.StringVar(&f.cam.Webhook, "webhook", "", "URL to POST events to (JSON)")
	fs.IntVar(&f.cam.WebhookQueue, "webhook-queue", 256, "events waiting for the webhook at most (the oldest is dropped beyond)")
	fs.IntVar(&f.cam.Top, "top", 3, "classes per frame line")
	fs.StringVar(&f.cam.Unknown, "unknown", "auto", "answer \"unknown\" below a threshold: auto (the model's calibrated one), off, a number (a raw score), or keep:SHARE (the threshold that keeps that share of the photos it learned, e.g. keep:0.9)")
	fs.Float64Var(&f.objectKeep, "object-keep", 0, "share of known objects a zone's state confirms: the per-frame threshold keeps 1 − (1 − SHARE)/--debounce of the known photos (0: --unknown decides)")
	fs.StringVar(&f.cam.Backbone, "backbone", "", "another location of the model's backbone weights (default: the model's own)")
	fs.IntVar(&f.cam.Threads, "threads", 0, "ONNX Runtime threads (0: one per CPU)")
	fs.String("ort-lib", "", "path to libonnxruntime.so (default $"+cli.EnvORTLib+", else where scripts/install-deps puts it; see flycl help environment)")
	fs.StringVar(&f.cam.FFmpeg, "ffmpeg", "ffmpeg", "the ffmpeg program")
	fs.IntVar(&f.cam.MaxPixels, "max-frame-pixels", watch.DefaultMaxPixels, "largest frame (width × height) read from ffmpeg")
	fs.StringVar(&f.cam.Save.Dir, "save-doubtful", "", "folder to save frames answered unknown (or below --save-below) for labelling")
	fs.Float64Var(&f.cam.Save.Below, "save-below", 0, "also save frames whose calibrated probability is below this")
	fs.IntVar(&f.cam.Save.Max, "save-max", 1000, "frames saved at most")
	fs.IntVar(&f.cam.Save.Every, "save-every", 10, "frames between two saved frames at least")
	fs.StringVar(&f.cam.Collect.Dir, "collect", "", "folder to save a frame (or each zone's crop, in DIR/ZONE/) every --collect-every, whatever the answer, to sort into class folders and learn")
	fs.DurationVar(&f.cam.Collect.Every, "collect-every", 10*time.Second, "time between two collected frames of a zone (the video's time for a file)")
	fs.IntVar(&f.cam.Collect.Max, "collect-max", 500, "files collected at most (then collecting stops)")
	fs.BoolVar(&f.cam.EveryFrame, "every-frame", false, "classify every frame of a live source too, holding it back when classification is behind (default: skip to the newest frame)")
	fs.IntVar(&f.cam.Retries, "retries", 0, "reconnections in a row without a frame before giving up (0: never give up)")
	fs.DurationVar(&f.cam.Stall, "stall", 30*time.Second, "reconnect a stream that gives no frame for this long")
	fs.DurationVar(&f.cam.Flush, "flush", 10*time.Second, "at the end, wait this long at most for the webhook queue to empty")
	fs.StringVar(&f.cam.LogFormat, "log-format", "text", "log format on stderr: text or json")
	fs.StringVar(&f.cam.MQTT.Broker, "mqtt", "", "MQTT broker to publish the answer to: mqtt://HOST[:PORT] or mqtts://HOST[:PORT] (TLS)")
	addMQTTLoginFlags(fs, &f.cam.MQTT.User, &f.cam.MQTT.PasswordFile)
	fs.BoolVar(&f.remove, "mqtt-remove", false, "retire --camera: empty its retained MQTT topics and Home Assistant discovery configs (Home Assistant deletes its entities), then exit")
	fs.StringVar(&f.cam.MQTT.ClientID, "mqtt-client-id", "", "MQTT client id (default flycl-PREFIX_CAMERA)")
	fs.StringVar(&f.cam.MQTT.Prefix, "mqtt-prefix", "flycl", "first level of the MQTT topics: PREFIX/CAMERA/state, …")
	fs.StringVar(&f.cam.MQTT.CA, "mqtt-ca", "", "PEM file of the CA that signed an mqtts:// broker's certificate (default: the system's)")
	fs.StringVar(&f.cam.Camera, "camera", "camera", "name of this stream in the MQTT topics and in Home Assistant")
	fs.BoolVar(&f.cam.MQTT.Discovery, "ha-discovery", true, "with --mqtt, announce a sensor to Home Assistant (MQTT discovery)")
	fs.StringVar(&f.cam.MQTT.DiscoveryPrefix, "ha-prefix", "homeassistant", "Home Assistant's discovery prefix")
	fs.BoolVar(&f.cam.MQTT.Image, "ha-image", false, "with --mqtt, also publish the frame (zone crop) that confirmed each answer as a JPEG on PREFIX/CAMERA[/ZONE]/image, a Home Assistant image entity")
	fs.StringVar(&f.config, "config", "", "YAML file of several cameras, each with its source, fps, zones, model, webhook and MQTT (instead of --model, --source, …)")
	fs.StringVar(&f.cam.Metrics, "metrics", "", "with --config, serve Prometheus metrics per camera on http://ADDR/metrics (e.g. 127.0.0.1:9101)")
	registerWatchTeach(fs, &f.cam)
	return c
}

func runWatch(cmd *cobra.Command, f *watchFlags) error {
	if f.remove {
		if f.config != "" {
			return fmt.Errorf("--mqtt-remove retires one camera: give --mqtt and --camera, not --config")
		}
		topics, err := f.cam.RemoveMQTT(2 * time.Second)
		for _, t := range topics {
			fmt.Fprintln(cmd.OutOrStdout(), "removed", t)
		}
		return watchFlagNames(err)
	}
	if f.config != "" {
		if cmd.Flags().Changed("object-keep") {
			return fmt.Errorf("--object-keep: with --config each camera sets object_keep in the file (see docs/WATCH.md)")
		}
		return runWatchCameras(cmd, f)
	}
	s := f.cam
	if f.objectKeep != 0 {
		if cmd.Flags().Changed("unknown") {
			return fmt.Errorf("--object-keep sets the per-frame threshold: give it or --unknown, not both")
		}
		u, err := cameras.ObjectKeepChoice(f.objectKeep, s.Debounce)
		if err != nil {
			return fmt.Errorf("--object-keep: %w", err)
		}
		s.Unknown = u
	}
	fields := watchFields()
	s.Given = func(field string) bool { return cmd.Flags().Changed(strings.TrimPrefix(fields[field], "--")) }
	s.Resolver, s.Warn = resolver(cmd.Flags()), func(w string) { fmt.Fprintf(os.Stderr, "warning: %s\n", w) }
	s.Out, s.Signals = os.Stdout, []os.Signal{syscall.SIGTERM, os.Interrupt}
	s.SWVersion, _ = buildVersion()
	_, err := s.Run(cmd.Context())
	return watchFlagNames(err)
}

// watchFields are flycl watch's flags by the field of cameras.Single and
// cameras.Several they set (their flag tags: flagbind.Names).
func watchFields() map[string]string { return flagbind.Names(cameras.Single{}, cameras.Several{}) }

// watchFlagNames makes the field error in err name flycl watch's flags.
func watchFlagNames(err error) error { return namedByFlags(err, watchFields()) }
