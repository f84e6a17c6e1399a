package extract

import (
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Backbones lists the specs ParseBackbone (and OpenBackbone) accepts.
var Backbones = []string{"squeezenet[:DIR]", "mobilenetv2[:DIR]", "resnet50:FILE(.pth|.safetensors)", "vit:FILE(.safetensors|.pth|.npz)[@HEADS]", "onnx:FILE.onnx[#OUTPUT]"}

// DefaultBackbone is the backbone spec images go through when none is
// given (no --backbone, no model file naming one): MobileNetV2 with the
// weights of a models folder or the built-in ones, the better of the two
// built-in backbones on CIFAR-10. flycl, libflycl and flycl-beam take it.
const DefaultBackbone = "mobilenetv2"

// Folders of the per-layer .npy backbones in a models folder (the layout of
// the weights package zoo ships, and of a folder given to OpenBackbone).
var modelFolders = map[string]string{"squeezenet": "squeezenet1.1", "mobilenetv2": "mobilenetv2-1.0"}

// ModelFolder returns the folder in a models folder that backbone name
// (squeezenet, mobilenetv2) reads without a path, and whether it has one.
func ModelFolder(name string) (string, bool) {
	f, ok := modelFolders[name]
	return f, ok
}

// BackboneSpec is a backbone as a user names it, "name[:path]" (see
// Backbones), parsed once: OpenBackbone opens it, and what its weights
// are read from (WeightsPath) is known without opening it.
type BackboneSpec struct {
	// Name is squeezenet, mobilenetv2, resnet50, vit or onnx.
	Name string
	// Path is the weights' folder or file, without vit's @HEADS and onnx's
	// #OUTPUT; "" for squeezenet and mobilenetv2 read from a models folder.
	Path string
	// Heads is vit's number of attention heads (@HEADS); 0: the
	// checkpoint's width / 64.
	Heads int
	// Output is the graph output of an onnx backbone (#OUTPUT); "": its
	// only one.
	Output string

	text string // as given
}

// ParseBackbone parses a backbone spec: a known name, a path where the
// backbone needs one (resnet50, vit, onnx), vit's heads a number.
func ParseBackbone(spec string) (BackboneSpec, error) {
	name, path, _ := strings.Cut(spec, ":")
	s := BackboneSpec{Name: name, Path: path, text: spec}
	switch name {
	case "squeezenet", "mobilenetv2":
	case "resnet50", "vit", "onnx":
		if path == "" {
			if name == "onnx" {
				return s, fmt.Errorf("backbone %s: needs a graph: onnx:FILE.onnx", spec)
			}
			return s, fmt.Errorf("backbone %s: needs a checkpoint: %s:FILE", spec, name)
		}
		switch name {
		case "vit":
			file, heads, ok := strings.Cut(path, "@")
			s.Path = file
			if ok && heads != "" { // "@" alone: the checkpoint's
				h, err := strconv.Atoi(heads)
				if err != nil || h <= 0 {
					return s, fmt.Errorf("backbone %s: heads %q is not a positive number", spec, heads)
				}
				s.Heads = h
			}
		case "onnx":
			s.Path, s.Output, _ = strings.Cut(path, "#")
		}
	default:
		known := append([]string(nil), Backbones...)
		sort.Strings(known)
		return s, fmt.Errorf("backbone %s: unknown backbone %q (known: %s)", spec, name, strings.Join(known, ", "))
	}
	return s, nil
}

// String returns the spec as it was given (ParseBackbone), else as
// Backbones writes it.
func (s BackboneSpec) String() string {
	if s.text != "" {
		return s.text
	}
	t := s.Name
	if s.Path != "" {
		t += ":" + s.Path
	}
	if s.Heads > 0 {
		t += "@" + strconv.Itoa(s.Heads)
	}
	if s.Output != "" {
		t += "#" + s.Output
	}
	return t
}

// Folder returns the folder of a models folder that the backbone's
// weights are read from when the spec gives no path (ModelFolder), and
// whether there is one.
func (s BackboneSpec) Folder() (string, bool) {
	if s.Path != "" {
		return "", false
	}
	return ModelFolder(s.Name)
}

// WeightsPath returns the file or folder the backbone's weights are read
// from: the spec's path, else its folder in modelsDir; "" when neither
// (no path, and no models folder given: the caller's built-in weights).
func (s BackboneSpec) WeightsPath(modelsDir string) string {
	if s.Path != "" {
		return s.Path
	}
	if f, ok := s.Folder(); ok && modelsDir != "" {
		return filepath.Join(modelsDir, f)
	}
	return ""
}
