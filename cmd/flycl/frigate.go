package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/flycl/flycl/app/frigate"
)

type frigateFlags struct {
	mqtt, prefix, clientID, frigate, model, backbone, unknown string
	labels, cameras                                           []string
	minBox, minProb                                           float64
	queue, retries, threads                                   int
}

func (f *frigateFlags) addFlags(c *cobra.Command) {
	fl := c.Flags()
	fl.StringVar(&f.mqtt, "mqtt", "", "MQTT broker Frigate publishes to: mqtt://HOST:PORT")
	fl.StringVar(&f.prefix, "topic-prefix", "frigate", "Frigate's MQTT topic_prefix")
	fl.StringVar(&f.clientID, "client-id", "flycl-frigate", "MQTT client id")
	fl.StringVar(&f.frigate, "frigate", "", "Frigate's HTTP API: http://HOST:5000")
	fl.StringVar(&f.model, "model", "", "model file")
	fl.StringVar(&f.backbone, "backbone", "", "backbone weights (default: the model's)")
	fl.StringVar(&f.unknown, "unknown", "auto", "answer \"unknown\" below a threshold: auto (the model's calibrated one), off, or a number; unknown answers are not posted")
	fl.StringSliceVar(&f.labels, "labels", nil, "Frigate labels to classify (default: all)")
	fl.StringSliceVar(&f.cameras, "cameras", nil, "Frigate cameras to classify (default: all)")
	fl.Float64Var(&f.minBox, "min-box", 64, "least shorter side of an object's box, in pixels")
	fl.Float64Var(&f.minProb, "min-probability", 0, "least probability of a posted sub-label")
	fl.IntVar(&f.queue, "queue", 64, "objects waiting for classification at most (the oldest is dropped)")
	fl.IntVar(&f.retries, "retries", 3, "retries of a failed HTTP request (backoff doubling from 200 ms)")
	fl.IntVar(&f.threads, "threads", 0, "ONNX Runtime threads (0: its default)")
	fl.String("ort-lib", "", "path to libonnxruntime.so (default $"+envORTLib+"; see flycl help environment)")
}

func frigateCmd() *cobra.Command {
	f := &frigateFlags{}
	c := &cobra.Command{
		Use:   "frigate",
		Short: "Classify Frigate's tracked objects and set their sub-labels",
		Long: `frigate subscribes to Frigate's <prefix>/events MQTT topic; for each new or updated
tracked object of the given labels and cameras whose box is at least --min-box pixels on its
shorter side, it fetches the object's snapshot crop from Frigate's HTTP API, classifies it with
the model and sets the answer as the object's sub-label with its probability as the score.
"unknown" answers are not posted. Counters are printed as JSON at the end (Ctrl-C, SIGTERM).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runFrigate(cmd, f) },
	}
	f.addFlags(c)
	return c
}

func runFrigate(cmd *cobra.Command, f *frigateFlags) error {
	retries := f.retries
	if retries == 0 {
		retries = -1 // --retries 0: none (frigate.Config's 0 is its default)
	}
	cfg := frigate.Config{Frigate: f.frigate, Labels: f.labels, Cameras: f.cameras, MinBox: f.minBox, MinProbability: f.minProb,
		Queue: f.queue, Retries: retries, Log: slog.New(slog.NewTextHandler(os.Stderr, nil))}
	switch {
	case f.mqtt == "":
		return fmt.Errorf("give --mqtt mqtt://HOST:PORT")
	case f.frigate == "":
		return fmt.Errorf("give --frigate http://HOST:5000")
	case f.model == "":
		return fmt.Errorf("give --model FILE")
	}
	if err := cfg.Check(); err != nil { // before the model loads
		return frigateFlagError(err)
	}
	if f.queue <= 0 { // frigate.Config's 0 is its default; the flag's is 64
		return fmt.Errorf("--queue must be positive, got %d", f.queue)
	}
	mc, err := openImageClassifier(cmd, f.model, f.backbone, f.unknown, f.threads, "snapshots")
	if err != nil {
		return err
	}
	defer mc.Close()
	cfg.Classify = mc.ModelClassifier
	l, err := frigate.New(cfg)
	if err != nil {
		return frigateFlagError(err)
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	st, err := frigate.Listen(ctx, frigate.MQTT{Broker: f.mqtt, Prefix: f.prefix, ClientID: f.clientID}, l)
	b, _ := json.Marshal(st)
	fmt.Fprintln(cmd.OutOrStdout(), string(b))
	if err != nil && ctx.Err() == nil {
		return err
	}
	return nil
}

// frigateFlagError names a *frigate.FieldError's field by its flag.
func frigateFlagError(err error) error {
	var fe *frigate.FieldError
	if errors.As(err, &fe) {
		fe.Name = func(field string) string {
			return map[string]string{"MinBox": "--min-box", "MinProbability": "--min-probability", "Frigate": "--frigate"}[field]
		}
	}
	return err
}
