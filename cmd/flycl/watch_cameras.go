package main

import (
	"fmt"
	"os"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/flycl/flycl/app/watch/cameras"
)

// cameraFlags are watch's flags that a camera of --config's file sets
// for itself.
var cameraFlags = []string{"model", "source", "fps", "zone", "zone-model", "debounce", "webhook", "webhook-queue", "top", "unknown", "backbone",
	"save-doubtful", "save-below", "save-max", "save-every", "collect", "collect-every", "collect-max", "every-frame", "retries", "stall",
	"mqtt", "mqtt-user", "mqtt-password-file", "mqtt-client-id", "mqtt-prefix", "mqtt-ca", "camera", "ha-discovery", "ha-prefix", "ha-image"}

// runWatchCameras runs the cameras of --config's file (package
// app/watch/cameras: cameras.Several) with the flags that apply to all
// of them.
func runWatchCameras(cmd *cobra.Command, f *watchFlags) error {
	for _, name := range cameraFlags {
		if cmd.Flags().Changed(name) {
			return fmt.Errorf("--%s: with --config each camera sets this in the file (see docs/WATCH.md)", name)
		}
	}
	c := f.cam
	v := cameras.Several{Config: f.config, FFmpeg: c.FFmpeg, MaxPixels: c.MaxPixels, Threads: c.Threads, Reload: c.Reload, Flush: c.Flush,
		Metrics: c.Metrics, LogFormat: c.LogFormat, Resolver: resolver(cmd.Flags()), Out: os.Stdout,
		Warn: func(w string) { fmt.Fprintf(os.Stderr, "warning: %s\n", w) }}
	v.SWVersion, _ = buildVersion()
	v.Signals = []os.Signal{syscall.SIGTERM, os.Interrupt}
	_, err := v.Run(cmd.Context())
	return watchFlagNames(err)
}
