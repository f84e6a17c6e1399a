package main

import (
	"fmt"
	"log/slog"
	"os"

	"github.com/flycl/flycl/app/inbox"
)

// newLogger is --log-format's logger on stderr.
func newLogger(format string) (*slog.Logger, error) {
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(os.Stderr, nil)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(os.Stderr, nil)), nil
	}
	return nil, fmt.Errorf("--log-format %q: want text or json", format)
}

// checkInboxFlags refuses the inbox flags of watch that inbox.Open and
// inbox.Policy would take as their defaults (serve's are checked by
// server.Options.Check).
func checkInboxFlags(o inbox.Options, p inbox.Policy) error {
	switch {
	case o.MaxItems < 1 || o.MaxBytes < 1:
		return fmt.Errorf("--inbox-max-items %d, --inbox-max-bytes %d: must be at least 1", o.MaxItems, o.MaxBytes)
	case !(p.Probability > 0 && p.Probability <= 1):
		return fmt.Errorf("--inbox-below %g: must be in (0, 1]", p.Probability)
	case !(p.Margin > 0) || p.Margin > 1e30:
		return fmt.Errorf("--inbox-margin %g: must be positive", p.Margin)
	}
	return nil
}

// inboxOnly refuses an inbox flag given without --inbox DIR.
func inboxOnly(changed func(string) bool, names ...string) error {
	for _, name := range names {
		if changed(name) {
			return fmt.Errorf("--%s applies to the labelling inbox: give --inbox DIR", name)
		}
	}
	return nil
}

// openInbox opens --inbox DIR and logs what it holds.
func openInbox(dir string, o inbox.Options, log *slog.Logger) (*inbox.Inbox, error) {
	o.Logger = log
	ib, err := inbox.Open(dir, o)
	if err != nil {
		return nil, fmt.Errorf("--inbox: %w", err)
	}
	n, b := ib.Len()
	log.Info("labelling inbox", "dir", dir, "items", n, "bytes", b, "max_items", o.MaxItems, "max_bytes", o.MaxBytes)
	return ib, nil
}
