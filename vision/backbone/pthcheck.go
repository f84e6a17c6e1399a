package backbone

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math/bits"
	"os"
	"path"

	"github.com/nlpodyssey/gopickle/pickle"
	py "github.com/nlpodyssey/gopickle/types"

	"github.com/flycl/flycl/internal/pickleops"
)

// gopickle allocates whatever a checkpoint claims (a string's length, a
// frame's size, a storage's element count) before reading it, and panics
// on some inputs. checkPyTorch reads the file first and checks every such
// claim against the bytes that are really there, so that LoadPyTorch can
// then hand the file to gopickle.

// storageSize gives the bytes per element of torch storage classes.
var storageSize = map[string]uint64{"FloatStorage": 4, "HalfStorage": 2, "BFloat16Storage": 2, "DoubleStorage": 8,
	"LongStorage": 8, "IntStorage": 4, "ShortStorage": 2, "CharStorage": 1, "ByteStorage": 1, "BoolStorage": 1}

// storageClaim is one ("storage", class, key, location, size, ...)
// persistent id.
type storageClaim struct {
	key   string
	esize uint64
	n     uint64
}

// scanPickle checks the opcodes of the pickle at the start of b and
// unpickles it with inert classes, returning the pickle's length, its
// value, and the storages it references.
func scanPickle(b []byte) (int, any, []storageClaim, error) {
	n, err := pickleops.Len(b)
	if err != nil {
		return 0, nil, nil, err
	}
	var claims []storageClaim
	u := pickle.NewUnpickler(bytes.NewReader(b[:n]))
	u.FindClass = func(module, name string) (any, error) { return &inertClass{module, name}, nil }
	u.PersistentLoad = func(id any) (any, error) {
		t, ok := id.(*py.Tuple)
		if !ok || t.Len() < 5 {
			return nil, fmt.Errorf("persistent id %v is not a storage", id)
		}
		if s, _ := t.Get(0).(string); s != "storage" {
			return nil, fmt.Errorf("persistent id %v is not a storage", id)
		}
		cls, _ := t.Get(1).(*inertClass)
		key, _ := t.Get(2).(string)
		size, ok := t.Get(4).(int)
		if cls == nil || !ok || size < 0 {
			return nil, fmt.Errorf("bad storage record %v", id)
		}
		es := storageSize[cls.name]
		if es == 0 {
			return nil, fmt.Errorf("unsupported storage %s.%s", cls.module, cls.name)
		}
		claims = append(claims, storageClaim{key: key, esize: es, n: uint64(size)})
		return nil, nil
	}
	v, err := u.Load()
	if err != nil {
		return 0, nil, nil, err
	}
	return n, v, claims, nil
}

// inertClass stands for every class a checkpoint's pickle names: calling
// it, or building an instance, does nothing.
type inertClass struct{ module, name string }

type inertObject struct{}

func (*inertClass) Call(...any) (any, error)     { return &inertObject{}, nil }
func (*inertClass) PyNew(...any) (any, error)    { return &inertObject{}, nil }
func (*inertObject) PySetState(any) error        { return nil }
func (*inertObject) PyDictSet(any, any) error    { return nil }
func (*inertObject) PySetAttr(string, any) error { return nil }

// storageBytes returns n*esize, or an error if it overflows or exceeds
// avail.
func storageBytes(c storageClaim, avail uint64) error {
	hi, lo := bits.Mul64(c.n, c.esize)
	if hi != 0 || lo > avail {
		return fmt.Errorf("storage %q claims %d elements of %d bytes, but its data holds %d bytes (truncated or corrupt)", c.key, c.n, c.esize, avail)
	}
	return nil
}

// checkPyTorch validates a torch.save file (zip or legacy format) as
// described above. Panics of the pickle library on malformed input are
// turned into errors.
func checkPyTorch(p string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("malformed checkpoint (%v)", r)
		}
	}()
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	var magic [4]byte
	io.ReadFull(f, magic[:])
	if string(magic[:]) != "PK\x03\x04" {
		b, err := io.ReadAll(f)
		if err != nil {
			return err
		}
		return checkLegacy(append(magic[:], b...))
	}
	zr, err := zip.NewReader(f, st.Size())
	if err != nil {
		return err
	}
	records := map[string]*zip.File{}
	for _, zf := range zr.File {
		off, err := zf.DataOffset()
		if err != nil {
			return err
		}
		if off < 0 || zf.CompressedSize64 > uint64(st.Size()) || uint64(off)+zf.CompressedSize64 > uint64(st.Size()) ||
			(zf.Method == zip.Store && zf.CompressedSize64 != zf.UncompressedSize64) ||
			(zf.Method == zip.Deflate && zf.UncompressedSize64/1032 > zf.CompressedSize64+1) {
			return fmt.Errorf("zip member %s: sizes do not fit the %d-byte file (truncated or corrupt)", zf.Name, st.Size())
		}
		_, name := path.Split(zf.Name)
		records[name] = zf
	}
	dz, ok := records["data.pkl"]
	if !ok {
		return fmt.Errorf("no data.pkl in the archive")
	}
	rc, err := dz.Open()
	if err != nil {
		return err
	}
	b, err := io.ReadAll(rc)
	rc.Close()
	if err != nil {
		return fmt.Errorf("data.pkl: %w", err)
	}
	_, _, claims, err := scanPickle(b)
	if err != nil {
		return fmt.Errorf("data.pkl: %w", err)
	}
	for _, c := range claims {
		zf, ok := records[c.key]
		if !ok {
			return fmt.Errorf("storage %q has no data record", c.key)
		}
		if err := storageBytes(c, zf.UncompressedSize64); err != nil {
			return err
		}
	}
	return nil
}

// checkLegacy validates the pre-1.6 torch.save layout: magic number,
// protocol version and system-info pickles, the object pickle, the list of
// storage keys, then for each key an 8-byte element count and the data.
func checkLegacy(b []byte) error {
	var main []storageClaim
	var keys any
	for k := 0; k < 5; k++ {
		n, v, claims, err := scanPickle(b)
		if err != nil {
			return fmt.Errorf("legacy checkpoint, pickle %d: %w", k+1, err)
		}
		if k == 3 {
			main = claims
		}
		if k == 4 {
			keys = v
		}
		b = b[n:]
	}
	esize := map[string]uint64{}
	for _, c := range main {
		esize[c.key] = c.esize
		if err := storageBytes(c, uint64(len(b))); err != nil {
			return err
		}
	}
	l, ok := keys.(*py.List)
	if !ok {
		return fmt.Errorf("legacy checkpoint: storage keys are %T, want a list", keys)
	}
	for i := 0; i < l.Len(); i++ {
		key, _ := l.Get(i).(string)
		es, ok := esize[key]
		if !ok {
			return fmt.Errorf("legacy checkpoint: storage key %v is not referenced", l.Get(i))
		}
		if len(b) < 8 {
			return fmt.Errorf("legacy checkpoint: storage %q is truncated", key)
		}
		c := storageClaim{key: key, esize: es, n: binary.LittleEndian.Uint64(b)}
		b = b[8:]
		if err := storageBytes(c, uint64(len(b))); err != nil {
			return err
		}
		b = b[c.n*c.esize:]
	}
	return nil
}
