package cli

import (
	"os"
	"testing"

	"github.com/spf13/pflag"

	"github.com/flycl/flycl/app/locate"
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
			t.Setenv(EnvCache, "from-env")
			if got := CacheDir(fs); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
	t.Setenv(EnvCache, "")
	os.Unsetenv(EnvCache)
	if got := CacheDir(nil); got != locate.DefaultCache {
		t.Errorf("no flags, no variable: got %q", got)
	}
}

func ptr(s string) *string { return &s }
