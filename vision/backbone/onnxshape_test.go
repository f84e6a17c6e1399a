package backbone

import (
	"encoding/binary"
	"maps"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/flycl/flycl/format/onnx"
)

// A user's .onnx file gives its output's shape (ONNX Runtime infers it
// from the graph): FromONNXFile takes the feature's length from it, so a
// shape with no batch dimension to drop (a scalar output), or one of
// more features than W can address (whose product overflowed int64 to 0
// or passed 2^62), is refused with an error naming the file and the
// output, never a panic or a feature length the file merely claims.
func TestONNXFileOutputShapes(t *testing.T) {
	if err := Init(testLibrary()); err != nil {
		t.Skipf("%v", err)
	}
	for _, c := range []struct {
		name  string
		shape []int64 // the output's shape (Expand of the image's mean); nil: the mean, a scalar
		want  string  // in the error; "" for none
	}{
		{"batch of vectors", []int64{2, 3}, ""},
		{"scalar", nil, `output "o" has shape []`},
		{"overflow to 0", []int64{1, 1 << 32, 1 << 32}, `more than 2147483647 features`},
		{"2^62 features", []int64{1, 1 << 31, 1 << 31}, `more than 2147483647 features`},
		{"2^31 features", []int64{1, 1 << 31}, `more than 2147483647 features`},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := onnx.NewGraph("t")
			x := g.Input("x", -1, 3, 8, 8)
			y := g.Node("ReduceMean", []string{x}, onnx.AInt("keepdims", 0))
			if c.shape != nil {
				y = g.Node("Expand", []string{y, g.ConstInt64("s", []int64{int64(len(c.shape))}, c.shape)})
			}
			g.Output(g.Named("o", y))
			p := filepath.Join(t.TempDir(), "m.onnx")
			if err := os.WriteFile(p, g.Model(17), 0o600); err != nil {
				t.Fatal(err)
			}
			m, err := FromONNXFile(p, "o")
			if c.want == "" {
				if err != nil || m.Dim() != 3 {
					t.Fatalf("%v (dim %v)", err, m)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), p) {
				t.Fatalf("err %v, want one naming %s and %s", err, p, c.want)
			}
		})
	}
}

// shapes reads a list of inputs or outputs from the fuzzer's bytes: a
// count, then for each a rank and its dimensions, all as varints.
func shapes(b []byte, prefix string) ([]ioInfo, []byte) {
	next := func() int64 {
		v, n := binary.Varint(b)
		if n <= 0 {
			b = nil
			return 0
		}
		b = b[n:]
		return v
	}
	var out []ioInfo
	for i := range int(uint64(next()) % 4) {
		info := ioInfo{Name: prefix + strconv.Itoa(i), Dimensions: []int64{}}
		for range int(uint64(next()) % 6) {
			info.Dimensions = append(info.Dimensions, next())
		}
		out = append(out, info)
	}
	return out, b
}

// appendShapes is the encoding shapes reads.
func appendShapes(b []byte, infos ...[]int64) []byte {
	b = binary.AppendVarint(b, int64(len(infos)))
	for _, d := range infos {
		b = binary.AppendVarint(b, int64(len(d)))
		for _, v := range d {
			b = binary.AppendVarint(b, v)
		}
	}
	return b
}

// FuzzUserIO: whatever inputs and outputs ONNX Runtime reports of a
// user's model, userIO never panics; it accepts one N×3×S×S input and an
// output whose fixed feature length is the product of its dimensions
// after the first, at most maxFeatures, and refuses anything else naming
// the file.
func FuzzUserIO(f *testing.F) {
	f.Add(appendShapes(appendShapes(nil, []int64{-1, 3, 224, 224}), []int64{-1, 2048}), "")
	f.Add(appendShapes(appendShapes(nil, []int64{-1, 3, 224, 224}), []int64{-1, 1000}, []int64{-1, 768, 1, 1}), "o1")
	f.Add(appendShapes(appendShapes(nil, []int64{-1, 3, 224, 224}), []int64{}), "")
	f.Add(appendShapes(appendShapes(nil, []int64{-1, 3, 224, 224}), []int64{-1, 1 << 32, 1 << 32}), "")
	f.Add(appendShapes(appendShapes(nil, []int64{-1, 3, 224, 224}), []int64{-1, -1}), "")
	f.Add(appendShapes(appendShapes(nil, []int64{-1, 3, 1 << 62, 1 << 62}), []int64{1, 5}), "")
	f.Add(appendShapes(appendShapes(nil, []int64{-1, 3, 0, 0}), []int64{1, 5}), "")
	f.Add(appendShapes(appendShapes(nil, []int64{-1, 3, 8, 8}, []int64{1}), []int64{1, 5}), "")
	f.Add(appendShapes(nil), "")
	f.Fuzz(func(t *testing.T, b []byte, output string) {
		ins, rest := shapes(b, "i")
		outs, _ := shapes(rest, "o")
		const path = "user.onnx"
		input, out, size, dim, err := userIO(path, output, ins, outs)
		if err != nil {
			if !strings.HasPrefix(err.Error(), path+": ") {
				t.Fatalf("error not naming the file: %v", err)
			}
			return
		}
		if len(ins) != 1 || input != ins[0].Name {
			t.Fatalf("input %q of %v", input, ins)
		}
		in := ins[0].Dimensions
		if len(in) != 4 || in[1] != 3 || in[2] != in[3] || int64(size) != in[2] || size <= 0 {
			t.Fatalf("size %d of input shape %v", size, in)
		}
		i := slices.IndexFunc(outs, func(o ioInfo) bool { return o.Name == out })
		if i < 0 || (output != "" && out != output) || (output == "" && i != 0) {
			t.Fatalf("output %q (asked %q) of %v", out, output, outs)
		}
		want := big.NewInt(1)
		for _, d := range outs[i].Dimensions[1:] {
			if d <= 0 {
				t.Fatalf("accepted output shape %v", outs[i].Dimensions)
			}
			want.Mul(want, big.NewInt(d))
		}
		if len(outs[i].Dimensions) == 0 || dim < 1 || dim > maxFeatures || want.Cmp(big.NewInt(int64(dim))) != 0 {
			t.Fatalf("feature length %d of output shape %v", dim, outs[i].Dimensions)
		}
	})
}

// FuzzBuildShapes gives one tensor of a checkpoint (the tiny ResNet-50
// or ViT of testdata, read whole) a shape from the fuzzer, with values
// to match, as a checkpoint file could declare it. The builders read
// their layers' sizes from the tensors: whatever the shape, ResNet50 and
// ViT never panic, and refuse a checkpoint they cannot build naming its
// file.
func FuzzBuildShapes(f *testing.F) {
	type arch struct {
		w     *Weights
		names []string
		build func(*Weights) (*Model, error)
	}
	var archs []arch
	for _, c := range []struct {
		file  string
		build func(*Weights) (*Model, error)
	}{
		{"testdata/tiny_resnet.safetensors", func(w *Weights) (*Model, error) { return ResNet50(w) }},
		{"testdata/tiny_vit.safetensors", func(w *Weights) (*Model, error) { return ViT(w, 3) }},
	} {
		w, err := LoadCheckpoint(c.file)
		if err != nil {
			f.Fatal(err)
		}
		names := slices.Sorted(maps.Keys(w.Tensors))
		archs = append(archs, arch{w, names, c.build})
	}
	// every tensor with its own shape (the builds succeed), then others
	for ai, a := range archs {
		for i, name := range a.names {
			var dims []byte
			for _, d := range a.w.Tensors[name].Shape {
				dims = append(dims, byte(d))
			}
			if i%7 == 0 {
				f.Add(ai == 1, uint16(i), dims)
			}
		}
	}
	f.Add(false, uint16(0), []byte{64, 3, 7, 7})
	f.Add(false, uint16(1), []byte{})
	f.Add(false, uint16(5), []byte{0})
	f.Add(true, uint16(0), []byte{1, 1, 1, 1})
	f.Add(true, uint16(3), []byte{200})
	f.Add(true, uint16(7), []byte{3, 0, 2})
	f.Fuzz(func(t *testing.T, vit bool, which uint16, dims []byte) {
		a := archs[0]
		if vit {
			a = archs[1]
		}
		if len(dims) > 4 {
			dims = dims[:4]
		}
		shape := make([]int64, len(dims))
		n := int64(1)
		for i, d := range dims {
			shape[i] = int64(d)
			n *= int64(d)
		}
		if n > 1<<20 {
			return // the values this test would make, not the builders'
		}
		name := a.names[int(which)%len(a.names)]
		w := &Weights{Source: a.w.Source, Tensors: maps.Clone(a.w.Tensors)}
		w.Tensors[name] = Tensor{Shape: shape, Data: make([]float32, n)}
		if _, err := a.build(w); err != nil && !strings.Contains(err.Error(), w.Source) {
			t.Fatalf("%s given shape %v: %v, not naming %s", name, shape, err, w.Source)
		}
	})
}
