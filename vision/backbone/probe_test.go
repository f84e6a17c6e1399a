package backbone

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// safetensors builds a file with one F32 tensor "t" of the given JSON
// shape over data.
func safetensors(shape string, data []byte) []byte {
	hdr := fmt.Sprintf(`{"t":{"dtype":"F32","shape":%s,"data_offsets":[0,%d]}}`, shape, len(data))
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(hdr)))
	return append(append(b, hdr...), data...)
}

func allocated(fn func()) uint64 {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	fn()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// Shapes that are negative or whose product overflows are errors naming
// the file and the tensor, not makeslice panics.
func TestSafetensorsClaimedShapes(t *testing.T) {
	dir := t.TempDir()
	for i, shape := range []string{"[-1]", "[-4,-4]", "[4611686018427387904,4]", "[4,4611686018427387905]", "[1000000,1000000]"} {
		p := filepath.Join(dir, fmt.Sprintf("s%d.safetensors", i))
		os.WriteFile(p, safetensors(shape, make([]byte, 16)), 0o644)
		var err error
		n := allocated(func() { _, err = LoadCheckpoint(p) })
		if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), `"t"`) {
			t.Errorf("shape %s: %v, want an error naming the file and the tensor", shape, err)
		}
		if n > 1<<20 {
			t.Errorf("shape %s: allocated %d bytes", shape, n)
		}
	}
}

// A backbone .npy claiming (2^62,) was a makeslice panic in format/npz/npy.go.
func TestNPYDirClaimedShape(t *testing.T) {
	dir := t.TempDir()
	hdr := "{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904,), }"
	hdr += strings.Repeat(" ", (64-(10+len(hdr)+1)%64)%64) + "\n"
	b := append([]byte("\x93NUMPY\x01\x00"), byte(len(hdr)), byte(len(hdr)>>8))
	b = append(append(b, hdr...), make([]byte, 64)...)
	p := filepath.Join(dir, "conv.weight.npy")
	os.WriteFile(p, b, 0o644)
	if _, err := LoadNPYDir(dir); err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "shape") {
		t.Errorf("claimed shape: %v", err)
	}
}

// Weights.Get must not accept a tensor whose shape's product overflows to
// its length.
func TestGetOverflowingShape(t *testing.T) {
	w := &Weights{Source: "w", Tensors: map[string]Tensor{"t": {Shape: []int64{4, 1<<62 + 4}, Data: make([]float32, 16)}}}
	if _, err := w.Get("t"); err == nil {
		t.Error("overflowing shape accepted")
	}
}

// Augreg conversion of tensors with zero or inconsistent dimensions is an
// error, not a division by zero or an index out of range.
func TestAugRegBadShapes(t *testing.T) {
	good, err := LoadCheckpoint("testdata/tiny_vit_augreg.npz")
	if err != nil {
		t.Fatal(err)
	}
	for name, bad := range map[string]Tensor{
		"embedding/kernel": {Shape: []int64{0, 0, 0, 0}, Data: nil},
		"head/kernel":      {Shape: []int64{3, 7}, Data: make([]float32, 5)},
		"Transformer/encoderblock_0/MultiHeadDotProductAttention_1/out/kernel": {Shape: []int64{1}, Data: make([]float32, 1)},
		"Transformer/encoderblock_0/MlpBlock_3/Dense_0/kernel":                 {Shape: []int64{2, 2}, Data: make([]float32, 4)},
	} {
		w := &Weights{Source: "aug.npz", Tensors: map[string]Tensor{}}
		for k, v := range good.Tensors {
			w.Tensors[k] = v
		}
		w.Tensors[name] = bad
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s %v: panic %v", name, bad.Shape, r)
				}
			}()
			cw, err := FromAugReg(w)
			if err == nil {
				_, err = ViT(cw, 3)
			}
			if err == nil {
				t.Errorf("%s %v: no error", name, bad.Shape)
			}
		}()
	}
}

// pickle opcodes for a minimal torch.save zip: one FloatStorage of
// claimed size n viewed as a 1-D tensor of `view` elements.
func pthPickle(n uint64, view int) []byte {
	var b bytes.Buffer
	str := func(s string) {
		b.WriteByte('X')
		binary.Write(&b, binary.LittleEndian, uint32(len(s)))
		b.WriteString(s)
	}
	b.WriteString("\x80\x02}")
	str("w")
	b.WriteString("ctorch._utils\n_rebuild_tensor_v2\n(")
	b.WriteString("(")
	str("storage")
	b.WriteString("ctorch\nFloatStorage\n")
	str("0")
	str("cpu")
	b.WriteString("\x8a\x08")
	binary.Write(&b, binary.LittleEndian, n)
	b.WriteString("tQK\x00")
	b.WriteString("J")
	binary.Write(&b, binary.LittleEndian, int32(view))
	b.WriteString("\x85K\x01\x85\x89ccollections\nOrderedDict\n)RtRs.")
	return b.Bytes()
}

func writePth(t *testing.T, path string, pkl, data []byte) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, c := range map[string][]byte{"archive/data.pkl": pkl, "archive/data/0": data, "archive/version": []byte("3\n")} {
		w, _ := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Store})
		w.Write(c)
	}
	zw.Close()
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A .pth whose pickle claims a storage far larger than its data member
// is an error before anything of that size is allocated.
func TestPthClaimedStorage(t *testing.T) {
	dir := t.TempDir()
	ok := filepath.Join(dir, "ok.pth")
	writePth(t, ok, pthPickle(4, 4), npzF32(1, 2, 3, 4))
	w, err := LoadCheckpoint(ok)
	if err != nil {
		t.Fatalf("hand-made .pth: %v", err)
	}
	if tt, err := w.Get("w", 4); err != nil || tt.Data[3] != 4 {
		t.Fatalf("hand-made .pth: %v %v", tt, err)
	}
	for _, c := range []struct {
		n    uint64
		view int
	}{{1 << 40, 4}, {1 << 62, 4}, {4, 1 << 30}, {4, -3}} {
		p := filepath.Join(dir, "claims.pth")
		writePth(t, p, pthPickle(c.n, c.view), npzF32(1, 2, 3, 4))
		var err error
		n := allocated(func() { _, err = LoadCheckpoint(p) })
		if err == nil || !strings.Contains(err.Error(), p) {
			t.Errorf("storage %d view %d: %v", c.n, c.view, err)
		}
		if n > 8<<20 {
			t.Errorf("storage %d view %d: allocated %d bytes", c.n, c.view, n)
		}
	}
}

func npzF32(v ...float32) []byte {
	var b []byte
	for _, x := range v {
		b, _ = binary.Append(b, binary.LittleEndian, x)
	}
	return b
}
