package main

import (
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/flycl/flycl/app/frigate"
	"github.com/flycl/flycl/app/intake"
	"github.com/flycl/flycl/app/store"
	"github.com/flycl/flycl/app/watch/cameras"
	"github.com/flycl/flycl/internal/flagbind"
)

// TestWatchFlagOf: each field that watchFields (the flag tags of
// cameras.Single and cameras.Several) names a flag for is a field of
// cameras.Single or cameras.Several (a dotted path), and each flag is one
// of flycl watch's; every flag bound to a field of cameras.Single has its
// field tagged, so that an error on it (and Single.Given) names the flag.
func TestWatchFlagOf(t *testing.T) {
	cmd := watchCmd()
	has := func(typ reflect.Type, path string) bool {
		for _, name := range strings.Split(path, ".") {
			f, ok := typ.FieldByName(name)
			if !ok {
				return false
			}
			typ = f.Type
		}
		return true
	}
	for field, flag := range watchFields() {
		if !has(reflect.TypeFor[cameras.Single](), field) && !has(reflect.TypeFor[cameras.Several](), field) {
			t.Errorf("watchFields[%q]: no such field of cameras.Single or cameras.Several", field)
		}
		if cmd.Flags().Lookup(strings.TrimPrefix(flag, "--")) == nil {
			t.Errorf("watchFields[%q] = %q: no such flag", field, flag)
		}
	}
	named := map[string]bool{}
	for _, flag := range watchFields() {
		named[strings.TrimPrefix(flag, "--")] = true
	}
	for _, flag := range append(cameraFlags, "ffmpeg", "max-frame-pixels", "threads", "flush", "log-format", "metrics", "config", "reload",
		"inbox", "inbox-max-items", "inbox-max-bytes", "inbox-below", "inbox-margin", "inbox-every", "inbox-changes") {
		if !named[flag] {
			t.Errorf("--%s: no field of cameras.Single or Several is tagged with it", flag)
		}
	}
}

// TestFieldFlagsExist: every flag that the flag tags of a library's
// settings name (flagbind.Names: what the library's field errors are
// named by) is a flag of the command that takes those settings, and a
// field error the library returns names it: flycl frigate's
// frigate.Config, the input flags' intake.InputRequest (with the backbone
// options) on learn.
func TestFieldFlagsExist(t *testing.T) {
	for _, tc := range []struct {
		cmd   *cobra.Command
		names map[string]string
	}{
		{frigateCmd(), flagbind.Names(frigate.Config{})},
		{learnCmd(), inputFlagNames()},
		{serveCmd(), serveFlagNamesOf()},
		{learnCmd(), flagbind.Names(store.NewModel{}, store.Recalibration{})},
	} {
		if len(tc.names) < 3 {
			t.Errorf("flycl %s: only %d fields named", tc.cmd.Name(), len(tc.names))
		}
		for field, flag := range tc.names {
			if flag == "IMAGE..." {
				continue // a positional argument
			}
			if tc.cmd.Flags().Lookup(strings.TrimPrefix(flag, "--")) == nil {
				t.Errorf("flycl %s: %s names %s, which it does not have", tc.cmd.Name(), field, flag)
			}
		}
	}
	err := frigateFlagError(frigate.Config{Frigate: "http://x:5000", MinBox: -1}.Check())
	if err == nil || !strings.HasPrefix(err.Error(), "--min-box must be ≥ 0") {
		t.Errorf("frigate.Config.Check named by flags: %v", err)
	}
	err = flagNames((&intake.InputRequest{Features: "f.npz", ClassNames: []string{"a"}, BackboneOptions: []string{"CalibMethod"}}).Check())
	if err == nil || err.Error() != "--calib-method applies to images through a backbone, not to --features" {
		t.Errorf("intake.InputRequest.Check named by flags: %v", err)
	}
}
