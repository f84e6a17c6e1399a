package main

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/flycl/flycl/app/frigate"
	"github.com/flycl/flycl/app/watch"
	"github.com/flycl/flycl/app/watch/mqtt"
	"github.com/flycl/flycl/cmd/internal/cli"
	"github.com/flycl/flycl/internal/flagbind"
	"github.com/flycl/flycl/internal/smallfile"
	"github.com/flycl/flycl/reject"
)

// addMQTTLoginFlags adds the broker login flags flycl watch and flycl
// frigate share.
func addMQTTLoginFlags(fs *pflag.FlagSet, user, passwordFile *string) {
	fs.StringVar(user, "mqtt-user", "", "MQTT user name")
	fs.StringVar(passwordFile, "mqtt-password-file", "", "file holding the MQTT password (its first line)")
}

type frigateFlags struct {
	mqtt, prefix, clientID, frigate, model, backbone, unknown string
	mqttUser, mqttPasswordFile                                string
	frigateUser, frigatePasswordFile, frigateCA, cookie       string
	inbox                                                     inboxFlags
	labels, cameras                                           []string
	minBox, minProb, agreement, objectKeep                    float64
	queue, retries, threads, minTries, maxTries               int
	quality, height, workers                                  int
	timeout, reload                                           time.Duration
	overwrite, noUpdate                                       bool
}

func (f *frigateFlags) addFlags(c *cobra.Command) {
	fl := c.Flags()
	fl.StringVar(&f.mqtt, "mqtt", "", "MQTT broker Frigate publishes to: mqtt://HOST:PORT")
	addMQTTLoginFlags(fl, &f.mqttUser, &f.mqttPasswordFile)
	fl.StringVar(&f.prefix, "topic-prefix", "frigate", "Frigate's MQTT topic_prefix")
	fl.StringVar(&f.clientID, "client-id", "flycl-frigate", "MQTT client id")
	fl.StringVar(&f.frigate, "frigate", "", "Frigate's HTTP API: http://HOST:5000, or https://HOST:8971 with --frigate-user")
	fl.StringVar(&f.frigateUser, "frigate-user", "", "Frigate user (admin role) to log in as on its authenticated port (8971)")
	fl.StringVar(&f.frigatePasswordFile, "frigate-password-file", "", "file holding the Frigate user's password (its first line)")
	fl.StringVar(&f.frigateCA, "frigate-ca", "", "PEM file of the certificate (or its CA) an https:// Frigate presents (default: the system's)")
	fl.StringVar(&f.cookie, "frigate-cookie", "frigate_token", "name of Frigate's token cookie (its auth.cookie_name)")
	fl.StringVar(&f.model, "model", "", "model file")
	fl.StringVar(&f.backbone, "backbone", "", "backbone weights (default: the model's)")
	fl.StringVar(&f.unknown, "unknown", "auto", "answer \"unknown\" below a threshold: auto (the model's calibrated one), off, a number (a raw score), or keep:SHARE (the threshold that keeps that share of the photos it learned, e.g. keep:0.9); an unknown try votes for none")
	fl.StringSliceVar(&f.labels, "labels", nil, "Frigate labels to classify (default: all)")
	fl.StringSliceVar(&f.cameras, "cameras", nil, "Frigate cameras to classify (default: all)")
	fl.Float64Var(&f.minBox, "min-box", 64, "least shorter side of an object's box, in pixels")
	fl.Float64Var(&f.minProb, "min-probability", 0, "least probability of a try that votes for its class (below: a vote for none)")
	fl.IntVar(&f.minTries, "min-tries", 3, "tries (distinct snapshots) of an object before its sub-label is decided (Frigate's classifier: 3)")
	fl.Float64Var(&f.agreement, "agreement", 0.6, "least share of an object's tries, unknown ones included, that name its sub-label (Frigate's classifier: 0.6)")
	fl.Float64Var(&f.objectKeep, "object-keep", 0, "share of known objects (seen --min-tries times) the vote labels: the per-try threshold is calibrated for it (keep:SHARE of --unknown at frigate.Rule.TryKeep; 0: --unknown decides)")
	fl.IntVar(&f.maxTries, "max-tries", 16, "tries of one object at most (Frigate's classifier: 16)")
	fl.BoolVar(&f.noUpdate, "no-tracked-object-update", false, "do not publish PREFIX/tracked_object_update when a sub-label is set (as Frigate's own classifier does)")
	fl.BoolVar(&f.overwrite, "overwrite", false, "replace a sub-label another source set (face recognition, licence plates, Frigate's classifiers, a person)")
	fl.IntVar(&f.quality, "quality", 95, "JPEG quality of the snapshots asked of Frigate")
	fl.IntVar(&f.height, "height", 0, "height of the snapshots asked of Frigate (0: the model's resize, 256 for the presets)")
	fl.IntVar(&f.workers, "workers", 4, "snapshots fetched at once (one camera holds half of them at most)")
	fl.DurationVar(&f.timeout, "timeout", 10*time.Second, "overall deadline of one HTTP request to Frigate, body included")
	fl.DurationVar(&f.reload, "reload", watch.DefaultReloadInterval, "how often to check the model file for a new version, used from the next try on (0: never)")
	fl.IntVar(&f.queue, "queue", 64, "snapshots waiting for classification at most (the oldest is dropped)")
	fl.IntVar(&f.retries, "retries", 3, "retries of a failed HTTP request (backoff doubling from 200 ms)")
	fl.IntVar(&f.threads, "threads", 0, "ONNX Runtime threads (0: its default)")
	fl.String("ort-lib", "", "path to libonnxruntime.so (default $"+cli.EnvORTLib+"; see flycl help environment)")
}

func frigateCmd() *cobra.Command {
	f := &frigateFlags{}
	c := &cobra.Command{
		Use:   "frigate",
		Short: "Classify Frigate's tracked objects and set their sub-labels",
		Long: `frigate subscribes to Frigate's <prefix>/events MQTT topic; for each new or updated
tracked object of the given labels and cameras whose box is at least --min-box pixels on its
shorter side, it fetches the object's current best snapshot from Frigate's HTTP API (from
Frigate's memory: snapshots need not be enabled), cropped without Frigate's drawings, and
classifies it. Each new snapshot of an object is a try (at most --max-tries); once --min-tries
tries were made and at least --agreement of them name one class, that class is set as the
object's sub-label, once, with the mean probability as its score. A sub-label another source
set is left alone unless --overwrite. On Frigate's authenticated port, give --frigate-user and
--frigate-password-file. Counters are printed as JSON at the end (Ctrl-C, SIGTERM); the exit
status is 1 when nothing was labelled.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runFrigate(cmd, f) },
	}
	f.addFlags(c)
	f.inbox.add(c.Flags())
	return c
}

func runFrigate(cmd *cobra.Command, f *frigateFlags) error {
	retries := f.retries
	if retries == 0 {
		retries = -1 // --retries 0: none (frigate.Config's 0 is its default)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	cfg := frigate.Config{Frigate: f.frigate, Labels: f.labels, Cameras: f.cameras, MinBox: f.minBox, MinProbability: f.minProb,
		Rule: frigate.Rule{MinTries: f.minTries, Agreement: f.agreement}, MaxTries: f.maxTries, Overwrite: f.overwrite,
		Quality: f.quality, Height: f.height, Workers: f.workers, Timeout: f.timeout, Cookie: f.cookie,
		Queue: f.queue, Retries: retries, Log: log, Model: filepath.Base(f.model), NoUpdate: f.noUpdate}
	switch {
	case f.mqtt == "":
		return fmt.Errorf("give --mqtt mqtt://HOST:PORT")
	case f.frigate == "":
		return fmt.Errorf("give --frigate http://HOST:5000")
	case f.model == "":
		return fmt.Errorf("give --model FILE")
	case f.quality < 1:
		return fmt.Errorf("--quality must be in [1, 100], got %d", f.quality)
	case f.workers < 1 || f.timeout <= 0:
		return fmt.Errorf("--workers and --timeout must be positive, got %d and %v", f.workers, f.timeout)
	case (f.frigateUser == "") != (f.frigatePasswordFile == ""):
		return fmt.Errorf("give --frigate-user and --frigate-password-file together")
	}
	if err := cfg.Check(); err != nil { // before the model loads
		return frigateFlagError(err)
	}
	if f.objectKeep != 0 {
		if !(f.objectKeep > 0 && f.objectKeep <= 1) {
			return fmt.Errorf("--object-keep must be a share in (0, 1], got %g", f.objectKeep)
		}
		if f.unknown != "auto" {
			return fmt.Errorf("--object-keep sets the per-try threshold: give it or --unknown, not both")
		}
		f.unknown = reject.KeepPrefix + strconv.FormatFloat(cfg.Rule.TryKeep(f.objectKeep), 'g', -1, 64)
		log.Info("per-try rejection calibrated for the objects' share", "object_keep", f.objectKeep, "try_keep", f.unknown)
	}
	if f.queue <= 0 { // frigate.Config's 0 is its default; the flag's is 64
		return fmt.Errorf("--queue must be positive, got %d", f.queue)
	}
	if err := f.inbox.check(); err != nil {
		return err
	}
	m := frigate.MQTT{Broker: f.mqtt, Prefix: f.prefix, ClientID: f.clientID, Username: f.mqttUser}
	if f.mqttPasswordFile != "" {
		pw, err := mqtt.ReadPasswordFile(f.mqttPasswordFile)
		if err != nil {
			return fmt.Errorf("--mqtt-password-file: %w", err)
		}
		m.Password = pw
	}
	if f.frigateUser != "" {
		pw, err := mqtt.ReadPasswordFile(f.frigatePasswordFile)
		if err != nil {
			return fmt.Errorf("--frigate-password-file: %w", err)
		}
		cfg.User, cfg.Password = f.frigateUser, pw
	}
	if f.frigateCA != "" {
		pem, err := smallfile.Read(f.frigateCA, smallfile.CALimit)
		if err != nil {
			return fmt.Errorf("--frigate-ca: %w", err)
		}
		tc, err := mqtt.ParseCA(pem)
		if err != nil {
			return fmt.Errorf("--frigate-ca %s: %w", f.frigateCA, err)
		}
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.TLSClientConfig = tc
		cfg.HTTP = &http.Client{Transport: tr}
	}
	mc, err := openImageClassifier(cmd, f.model, f.backbone, f.unknown, f.threads, "snapshots")
	if err != nil {
		return err
	}
	defer mc.Close()
	classify, stopReload := mc.Follow(cmd.Context(), f.model, f.reload, f.unknown, log)
	defer stopReload()
	cfg.Classify = classify
	if cfg.Height == 0 {
		cfg.Height = mc.Extractor.Preset.Resize
	}
	keep, err := f.inbox.keeper(log)
	if err != nil {
		return err
	}
	if keep != nil {
		defer keep.Close()
		cfg.Keep = keep.Keep
	}
	l, err := frigate.New(cfg)
	if err != nil {
		return frigateFlagError(err)
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	st, err := frigate.Listen(ctx, m, l)
	b, _ := json.Marshal(st)
	fmt.Fprintln(cmd.OutOrStdout(), string(b))
	if err != nil && ctx.Err() == nil {
		return err
	}
	if st.Labelled == 0 {
		return fmt.Errorf("nothing was labelled (%d messages, %d tries, %d errors): see the counters and the log", st.Received, st.Classified, st.Errors)
	}
	return nil
}

// frigateFlagError makes the field error in err name flycl frigate's
// flags (frigate.Config's flag tags: flagbind.Names).
func frigateFlagError(err error) error { return namedByFlags(err, flagbind.Names(frigate.Config{})) }
