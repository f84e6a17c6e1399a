package dataset

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
	"os"
	"path"
	"path/filepath"
	"strings"

	"codeberg.org/sbinet/npyio/npy"
	"github.com/nlpodyssey/gopickle/pickle"
	py "github.com/nlpodyssey/gopickle/types"

	"github.com/flycl/flycl/internal/pickleops"
	"github.com/flycl/flycl/vision/imageio"
)

// files gives the contents of named files of a data set that is either a
// directory or a tar(.gz) archive of it.
type files struct {
	src     string
	archive map[string][]byte // base name -> content, for archives
}

// openFiles reads the members with the given base names from an archive,
// or prepares to read them from a directory (searched also one level down,
// e.g. root/cifar-100-python/train).
func openFiles(src string, want []string) (*files, error) {
	st, err := os.Stat(src)
	if err != nil {
		return nil, err
	}
	f := &files{src: src}
	if st.IsDir() {
		return f, nil
	}
	need := map[string]bool{}
	for _, w := range want {
		need[w] = true
	}
	f.archive = map[string][]byte{}
	err = walkTar(src, func(name string, r io.Reader) error {
		base := path.Base(name)
		if !need[base] {
			return nil
		}
		b, err := io.ReadAll(r)
		if err != nil {
			return err
		}
		f.archive[base] = b
		return nil
	})
	return f, err
}

func (f *files) read(name string) ([]byte, error) {
	if f.archive != nil {
		b, ok := f.archive[name]
		if !ok {
			return nil, fmt.Errorf("%s: archive has no file %q", f.src, name)
		}
		return b, nil
	}
	p := filepath.Join(f.src, name)
	if _, err := os.Stat(p); err != nil {
		if m, _ := filepath.Glob(filepath.Join(f.src, "*", name)); len(m) == 1 {
			p = m[0]
		}
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.src, err)
	}
	return b, nil
}

// CIFAR variants.
const (
	CIFAR10  = "cifar10"
	CIFAR100 = "cifar100"
)

// OpenCIFAR reads CIFAR-10 or CIFAR-100 (kind) for split "train" or
// "test" from the official python-pickle or binary release, given as the
// .tar.gz or the extracted directory. The format is detected.
func OpenCIFAR(kind, src, split string) (Dataset, error) {
	if split != "train" && split != "test" {
		return nil, fmt.Errorf("cifar: split %q, want train or test", split)
	}
	var pyFiles, binFiles []string
	var pyMeta, binMeta string
	switch kind {
	case CIFAR10:
		if split == "train" {
			for i := 1; i <= 5; i++ {
				pyFiles = append(pyFiles, fmt.Sprintf("data_batch_%d", i))
				binFiles = append(binFiles, fmt.Sprintf("data_batch_%d.bin", i))
			}
		} else {
			pyFiles, binFiles = []string{"test_batch"}, []string{"test_batch.bin"}
		}
		pyMeta, binMeta = "batches.meta", "batches.meta.txt"
	case CIFAR100:
		pyFiles, binFiles = []string{split}, []string{split + ".bin"}
		pyMeta, binMeta = "meta", "fine_label_names.txt"
	default:
		return nil, fmt.Errorf("cifar: unknown kind %q", kind)
	}
	all := append(append(append([]string{}, pyFiles...), binFiles...), pyMeta, binMeta)
	fs, err := openFiles(src, all)
	if err != nil {
		return nil, err
	}
	m := &memory{name: src}
	if _, err := fs.read(pyMeta); err == nil {
		return m, m.loadCIFARPickle(fs, kind, pyFiles, pyMeta)
	}
	if _, err := fs.read(binMeta); err == nil {
		return m, m.loadCIFARBinary(fs, kind, binFiles, binMeta)
	}
	return nil, fmt.Errorf("%s: neither the python (%s) nor the binary (%s) CIFAR release", src, pyMeta, binMeta)
}

// planar converts CIFAR's 3072-byte R-plane, G-plane, B-plane record.
func planar(rec []byte) *imageio.RGB {
	img := imageio.NewRGB(32, 32)
	for i := 0; i < 1024; i++ {
		img.Pix[3*i], img.Pix[3*i+1], img.Pix[3*i+2] = rec[i], rec[1024+i], rec[2048+i]
	}
	return img
}

// pyArray is a numpy ndarray of one-byte elements as unpickled from the
// CIFAR files. npyio's own ndarray does not accept the Python 2 str that
// holds the raw data of the official releases.
type pyArray struct {
	shape []int
	raw   []byte
}

type pyReconstruct struct{}

func (pyReconstruct) Call(args ...any) (any, error) { return &pyArray{}, nil }

// PySetState takes (version, shape, dtype, is_fortran, rawdata).
func (a *pyArray) PySetState(arg any) error {
	t, ok := arg.(*py.Tuple)
	if !ok || (t.Len() != 5 && t.Len() != 4) {
		return fmt.Errorf("ndarray state is %T, want a 4- or 5-tuple", arg)
	}
	off := t.Len() - 4
	shape, ok := t.Get(off).(*py.Tuple)
	if !ok {
		return fmt.Errorf("ndarray shape is %T", t.Get(off))
	}
	n := 1
	for i := 0; i < shape.Len(); i++ {
		v, ok := shape.Get(i).(int)
		if !ok || v < 0 {
			return fmt.Errorf("ndarray shape[%d] is %v", i, shape.Get(i))
		}
		a.shape = append(a.shape, v)
		if v != 0 && n > math.MaxInt/v {
			return fmt.Errorf("ndarray shape %v overflows", a.shape)
		}
		n *= v
	}
	if f, _ := t.Get(off + 2).(bool); f && len(a.shape) > 1 {
		return fmt.Errorf("ndarray is in Fortran order")
	}
	switch r := t.Get(off + 3).(type) {
	case string:
		a.raw = []byte(r)
	case []byte:
		a.raw = r
	default:
		return fmt.Errorf("ndarray data is %T", r)
	}
	if len(a.raw) != n {
		return fmt.Errorf("ndarray holds %d bytes for shape %v: not uint8, or truncated", len(a.raw), a.shape)
	}
	return nil
}

func findClass(module, name string) (any, error) {
	switch module + "." + name {
	case "numpy.core.multiarray._reconstruct", "numpy._core.multiarray._reconstruct":
		return pyReconstruct{}, nil
	}
	return npy.ClassLoader(module, name)
}

func unpickle(name string, b []byte) (d *py.Dict, err error) {
	// gopickle allocates what length opcodes claim and panics on some
	// malformed input: check the framing first, and recover.
	if _, err := pickleops.Len(b); err != nil {
		return nil, fmt.Errorf("%s: cannot unpickle: %w", name, err)
	}
	defer func() {
		if r := recover(); r != nil {
			d, err = nil, fmt.Errorf("%s: cannot unpickle: malformed pickle (%v)", name, r)
		}
	}()
	u := pickle.NewUnpickler(bufio.NewReader(bytes.NewReader(b)))
	u.FindClass = findClass
	v, err := u.Load()
	if err != nil {
		return nil, fmt.Errorf("%s: cannot unpickle: %w", name, err)
	}
	d, ok := v.(*py.Dict)
	if !ok {
		return nil, fmt.Errorf("%s: pickle holds %T, want a dict", name, v)
	}
	return d, nil
}

// get looks a key up as str (Python 2 pickles) or bytes.
func get(d *py.Dict, key string) (any, bool) {
	if v, ok := d.Get(key); ok {
		return v, true
	}
	for _, k := range d.Keys() {
		if b, ok := k.([]byte); ok && string(b) == key {
			return d.Get(k)
		}
	}
	return nil, false
}

func toStrings(v any) []string {
	l, ok := v.(*py.List)
	if !ok {
		return nil
	}
	out := make([]string, l.Len())
	for i := range out {
		switch s := l.Get(i).(type) {
		case string:
			out[i] = s
		case []byte:
			out[i] = string(s)
		}
	}
	return out
}

func (m *memory) loadCIFARPickle(fs *files, kind string, batches []string, meta string) error {
	mb, _ := fs.read(meta)
	md, err := unpickle(meta, mb)
	if err != nil {
		return err
	}
	namesKey, labelsKey := "label_names", "labels"
	if kind == CIFAR100 {
		namesKey, labelsKey = "fine_label_names", "fine_labels"
	}
	nv, _ := get(md, namesKey)
	if m.classes = toStrings(nv); len(m.classes) == 0 {
		return fmt.Errorf("%s/%s: no %s", fs.src, meta, namesKey)
	}
	for _, name := range batches {
		b, err := fs.read(name)
		if err != nil {
			return err
		}
		d, err := unpickle(name, b)
		if err != nil {
			return fmt.Errorf("%s: %w", fs.src, err)
		}
		dv, ok1 := get(d, "data")
		lv, ok2 := get(d, labelsKey)
		if !ok1 || !ok2 {
			return fmt.Errorf("%s/%s: missing %q or %q", fs.src, name, "data", labelsKey)
		}
		arr, ok := dv.(*pyArray)
		if !ok {
			return fmt.Errorf("%s/%s: data is %T, want a numpy array", fs.src, name, dv)
		}
		data, shape := arr.raw, arr.shape
		if len(shape) != 2 || shape[1] != 3072 {
			return fmt.Errorf("%s/%s: data has shape %v, want N×3072 uint8", fs.src, name, shape)
		}
		labels, ok := lv.(*py.List)
		if !ok || labels.Len() != shape[0] {
			return fmt.Errorf("%s/%s: %s does not hold %d labels", fs.src, name, labelsKey, shape[0])
		}
		fn, _ := get(d, "filenames")
		names := toStrings(fn)
		for i := 0; i < shape[0]; i++ {
			l, ok := labels.Get(i).(int)
			if !ok || l < 0 || l >= len(m.classes) {
				return fmt.Errorf("%s/%s: label %d is %v", fs.src, name, i, labels.Get(i))
			}
			m.labels = append(m.labels, l)
			m.raw = append(m.raw, planar(data[i*3072:(i+1)*3072]))
			p := fmt.Sprintf("%s/%s#%d", fs.src, name, i)
			if i < len(names) {
				p += " " + names[i]
			}
			m.paths = append(m.paths, p)
		}
	}
	return nil
}

func (m *memory) loadCIFARBinary(fs *files, kind string, batches []string, meta string) error {
	mb, _ := fs.read(meta)
	for _, line := range strings.Split(string(mb), "\n") {
		if s := strings.TrimSpace(line); s != "" {
			m.classes = append(m.classes, s)
		}
	}
	rec, off := 3073, 0
	if kind == CIFAR100 {
		rec, off = 3074, 1 // coarse label, fine label
	}
	for _, name := range batches {
		b, err := fs.read(name)
		if err != nil {
			return err
		}
		if len(b) == 0 || len(b)%rec != 0 {
			return fmt.Errorf("%s/%s: %d bytes is not a whole number of %d-byte records (truncated?)", fs.src, name, len(b), rec)
		}
		for i := 0; i < len(b)/rec; i++ {
			r := b[i*rec : (i+1)*rec]
			l := int(r[off])
			if l >= len(m.classes) {
				return fmt.Errorf("%s/%s: record %d has label %d, only %d classes", fs.src, name, i, l, len(m.classes))
			}
			m.labels = append(m.labels, l)
			m.raw = append(m.raw, planar(r[rec-3072:]))
			m.paths = append(m.paths, fmt.Sprintf("%s/%s#%d", fs.src, name, i))
		}
	}
	return nil
}
