package main

import (
	"reflect"
	"strings"
	"testing"

	"github.com/flycl/flycl/app/watch/cameras"
)

// TestWatchFlagOf: each field that watchFlagOf names a flag for is a
// field of cameras.Single or cameras.Several (a dotted path), and each
// flag is one of flycl watch's; every flag bound to a field of
// cameras.Single has its field in watchFlagOf, so that an error on it
// (and Single.Given) names the flag.
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
	for field, flag := range watchFlagOf {
		if !has(reflect.TypeFor[cameras.Single](), field) && !has(reflect.TypeFor[cameras.Several](), field) {
			t.Errorf("watchFlagOf[%q]: no such field of cameras.Single or cameras.Several", field)
		}
		if cmd.Flags().Lookup(strings.TrimPrefix(flag, "--")) == nil {
			t.Errorf("watchFlagOf[%q] = %q: no such flag", field, flag)
		}
	}
	named := map[string]bool{}
	for _, flag := range watchFlagOf {
		named[strings.TrimPrefix(flag, "--")] = true
	}
	for _, flag := range append(cameraFlags, "ffmpeg", "max-frame-pixels", "threads", "flush", "log-format", "metrics", "config", "reload",
		"inbox", "inbox-max-items", "inbox-max-bytes", "inbox-below", "inbox-margin", "inbox-every", "inbox-changes") {
		if !named[flag] {
			t.Errorf("--%s: not in watchFlagOf", flag)
		}
	}
}
