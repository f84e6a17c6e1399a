package main

import (
	"fmt"
	"io"
	"os"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/flycl/flycl/cmd/internal/cli"
	"github.com/flycl/flycl/internal/buildinfo"
	"github.com/flycl/flycl/linalg"
	"github.com/flycl/flycl/vision/backbone"
)

// version and commit are flycl's version and commit when the build sets
// them (scripts/release: -ldflags "-X main.version=v1.2.3 -X
// main.commit=HASH"); otherwise they come from the build information (the
// module's version, "(devel)" for a build from a checkout, and the VCS
// revision Go stamps when it builds in a git checkout).
var version, commit string

// versionInfo is what flycl version prints: one "key: value" line each.
type versionInfo struct {
	Version, Commit, Go, Platform, Linalg, ORT, CPU string
}

// buildVersion returns the version and commit: the ldflags variables
// when set, else the build information's (buildinfo.Version).
func buildVersion() (v, rev string) { return buildinfo.Version(version, commit) }

// collectVersion gathers the versions; ort says how ONNX Runtime was
// found (its version, or why not).
func collectVersion(ort string) versionInfo {
	v, rev := buildVersion()
	return versionInfo{Version: v, Commit: rev, Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH,
		Linalg: linalg.BackendVersion(), ORT: ort, CPU: buildinfo.CPUFeatures()}
}

func (vi versionInfo) write(w io.Writer) {
	for _, kv := range [][2]string{{"flycl", vi.Version}, {"commit", vi.Commit}, {"go", vi.Go}, {"platform", vi.Platform},
		{"linear algebra", vi.Linalg}, {"onnx runtime", vi.ORT}, {"cpu", vi.CPU}} {
		fmt.Fprintf(w, "%s: %s\n", kv[0], kv[1])
	}
}

// ortVersion loads ONNX Runtime as the image commands do (--ort-lib,
// $FLYCL_ORT_LIB, the install folders) and returns its version and path,
// or "not found" and why.
func ortVersion(cmd *cobra.Command) string {
	lib, err := cli.ORTLibrary(cmd.Flags())
	if err != nil {
		if err := backbone.Supported(); err != nil {
			return "not available (" + err.Error() + ")"
		}
		return "not found (--ort-lib or $" + cli.EnvORTLib + " names it; see flycl help environment)"
	}
	if err := backbone.Init(lib); err != nil {
		return fmt.Sprintf("not loaded from %s: %v", lib, err)
	}
	return fmt.Sprintf("%s (%s)", backbone.Version(), lib)
}

func versionCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "version",
		Short: "Print flycl's version and those of Go, OpenBLAS and ONNX Runtime, and the CPU features in use",
		Long: `Prints one "key: value" line each: flycl's version and commit, the Go release
it was built with, the platform, the linear algebra in use (OpenBLAS's build
configuration, or pure Go), ONNX Runtime's version and library (or why it was
not found), and the CPU's SIMD features. "flycl --version" prints the same.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			collectVersion(ortVersion(cmd)).write(os.Stdout)
			return nil
		},
	}
	c.Flags().String("ort-lib", "", "path to libonnxruntime.so (default $"+cli.EnvORTLib+", else where scripts/install-deps puts it; see flycl help environment)")
	return c
}
