package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// TestResolveOrder: a path comes from the flag when given, else from the
// FLYCL_* variable, else from the default.
func TestResolveOrder(t *testing.T) {
	for _, tc := range []struct {
		name      string
		flag, env string // "" = not given
		want      string
	}{
		{"default", "", "", "default"},
		{"environment", "", "from-env", "from-env"},
		{"flag wins", "from-flag", "from-env", "from-flag"},
		{"flag alone", "from-flag", "", "from-flag"},
		{"empty variable is a value", "", "\x00empty", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
			fs.String("cache", "flag-default", "")
			if tc.flag != "" {
				fs.Set("cache", tc.flag)
			}
			switch tc.env {
			case "":
				t.Setenv(envCache, "")
				os.Unsetenv(envCache)
			case "\x00empty":
				t.Setenv(envCache, "")
			default:
				t.Setenv(envCache, tc.env)
			}
			if got := resolve(fs, "cache", envCache, func() string { return "default" }); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestORTMissingSaysHow: without the library, the error says how to get it.
func TestORTMissingSaysHow(t *testing.T) {
	t.Setenv(envORTLib, "")
	os.Unsetenv(envORTLib)
	t.Chdir(t.TempDir())
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	fs.String("ort-lib", "", "")
	_, err := ortLibrary(fs)
	if exe, _ := os.Executable(); err == nil {
		if _, e := os.Stat(filepath.Join(filepath.Dir(filepath.Dir(exe)), ortInstallDir, ortSubpath)); e == nil {
			t.Skip("ONNX Runtime installed next to the test binary")
		}
		t.Fatal("no error without ONNX Runtime")
	}
	for _, w := range []string{"make ort", envORTLib, "--ort-lib"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not mention %s", err, w)
		}
	}
}

// TestHelpEnvironment lists every variable the resolver reads.
func TestHelpEnvironment(t *testing.T) {
	help := environmentHelp().Long
	for _, s := range settings {
		if !strings.Contains(help, s.env) {
			t.Errorf("flycl help environment does not list %s", s.env)
		}
	}
}
