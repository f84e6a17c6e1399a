package locate

// A Setting is one value a Resolver finds: its environment variable, the
// flag that overrides it, its default and what it is for.
type Setting struct {
	Env     string // environment variable
	Flag    string // flag that overrides it, with its dashes ("" if none)
	Default string // the default, in words
	Doc     string // what it is for
}

// Settings lists every environment variable a Resolver reads ("flycl help
// environment" prints them).
func Settings() []Setting {
	return []Setting{
		{EnvORTLib, "--" + FlagORTLib, "where make install and a release archive put it, found from the binary's own path: " + ORTInstalledLib + " in the folder above the binary's (PREFIX/bin/flycl: PREFIX/" + ORTInstalledLib + "); else where make ort puts it in a checkout: " + ORTInstallDir + "/" + ORTSubpath + " in the folder above the binary's (a checkout's bin/flycl), else under the working folder or one of its parents",
			"ONNX Runtime shared library; only the commands that run a backbone need it: extract, run/sweep with --backbone, learn/predict/stats/forget with images, serve with a backbone, bench backbones/pipeline/serve"},
		{EnvModels, "", "the weights built into flycl (MobileNetV2 1.0 and SqueezeNet 1.1 from the ONNX Model Zoo, Apache-2.0: \"flycl help weights\"); set but empty, the same",
			"folder holding squeezenet1.1/ and mobilenetv2-1.0/ (per-layer .npy), for --backbone squeezenet or mobilenetv2 without :DIR"},
		{EnvMNIST, "", "data/ of the Go module " + gomnist + " (the version this binary was built with) in the module cache ($GOMODCACHE, else $GOPATH/pkg/mod, else ~/go/pkg/mod)",
			"MNIST IDX files, for --data mnist without :DIR"},
		{EnvFashion, "", DefaultFashionMNIST + " (Debian's dataset-fashion-mnist package)",
			"Fashion-MNIST IDX files, for --data fashion-mnist without :DIR"},
		{EnvCache, "--" + FlagCache, DefaultCache, "feature cache of extract, run/sweep with --backbone and learn/predict/stats/forget with --data (\"\" disables it)"},
	}
}
