package backbone

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"os"

	"github.com/flycl/flycl/vision/transform"
)

// FromONNXFile wraps a user's .onnx model whose single input is an image
// batch N×3×S×S: output names the output to use as the feature (N×D after
// flattening); "" picks the first. The preset defaults to "imagenet".
func FromONNXFile(path, output string) (*Model, error) {
	if err := Init(""); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoRuntime, err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	ins, outs, err := modelIO(path)
	if err != nil {
		return nil, fmt.Errorf("%s: not a readable ONNX model: %w", path, err)
	}
	input, out, size, dim, err := userIO(path, output, ins, outs)
	if err != nil {
		return nil, err
	}
	h := sha256.Sum256(data)
	return &Model{Name: "onnx", ONNX: data, Input: input, Outputs: []string{out}, Dims: []int{dim},
		Size: size, Preset: transform.Presets["imagenet"], Hash: hex.EncodeToString(h[:8])}, nil
}

// userIO checks the inputs and outputs of a user's model (ONNX Runtime's
// reading of the file at path): one input N×3×S×S, and the output named
// output ("": the first) N×D1×D2… of a fixed feature length D1·D2·… of at
// most maxFeatures. It returns the input's and the output's names, S and
// the feature length.
func userIO(path, output string, ins, outs []ioInfo) (input, out string, size, dim int, err error) {
	if len(ins) != 1 {
		return "", "", 0, 0, fmt.Errorf("%s: %d inputs, want one image input", path, len(ins))
	}
	in := ins[0].Dimensions
	if len(in) != 4 || in[1] != 3 || in[2] != in[3] || in[2] <= 0 {
		return "", "", 0, 0, fmt.Errorf("%s: input %q has shape %v, want N×3×S×S", path, ins[0].Name, in)
	}
	var chosen *ioInfo
	var names []string
	for i := range outs {
		names = append(names, outs[i].Name)
		if outs[i].Name == output || (output == "" && i == 0) {
			chosen = &outs[i]
		}
	}
	if chosen == nil {
		return "", "", 0, 0, fmt.Errorf("%s: no output %q (has %v)", path, output, names)
	}
	if len(chosen.Dimensions) == 0 {
		return "", "", 0, 0, fmt.Errorf("%s: output %q has shape %v, want N×D (a batch dimension first)", path, chosen.Name, chosen.Dimensions)
	}
	feat := int64(1)
	for _, d := range chosen.Dimensions[1:] {
		if d <= 0 {
			return "", "", 0, 0, fmt.Errorf("%s: output %q has a dynamic shape %v", path, chosen.Name, chosen.Dimensions)
		}
		if d > maxFeatures/feat {
			return "", "", 0, 0, fmt.Errorf("%s: output %q has shape %v: more than %d features per image", path, chosen.Name, chosen.Dimensions, maxFeatures)
		}
		feat *= d
	}
	return ins[0].Name, chosen.Name, int(in[2]), int(feat), nil
}

// maxFeatures bounds the feature length a user's model may declare: the
// projection W addresses the features with int32 column indices.
const maxFeatures = math.MaxInt32

// ioInfo is the name and shape of one input or output of an ONNX file.
type ioInfo struct {
	Name       string
	Dimensions []int64
}
