package main

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/flycl/flycl/deploy"
	"github.com/flycl/flycl/modelfile"
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

// lockModel takes the single-writer lock of the model file path for this
// command (modelfile.TakeLock), naming it to a second writer.
// args are the command's arguments: "--wait 30s" leaves "30s" there
// (a flag with an optional value takes it only after "="), which is
// refused rather than taken for a wait without limit.
func lockModel(cmd *cobra.Command, path string, w waitFlag, args []string) (*modelfile.Lock, error) {
	for _, a := range args {
		if _, err := time.ParseDuration(a); err == nil && w.d == waitForever {
			return nil, fmt.Errorf("--wait takes its duration after \"=\": write --wait=%s (the %q after --wait was read as an argument)", a, a)
		}
	}
	command := "flycl " + strings.Join(os.Args[1:], " ")
	if len(command) > 200 {
		command = command[:200] + "..."
	}
	return modelfile.TakeLock(cmd.Context(), path, modelfile.LockOptions{Wait: w.d, Command: command})
}

// commit saves m to path for a writer holding lk: the lock is checked
// before the save and again after it (modelfile.Lock.Check), so a writer
// whose lock file was removed or replaced behind it (another writer may
// hold the model now) writes nothing, or acknowledges nothing.
func commit(lk *modelfile.Lock, m *deploy.Model, path string) error {
	if err := lk.Check(); err != nil {
		return err
	}
	if err := m.Save(path); err != nil {
		return err
	}
	return lk.Check()
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

// loadLocked takes the model file's lock (lockModel) and loads the model
// for a read-modify-write; the caller saves it and then unlocks.
func loadLocked(cmd *cobra.Command, path string, w waitFlag, args []string) (*deploy.Model, *modelfile.Lock, error) {
	lk, err := lockModel(cmd, path, w, args)
	if err != nil {
		return nil, nil, err
	}
	m, err := deploy.Load(path)
	if err != nil {
		lk.Unlock()
		return nil, nil, err
	}
	warnLoad(m)
	return m, lk, nil
}

// openLocked takes the model file's lock and loads the model when the file
// exists (nil when it does not yet: the caller creates it), checking
// explicit model flags against its configuration. The caller unlocks.
func openLocked(cmd *cobra.Command, path string, w waitFlag, args []string, mf *modelFlags) (*deploy.Model, *modelfile.Lock, error) {
	lk, err := lockModel(cmd, path, w, args)
	if err != nil {
		return nil, nil, err
	}
	m, err := func() (*deploy.Model, error) {
		exists, err := deploy.Exists(path)
		if err != nil || !exists {
			return nil, err
		}
		m, err := deploy.Load(path)
		if err != nil {
			return nil, err
		}
		warnLoad(m)
		return m, checkConfig(cmd, mf, m.Model)
	}()
	if err != nil {
		lk.Unlock()
		return nil, nil, err
	}
	return m, lk, nil
}
