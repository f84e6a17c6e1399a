package buildinfo

import (
	"runtime"
	"runtime/debug"
	"strings"

	"golang.org/x/sys/cpu"
)

// Release is flycl's release version, the one place it is written:
// scripts/version stamps builds with it (a release itself, or
// Release.devN+gHASH between releases), the Python wheel takes the same
// string, and a build nothing stamped says Release-devel.
const Release = "0.1.0"

// Version returns the version and commit: ldVersion and ldCommit when
// set (the Makefile and scripts/release: -ldflags "-X main.version=...
// -X main.commit=HASH", from scripts/version), else the build
// information's (the module's version when built as a dependency, and the
// VCS revision with its time and whether the tree had uncommitted
// changes); a build from a checkout with neither (plain go build, Go's
// "(devel)") says Release + "-devel".
func Version(ldVersion, ldCommit string) (version, commit string) {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = nil
	}
	return version1(ldVersion, ldCommit, bi)
}

// version1 is Version with the build information given (nil: none).
func version1(v, rev string, bi *debug.BuildInfo) (string, string) {
	if bi != nil && v == "" {
		v = bi.Main.Version
	}
	if bi != nil && rev == "" {
		var when string
		dirty := false
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.time":
				when = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if rev != "" && when != "" {
			rev += " (" + when + ")"
		}
		if rev != "" && dirty {
			rev += ", with uncommitted changes"
		}
	}
	if v == "" || v == "(devel)" {
		v = Release + "-devel"
	}
	if rev == "" {
		rev = "unknown (built without VCS information)"
	}
	return v, rev
}

// CPUFeatures lists the SIMD features of this CPU that flycl's numeric
// code can use (OpenBLAS picks its kernels by them, ONNX Runtime too).
func CPUFeatures() string {
	var f []string
	add := func(ok bool, name string) {
		if ok {
			f = append(f, name)
		}
	}
	switch runtime.GOARCH {
	case "amd64", "386":
		add(cpu.X86.HasAVX, "AVX")
		add(cpu.X86.HasAVX2, "AVX2")
		add(cpu.X86.HasFMA, "FMA")
		add(cpu.X86.HasAVX512F, "AVX512F")
		add(cpu.X86.HasAVX512VNNI, "AVX512-VNNI")
		add(cpu.X86.HasAVXVNNI, "AVX-VNNI")
	case "arm64":
		add(cpu.ARM64.HasASIMD, "ASIMD")
		add(cpu.ARM64.HasFPHP, "FP16")
		add(cpu.ARM64.HasASIMDDP, "DOTPROD")
		add(cpu.ARM64.HasSVE, "SVE")
	}
	if len(f) == 0 {
		return "none of AVX2, FMA, AVX512, VNNI (or not an x86/ARM CPU)"
	}
	return strings.Join(f, " ")
}
