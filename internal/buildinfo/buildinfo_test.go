package buildinfo

import (
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

// TestVersion: the linker's values win; else the build information's
// version and revision, with its time and a dirty tree said; else
// the release with "-devel".
func TestVersion(t *testing.T) {
	bi := &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.time", Value: "2026-11-27T07:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	for _, tc := range []struct {
		name     string
		ldv, ldc string
		bi       *debug.BuildInfo
		v, c     string
	}{
		{"release", "v1.2.3", "deadbeef", bi, "v1.2.3", "deadbeef"},
		{"checkout", "", "", bi, Release + "-devel", "abc123 (2026-11-27T07:00:00Z), with uncommitted changes"},
		{"clean checkout", "", "", &debug.BuildInfo{Main: debug.Module{Version: "v0.9.0"}, Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc"}}}, "v0.9.0", "abc"},
		{"nothing", "", "", nil, Release + "-devel", "unknown (built without VCS information)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if v, c := version1(tc.ldv, tc.ldc, tc.bi); v != tc.v || c != tc.c {
				t.Errorf("got %q, %q; want %q, %q", v, c, tc.v, tc.c)
			}
		})
	}
}

// TestCPUFeatures: on Linux/amd64 the features named are those
// /proc/cpuinfo's flags list (the kernel's independent account).
func TestCPUFeatures(t *testing.T) {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil || runtime.GOARCH != "amd64" {
		t.Skip("needs Linux on amd64")
	}
	flags := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "flags" {
			for _, f := range strings.Fields(v) {
				flags[f] = true
			}
			break
		}
	}
	got := " " + CPUFeatures() + " "
	for name, flag := range map[string]string{"AVX": "avx", "AVX2": "avx2", "FMA": "fma", "AVX512F": "avx512f"} {
		if strings.Contains(got, " "+name+" ") != flags[flag] {
			t.Errorf("%s named: %v, /proc/cpuinfo has %s: %v (%q)", name, strings.Contains(got, " "+name+" "), flag, flags[flag], got)
		}
	}
}
