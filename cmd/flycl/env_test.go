package main

import (
	"os"
	"strings"
	"testing"

	"github.com/flycl/flycl/app/locate"
	"github.com/spf13/pflag"
)

// TestResolverFlags: a flag given on the command line (even as "") wins
// over the FLYCL_* variable, one left at its default does not (the order
// itself is locate's, tested there).
func TestResolverFlags(t *testing.T) {
	for _, tc := range []struct {
		name string
		flag *string // nil: not given
		want string
	}{
		{"not given", nil, "from-env"},
		{"given", ptr("from-flag"), "from-flag"},
		{"given empty", ptr(""), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
			fs.String("cache", "flag-default", "")
			fs.String("ort-lib", "", "")
			if tc.flag != nil {
				fs.Set("cache", *tc.flag)
			}
			t.Setenv(envCache, "from-env")
			if got := cacheDir(fs); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
	t.Setenv(envCache, "")
	os.Unsetenv(envCache)
	if got := cacheDir(nil); got != locate.DefaultCache {
		t.Errorf("no flags, no variable: got %q", got)
	}
}

func ptr(s string) *string { return &s }

// TestHelpEnvironment lists every variable the resolver reads.
func TestHelpEnvironment(t *testing.T) {
	help := environmentHelp().Long
	for _, s := range locate.Settings() {
		if !strings.Contains(help, s.Env) {
			t.Errorf("flycl help environment does not list %s", s.Env)
		}
	}
}
