package main

import (
	"github.com/spf13/pflag"

	"github.com/flycl/flycl/app/inbox"
	"github.com/flycl/flycl/app/watch"
	"github.com/flycl/flycl/app/watch/cameras"
)

// registerWatchTeach registers flycl watch's labelling inbox and model
// reload flags into s.
func registerWatchTeach(fs *pflag.FlagSet, s *cameras.Single) {
	fs.StringVar(&s.Inbox.Dir, "inbox", "", "keep the frames (zone crops) answered unknown, unsure or at a change of state in this labelling inbox, the folder flycl serve --inbox shows and learns from (docs/WATCH.md)")
	fs.IntVar(&s.Inbox.MaxItems, "inbox-max-items", inbox.DefaultMaxItems, "inbox: items kept (the oldest are dropped first)")
	fs.Int64Var(&s.Inbox.MaxBytes, "inbox-max-bytes", inbox.DefaultMaxBytes, "inbox: bytes of its files (the oldest items are dropped first)")
	fs.Float64Var(&s.Inbox.Below, "inbox-below", inbox.DefaultProbability, "inbox: also keep frames whose calibrated probability is below this")
	fs.Float64Var(&s.Inbox.Margin, "inbox-margin", inbox.DefaultMargin, "inbox: for a model without calibrated probabilities, keep frames whose two best scores differ by less than this")
	fs.IntVar(&s.Inbox.Every, "inbox-every", 10, "inbox: frames between two kept frames of a zone at least (a change of state is always kept)")
	fs.BoolVar(&s.Inbox.Changes, "inbox-changes", true, "inbox: also keep the frame that confirmed each change of the answer")
	fs.DurationVar(&s.Reload, "reload", watch.DefaultReloadInterval, "check the model file this often and use a new version without a restart (0: never)")
}
