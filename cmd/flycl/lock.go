package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/deploy"
	"github.com/flycl/flycl/app/store"
	"github.com/flycl/flycl/format/modelfile"
)

// waitFlag is --wait [DURATION]: how long a writer waits for a model
// file's lock (modelfile.TakeLock); --wait alone waits without limit.
type waitFlag struct{ d time.Duration }

const waitForever = 100 * 365 * 24 * time.Hour

func (w *waitFlag) String() string {
	if w.d >= waitForever {
		return "forever"
	}
	return w.d.String()
}

func (w *waitFlag) Set(s string) error {
	if s == "forever" {
		w.d = waitForever
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return fmt.Errorf("want a duration such as 30s or 2m (or nothing: wait as long as it takes), got %q", s)
	}
	w.d = d
	return nil
}

func (w *waitFlag) Type() string { return "duration" }

// register adds --wait to c.
func (w *waitFlag) register(c *cobra.Command) {
	f := c.Flags().VarPF(w, "wait", "", "when another writer (a learn, forget, merge or serve) holds the model file, wait for it up to DURATION (--wait=DURATION; --wait alone: without limit) instead of failing at once")
	f.NoOptDefVal = "forever"
}

// storeOptions are the store options of this command: its lock wait and
// its name for a second writer. args are the command's arguments:
// "--wait 30s" leaves "30s" there (a flag with an optional value takes it
// only after "="), which is refused rather than taken for a wait without
// limit.
func storeOptions(w waitFlag, args []string) (*store.Options, error) {
	for _, a := range args {
		if _, err := time.ParseDuration(a); err == nil && w.d == waitForever {
			return nil, fmt.Errorf("--wait takes its duration after \"=\": write --wait=%s (the %q after --wait was read as an argument)", a, a)
		}
	}
	command := "flycl " + strings.Join(os.Args[1:], " ")
	if len(command) > 200 {
		command = command[:200] + "..."
	}
	return &store.Options{Wait: w.d, Command: command}, nil
}

// openStore opens the model file path as this command's store
// (store.Open: its lock taken, the model loaded when the file exists);
// journal starts a journal at the first change when it has none. The
// caller closes it.
func openStore(cmd *cobra.Command, path string, w waitFlag, args []string, journal bool) (*store.Store, error) {
	o, err := storeOptions(w, args)
	if err != nil {
		return nil, err
	}
	o.Journal = journal
	st, err := store.Open(cmd.Context(), path, o)
	if err != nil {
		return nil, err
	}
	for _, w := range st.Warnings {
		fmt.Fprintf(os.Stderr, "warning: %s\n", w)
	}
	return st, nil
}

// openModel is openStore for a command that creates the model when the
// file does not exist (store.Store.View then gives nil), checking explicit
// model flags against an existing model's configuration.
func openModel(cmd *cobra.Command, path string, w waitFlag, args []string, mf *modelFlags, journal bool) (*store.Store, error) {
	st, err := openStore(cmd, path, w, args, journal)
	if err != nil {
		return nil, err
	}
	err = st.View(func(m *deploy.Model) error {
		if m == nil {
			return nil
		}
		return mf.bound().AgreeModel(m.Model.Config())
	})
	if err != nil {
		st.Close()
		return nil, err
	}
	return st, nil
}

// warnNotRecorded prints the error of a change that is saved but not
// recorded in the journal (store.ErrNotRecorded) as a warning, and
// returns nil for it; any other error is returned.
func warnNotRecorded(err error) error {
	if errors.Is(err, store.ErrNotRecorded) && !errors.Is(err, modelfile.ErrLockLost) {
		fmt.Fprintf(os.Stderr, "warning: %v\n", err)
		return nil
	}
	return err
}

// loadFile reads a model file for reading only (store.LoadFile) and
// prints what the load noticed and ignored (a torn journal tail). A file
// that does not exist is one not learned yet: the error says so, with the
// command that makes it.
func loadFile(path string) (*modelfile.File, error) {
	f, err := store.LoadFile(path)
	if err != nil {
		return nil, notLearnedYet(path, err)
	}
	warnFile(f)
	return f, nil
}

// notLearnedYet adds, to the error of a model file that does not exist,
// that it is made by a learn, and how (input refused: exit status 2).
func notLearnedYet(path string, err error) error {
	if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return flycl.Input(fmt.Errorf("%w: no model there yet; learn first: flycl learn --model %s --data folder:PHOTOS (a folder with a subfolder of photos per class)", err, shellQuote(path)))
}

// shellQuote is s as a shell word (quoted only when it must be).
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '/' || r == '.' || r == '-' || r == '_' || r == '+' || r == ':' || r == '=' || r == ',' || r == '@' ||
			r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// warnFile prints what loading f noticed and ignored.
func warnFile(f *modelfile.File) {
	for _, w := range f.Warnings {
		fmt.Fprintf(os.Stderr, "warning: %s\n", w)
	}
}

// warnLoad prints what loading the model noticed and ignored (a torn
// journal tail).
func warnLoad(m *deploy.Model) {
	if m == nil {
		return
	}
	for _, w := range m.Warnings {
		fmt.Fprintf(os.Stderr, "warning: %s\n", w)
	}
}
