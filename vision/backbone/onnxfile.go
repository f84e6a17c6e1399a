package backbone

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
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
	if len(ins) != 1 {
		return nil, fmt.Errorf("%s: %d inputs, want one image input", path, len(ins))
	}
	in := ins[0].Dimensions
	if len(in) != 4 || in[1] != 3 || in[2] != in[3] || in[2] <= 0 {
		return nil, fmt.Errorf("%s: input %q has shape %v, want N×3×S×S", path, ins[0].Name, in)
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
		return nil, fmt.Errorf("%s: no output %q (has %v)", path, output, names)
	}
	dim := int64(1)
	for _, d := range chosen.Dimensions[1:] {
		if d <= 0 {
			return nil, fmt.Errorf("%s: output %q has a dynamic shape %v", path, chosen.Name, chosen.Dimensions)
		}
		dim *= d
	}
	h := sha256.Sum256(data)
	return &Model{Name: "onnx", ONNX: data, Input: ins[0].Name, Outputs: []string{chosen.Name}, Dims: []int{int(dim)},
		Size: int(in[2]), Preset: transform.Presets["imagenet"], Hash: hex.EncodeToString(h[:8])}, nil
}

// ioInfo is the name and shape of one input or output of an ONNX file.
type ioInfo struct {
	Name       string
	Dimensions []int64
}
