package backbone

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sort"
	"strings"

	"github.com/nlpodyssey/gopickle/pytorch"
	py "github.com/nlpodyssey/gopickle/types"

	"github.com/flycl/flycl/format/npz"
)

// LoadCheckpoint reads a checkpoint by its extension: .safetensors,
// .pth/.pt/.bin (PyTorch, zip or legacy), or .npz (NumPy).
func LoadCheckpoint(path string) (*Weights, error) {
	switch {
	case strings.HasSuffix(path, ".safetensors"):
		return LoadSafetensors(path)
	case strings.HasSuffix(path, ".npz"):
		return loadNPZ(path)
	case strings.HasSuffix(path, ".pth"), strings.HasSuffix(path, ".pt"), strings.HasSuffix(path, ".bin"):
		return LoadPyTorch(path)
	}
	return nil, fmt.Errorf("%s: unknown checkpoint format (want .safetensors, .pth or .npz)", path)
}

// LoadSafetensors reads a safetensors file (F32, F16 and BF16 tensors are
// converted to float32).
func LoadSafetensors(path string) (*Weights, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ReadSafetensors(b, path)
}

// ReadSafetensors decodes the bytes of a safetensors file; name is used in
// error messages. Shapes, offsets and sizes are checked against each other
// and against the data before anything is allocated.
func ReadSafetensors(b []byte, name string) (*Weights, error) {
	path := name
	if len(b) < 8 {
		return nil, fmt.Errorf("%s: too short for safetensors", path)
	}
	n := binary.LittleEndian.Uint64(b)
	if n > uint64(len(b)-8) {
		return nil, fmt.Errorf("%s: safetensors header of %d bytes in a %d-byte file (truncated?)", path, n, len(b))
	}
	var hdr map[string]json.RawMessage
	if err := json.Unmarshal(b[8:8+n], &hdr); err != nil {
		return nil, fmt.Errorf("%s: bad safetensors header: %w", path, err)
	}
	data := b[8+n:]
	w := &Weights{Source: path, Tensors: map[string]Tensor{}}
	for name, raw := range hdr {
		if name == "__metadata__" {
			continue
		}
		var info struct {
			Dtype   string    `json:"dtype"`
			Shape   []int64   `json:"shape"`
			Offsets [2]uint64 `json:"data_offsets"`
		}
		if err := json.Unmarshal(raw, &info); err != nil {
			return nil, fmt.Errorf("%s: tensor %q: %w", path, name, err)
		}
		lo, hi := info.Offsets[0], info.Offsets[1]
		if hi < lo || hi > uint64(len(data)) {
			return nil, fmt.Errorf("%s: tensor %q: data [%d,%d) outside the %d data bytes (truncated?)", path, name, lo, hi, len(data))
		}
		raw := data[lo:hi]
		size := map[string]int64{"F32": 4, "F16": 2, "BF16": 2}[info.Dtype]
		if size == 0 {
			return nil, fmt.Errorf("%s: tensor %q has dtype %s, want F32, F16 or BF16", path, name, info.Dtype)
		}
		cnt, err := checkedNumel(info.Shape)
		if err != nil {
			return nil, fmt.Errorf("%s: tensor %q: %w", path, name, err)
		}
		if int64(len(raw))/size != cnt || int64(len(raw))%size != 0 {
			return nil, fmt.Errorf("%s: tensor %q: %d bytes for shape %v of %s", path, name, len(raw), info.Shape, info.Dtype)
		}
		t := Tensor{Shape: info.Shape, Data: make([]float32, cnt)}
		for i := range t.Data {
			switch info.Dtype {
			case "F32":
				t.Data[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
			case "F16":
				t.Data[i] = math.Float32frombits(pytorch.FloatBits16to32(binary.LittleEndian.Uint16(raw[2*i:])))
			case "BF16":
				t.Data[i] = math.Float32frombits(uint32(binary.LittleEndian.Uint16(raw[2*i:])) << 16)
			}
		}
		w.Tensors[name] = t
	}
	return w, nil
}

// LoadPyTorch reads a state dict saved by torch.save (zip or legacy
// format), e.g. torchvision's resnet50-11ad3fa6.pth. A dict wrapping the
// state dict under "state_dict" or "model" is unwrapped.
func LoadPyTorch(path string) (w *Weights, err error) {
	if err := checkPyTorch(path); err != nil {
		return nil, fmt.Errorf("%s: cannot read PyTorch checkpoint: %w", path, err)
	}
	defer func() {
		if r := recover(); r != nil { // gopickle panics on some malformed input
			w, err = nil, fmt.Errorf("%s: cannot read PyTorch checkpoint: malformed (%v)", path, r)
		}
	}()
	obj, err := pytorch.Load(path)
	if err != nil {
		return nil, fmt.Errorf("%s: cannot read PyTorch checkpoint: %w", path, err)
	}
	entries := func(o any) ([]any, func(any) (any, bool), bool) {
		switch d := o.(type) {
		case *py.OrderedDict:
			keys := []any{}
			for k := range d.Map {
				keys = append(keys, k)
			}
			return keys, d.Get, true
		case *py.Dict:
			return d.Keys(), d.Get, true
		}
		return nil, nil, false
	}
	keys, get, ok := entries(obj)
	if !ok {
		return nil, fmt.Errorf("%s: checkpoint holds %T, want a state dict", path, obj)
	}
	for _, wrap := range []string{"state_dict", "model"} {
		if v, found := get(wrap); found {
			if k2, g2, ok := entries(v); ok {
				keys, get = k2, g2
			}
		}
	}
	w = &Weights{Source: path, Tensors: map[string]Tensor{}}
	for _, k := range keys {
		name, _ := k.(string)
		v, _ := get(k)
		t, ok := v.(*pytorch.Tensor)
		if !ok {
			continue // e.g. num_batches_tracked is a tensor too; metadata is not
		}
		ft, err := contiguous(t)
		if err != nil {
			return nil, fmt.Errorf("%s: tensor %q: %w", path, name, err)
		}
		w.Tensors[name] = ft
	}
	if len(w.Tensors) == 0 {
		return nil, fmt.Errorf("%s: no tensors in the state dict", path)
	}
	return w, nil
}

// contiguous copies a strided torch tensor into a dense float32 tensor.
func contiguous(t *pytorch.Tensor) (Tensor, error) {
	var src []float32
	switch s := t.Source.(type) {
	case *pytorch.FloatStorage:
		src = s.Data
	case *pytorch.HalfStorage:
		src = s.Data
	case *pytorch.DoubleStorage:
		src = make([]float32, len(s.Data))
		for i, v := range s.Data {
			src[i] = float32(v)
		}
	case *pytorch.LongStorage:
		src = make([]float32, len(s.Data))
		for i, v := range s.Data {
			src[i] = float32(v)
		}
	default:
		return Tensor{}, fmt.Errorf("unsupported storage %T", t.Source)
	}
	out := Tensor{}
	for _, d := range t.Size {
		out.Shape = append(out.Shape, int64(d))
	}
	n, err := checkedNumel(out.Shape)
	if err != nil {
		return Tensor{}, err
	}
	if len(t.Stride) != len(t.Size) {
		return Tensor{}, fmt.Errorf("%d strides for shape %v", len(t.Stride), t.Size)
	}
	if n > int64(len(src)) {
		return Tensor{}, fmt.Errorf("shape %v needs %d values but the storage holds %d", t.Size, n, len(src))
	}
	if n > 0 {
		// the largest offset the view reaches must lie in the storage
		last := int64(t.StorageOffset)
		for d, sz := range t.Size {
			if t.Stride[d] < 0 || t.Stride[d] > len(src) {
				return Tensor{}, fmt.Errorf("stride %v outside the %d-value storage", t.Stride, len(src))
			}
			last += int64(sz-1) * int64(t.Stride[d]) // |each term| < len(src)^2 < 2^62
			if last >= int64(len(src)) {
				break
			}
		}
		if t.StorageOffset < 0 || last >= int64(len(src)) {
			return Tensor{}, fmt.Errorf("view (offset %d, shape %v, stride %v) outside the %d-value storage (truncated checkpoint?)",
				t.StorageOffset, t.Size, t.Stride, len(src))
		}
	}
	out.Data = make([]float32, n)
	idx := make([]int, len(t.Size))
	for i := range out.Data {
		off := t.StorageOffset
		for d, v := range idx {
			off += v * t.Stride[d]
		}
		out.Data[i] = src[off]
		for d := len(idx) - 1; d >= 0; d-- {
			idx[d]++
			if idx[d] < t.Size[d] {
				break
			}
			idx[d] = 0
		}
	}
	return out, nil
}

func loadNPZ(path string) (*Weights, error) {
	r, err := npz.Open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	w := &Weights{Source: path, Tensors: map[string]Tensor{}}
	keys := r.Keys()
	sort.Strings(keys)
	for _, k := range keys {
		v, shape, err := r.Float32(k)
		if err != nil {
			return nil, err
		}
		t := Tensor{Data: v}
		for _, d := range shape {
			t.Shape = append(t.Shape, int64(d))
		}
		w.Tensors[k] = t
	}
	return w, nil
}
