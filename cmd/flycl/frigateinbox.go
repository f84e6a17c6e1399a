package main

import (
	"fmt"
	"log/slog"

	"github.com/spf13/pflag"

	"github.com/flycl/flycl/app/frigate"
	"github.com/flycl/flycl/app/inbox"
	"github.com/flycl/flycl/app/watch/cameras"
)

// inboxFlags are flycl frigate's labelling inbox flags (flycl watch's,
// with a sample of the confident crops instead of changes of state).
type inboxFlags struct {
	dir              string
	maxItems, sample int
	maxBytes         int64
	below, margin    float64
	names            []string
	flags            *pflag.FlagSet
}

func (f *inboxFlags) add(fs *pflag.FlagSet) {
	f.flags = fs
	fs.StringVar(&f.dir, "inbox", "", "keep the crops the model was unsure of (and a sample of the others) in this labelling inbox, the folder flycl serve --inbox shows and learns from (docs/WATCH.md)")
	fs.IntVar(&f.maxItems, "inbox-max-items", inbox.DefaultMaxItems, "inbox: items kept (the oldest are dropped first)")
	fs.Int64Var(&f.maxBytes, "inbox-max-bytes", inbox.DefaultMaxBytes, "inbox: bytes of its files (the oldest items are dropped first)")
	fs.Float64Var(&f.below, "inbox-below", inbox.DefaultProbability, "inbox: keep crops whose calibrated probability is below this")
	fs.Float64Var(&f.margin, "inbox-margin", inbox.DefaultMargin, "inbox: for a model without calibrated probabilities, keep crops whose two best scores differ by less than this")
	fs.IntVar(&f.sample, "inbox-sample", 20, "inbox: also keep one in every this many confident crops (0: none)")
	f.names = []string{"inbox-max-items", "inbox-max-bytes", "inbox-below", "inbox-margin", "inbox-sample"}
}

// check refuses the inbox's flags without --inbox, and out of bounds
// (before the model loads).
func (f *inboxFlags) check() error {
	if f.dir == "" {
		for _, n := range f.names {
			if f.flags.Changed(n) {
				return fmt.Errorf("--%s applies to the labelling inbox: give --inbox DIR", n)
			}
		}
		return nil
	}
	// given on the command line: a bound below 1 or a probability of 0
	// is refused, not replaced by inbox.Open's and Keep's defaults
	err := inbox.CheckGiven(inbox.Options{MaxItems: f.maxItems, MaxBytes: f.maxBytes}, inbox.Policy{Probability: f.below, Margin: f.margin})
	if err != nil {
		return namedByFlags(err, map[string]string{"MaxItems": "--inbox-max-items", "MaxBytes": "--inbox-max-bytes",
			"Probability": "--inbox-below", "Margin": "--inbox-margin"})
	}
	if f.sample < 0 {
		return fmt.Errorf("--inbox-sample must be ≥ 0, got %d", f.sample)
	}
	return nil
}

// keeper opens the inbox and its Keeper (nil without --inbox).
func (f *inboxFlags) keeper(log *slog.Logger) (*frigateKeeper, error) {
	if f.dir == "" {
		return nil, nil
	}
	pol := inbox.Policy{Probability: f.below, Margin: f.margin}
	ib, err := cameras.OpenInbox(f.dir, inbox.Options{MaxItems: f.maxItems, MaxBytes: f.maxBytes}, log)
	if err != nil {
		return nil, watchFlagNames(err)
	}
	return &frigateKeeper{Keeper: &frigate.Keeper{Inbox: ib, Policy: pol, Sample: f.sample, Log: log}, ib: ib, log: log}, nil
}

type frigateKeeper struct {
	*frigate.Keeper
	ib  *inbox.Inbox
	log *slog.Logger
}

func (k *frigateKeeper) Close() {
	k.Keeper.Close()
	st := k.Stats()
	k.log.Info("inbox", "kept", st.Kept, "dropped", st.Dropped, "failed", st.Failed)
	k.ib.Close()
}
