package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/spf13/pflag"

	"github.com/flycl/flycl/app/inbox"
	"github.com/flycl/flycl/app/watch"
)

// watchTeachFlags are flycl watch's labelling inbox and model reload.
type watchTeachFlags struct {
	inboxDir     string
	inbox        inbox.Options
	policy       inbox.Policy
	inboxEvery   int
	inboxChanges bool
	reload       time.Duration
	set          func(string) bool
}

func (f *watchTeachFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.inboxDir, "inbox", "", "keep the frames (zone crops) answered unknown, unsure or at a change of state in this labelling inbox, the folder flycl serve --inbox shows and learns from (docs/WATCH.md)")
	fs.IntVar(&f.inbox.MaxItems, "inbox-max-items", inbox.DefaultMaxItems, "inbox: items kept (the oldest are dropped first)")
	fs.Int64Var(&f.inbox.MaxBytes, "inbox-max-bytes", inbox.DefaultMaxBytes, "inbox: bytes of its files (the oldest items are dropped first)")
	fs.Float64Var(&f.policy.Probability, "inbox-below", inbox.DefaultProbability, "inbox: also keep frames whose calibrated probability is below this")
	fs.Float64Var(&f.policy.Margin, "inbox-margin", inbox.DefaultMargin, "inbox: for a model without calibrated probabilities, keep frames whose two best scores differ by less than this")
	fs.IntVar(&f.inboxEvery, "inbox-every", 10, "inbox: frames between two kept frames of a zone at least (a change of state is always kept)")
	fs.BoolVar(&f.inboxChanges, "inbox-changes", true, "inbox: also keep the frame that confirmed each change of the answer")
	fs.DurationVar(&f.reload, "reload", watch.DefaultReloadInterval, "check the model file this often and use a new version without a restart (0: never)")
	f.set = fs.Changed
}

// check checks the flags (before the model loads).
func (f *watchTeachFlags) check() error {
	if f.inboxDir == "" {
		if err := inboxOnly(f.set, "inbox-max-items", "inbox-max-bytes", "inbox-below", "inbox-margin", "inbox-every", "inbox-changes"); err != nil {
			return err
		}
	}
	if err := checkInboxFlags(f.inbox, f.policy); err != nil {
		return err
	}
	switch {
	case f.inboxEvery < 1:
		return fmt.Errorf("--inbox-every %d: must be at least 1", f.inboxEvery)
	case f.reload < 0:
		return fmt.Errorf("--reload %s: must be 0 (never) or positive", f.reload)
	}
	return nil
}

// setup opens the inbox and starts the model file's watcher, as the
// flags ask: cfg gets the keeper and the reloading classifier. stop ends
// both once watch.Run has returned.
func (f *watchTeachFlags) setup(ctx context.Context, cfg *watch.Config, mc *watch.File, model, unknown, camera string, log *slog.Logger) (stop func(), err error) {
	var stops []func()
	stop = func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	if f.reload > 0 {
		rl := watch.NewReloading(mc.ModelClassifier)
		cfg.Classify = rl
		fw := &watch.FileWatcher{Path: model, Interval: f.reload, Into: rl, Unknown: unknown, Pipeline: mc.Extractor.Pipeline(), Log: log}
		stopWatcher := fw.Start(ctx)
		stops = append(stops, func() {
			n, failed := stopWatcher()
			log.Info("model reloads", "reloads", n, "failed", failed)
		})
	}
	if f.inboxDir != "" {
		ib, err := openInbox(f.inboxDir, f.inbox, log)
		if err != nil {
			stop()
			return nil, err
		}
		k := &watch.Keeper{Inbox: ib, Policy: f.policy, Camera: camera, Changes: f.inboxChanges, Every: f.inboxEvery, Log: log}
		cfg.Inbox = k
		stops = append(stops, func() {
			k.Close()
			st := k.Stats()
			log.Info("inbox", "kept", st.Kept, "dropped", st.Dropped, "failed", st.Failed)
			ib.Close()
		})
	}
	return stop, nil
}

// reloadEach returns a classifier per model file of opened: with --reload
// a watch.Reloading fed by its own watch.FileWatcher (each file reloads
// on its own), else the model as opened. stop ends the watchers once
// watch.Run has returned.
func (f *watchTeachFlags) reloadEach(ctx context.Context, opened map[string]*watch.File, unknown string, log *slog.Logger) (map[string]watch.Classifier, func()) {
	out := map[string]watch.Classifier{}
	var stops []func()
	for file, mc := range opened {
		if f.reload <= 0 {
			out[file] = mc.ModelClassifier
			continue
		}
		rl := watch.NewReloading(mc.ModelClassifier)
		out[file] = rl
		fw := &watch.FileWatcher{Path: file, Interval: f.reload, Into: rl, Unknown: unknown, Pipeline: mc.Extractor.Pipeline(), Log: log}
		stopWatcher := fw.Start(ctx)
		stops = append(stops, func() {
			n, failed := stopWatcher()
			log.Info("model reloads", "model", file, "reloads", n, "failed", failed)
		})
	}
	return out, func() {
		for _, s := range stops {
			s()
		}
	}
}
