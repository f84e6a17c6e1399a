package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/flycl/flycl/app/watch"
	"github.com/flycl/flycl/app/watch/cameras"
)

// cameraFlags are watch's flags that a camera of --config's file sets
// for itself.
var cameraFlags = []string{"model", "source", "fps", "zone", "zone-model", "debounce", "webhook", "webhook-queue", "top", "unknown", "backbone",
	"save-doubtful", "save-below", "save-max", "save-every", "collect", "collect-every", "collect-max", "every-frame", "retries", "stall",
	"mqtt", "mqtt-user", "mqtt-password-file", "mqtt-client-id", "mqtt-prefix", "mqtt-ca", "camera", "ha-discovery", "ha-prefix", "ha-image"}

// runWatchCameras runs the cameras of --config's file (package
// app/watch/cameras) with the flags that apply to all of them.
func runWatchCameras(cmd *cobra.Command, f *watchFlags) error {
	for _, name := range cameraFlags {
		if cmd.Flags().Changed(name) {
			return fmt.Errorf("--%s: with --config each camera sets this in the file (see docs/WATCH.md)", name)
		}
	}
	if f.logFormat != "text" && f.logFormat != "json" {
		return fmt.Errorf("--log-format %q: want text or json", f.logFormat)
	}
	if f.maxPixels <= 0 {
		return fmt.Errorf("--max-frame-pixels must be positive, got %d", f.maxPixels)
	}
	file, err := cameras.Load(f.config)
	if err != nil {
		return fmt.Errorf("--config: %w", err)
	}
	ffmpeg, err := exec.LookPath(f.ffmpeg)
	if err != nil {
		return fmt.Errorf("--ffmpeg %s: %w (install ffmpeg, e.g. apt-get install ffmpeg)", f.ffmpeg, err)
	}
	log, err := newLogger(f.logFormat)
	if err != nil {
		return err
	}
	sw, _ := buildVersion()
	if f.teach.reload < 0 {
		return fmt.Errorf("--reload %s: must be 0 (never) or positive", f.teach.reload)
	}
	open := func(ctx context.Context, k cameras.ModelKey) (*cameras.Model, error) {
		mc, err := openImageClassifier(cmd, k.Model, k.Backbone, k.Unknown, f.threads, "frames")
		if err != nil {
			return nil, err
		}
		mc.Top = k.Top
		log.Info("model", "model", k.Model, "classes", mc.Predictor.Classes().Len(), "backbone", mc.Extractor.Name())
		m := &cameras.Model{Classifier: mc.ModelClassifier, ShortSide: watch.ShortSideFor(mc.Extractor.Preset), Name: filepath.Base(k.Model),
			Version: mc.Predictor.Version(), Close: mc.Close}
		if f.teach.reload > 0 { // each model file reloads on its own
			byFile, stopReload := f.teach.reloadEach(ctx, map[string]*watch.File{k.Model: mc}, k.Unknown, log)
			m.Classifier = byFile[k.Model]
			m.Close = func() error { stopReload(); return mc.Close() }
		}
		return m, nil
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	set, err := cameras.New(ctx, file, cameras.Options{Open: open, FFmpeg: ffmpeg, MaxPixels: f.maxPixels, Out: os.Stdout, Log: log,
		MetricsAddr: f.metrics, Flush: f.flush, SWVersion: sw})
	if err != nil {
		return fmt.Errorf("--config %s: %w", f.config, err)
	}
	res, err := set.Run(ctx)
	for _, r := range res {
		log.Info("camera ended", "camera", r.Camera, "frames", r.Stats.Classified, "read", r.Stats.Frames, "dropped", r.Stats.Stale,
			"events", r.Stats.Events, "reconnects", r.Stats.Reconnects, "err", r.Err)
	}
	return err
}
