package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/flycl/flycl/app/locate"
)

// TestMissingDataSaysHowToGetIt: a data set that is not there stops the
// command before any work, with an error naming the path and saying where
// that kind of data set comes from (flycl-lab's commands: its own test),
// as input refused (exit status 2).
func TestMissingDataSaysHowToGetIt(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "absent")
	t.Setenv(locate.EnvFashion, missing)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"extract", "--data", "folder:" + missing, "--out", t.TempDir()}, "<class>/<image>"},
	} {
		out, err := runCLI(t, c.args...)
		if err == nil {
			t.Errorf("%v: no error\n%s", c.args, out)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, missing+" does not exist") || !strings.Contains(msg, c.want) {
			t.Errorf("%v: error %q, want the path and %q", c.args, msg, c.want)
		}
		if exitCode(err) != exitInput {
			t.Errorf("%v: exit status %d, want %d (input refused)", c.args, exitCode(err), exitInput)
		}
	}
}
