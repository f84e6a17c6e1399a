package features

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func npyBytes(descr, shape string, data []byte) []byte {
	dict := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, shape)
	total := 10 + len(dict) + 1
	dict += strings.Repeat(" ", (64-total%64)%64) + "\n"
	h := []byte("\x93NUMPY\x01\x00")
	h = binary.LittleEndian.AppendUint16(h, uint16(len(dict)))
	return append(append(h, dict...), data...)
}

func writeNPZ(t testing.TB, path string, members map[string][]byte) {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, data := range members {
		w, _ := zw.CreateHeader(&zip.FileHeader{Name: name + ".npy", Method: zip.Store})
		w.Write(data)
	}
	zw.Close()
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func le(vals ...any) []byte {
	var b []byte
	for _, v := range vals {
		b, _ = binary.Append(b, binary.LittleEndian, v)
	}
	return b
}

// The probes: headers that claim shapes the data cannot hold.
func TestLoadRejectsClaimedShapes(t *testing.T) {
	dir := t.TempDir()
	f128 := le(make([]float32, 128))
	lab4 := le([]int64{0, 1, 2, 3})
	for _, c := range []struct {
		file, want string
		m          map[string][]byte
	}{
		{"wide.npz", `"features"`, map[string][]byte{"features": npyBytes("<f4", "(4, 4611686018427387936)", f128), "labels": npyBytes("<i8", "(4,)", lab4)}},
		{"labels.npz", `"labels"`, map[string][]byte{"features": npyBytes("<f4", "(4, 32)", f128), "labels": npyBytes("<i8", "(4611686018427387904,)", lab4)}},
		{"claims.npz", `"features"`, map[string][]byte{"features": npyBytes("<f4", "(700000, 768)", le(make([]float32, 10240))), "labels": npyBytes("<i8", "(4,)", lab4)}},
	} {
		p := filepath.Join(dir, c.file)
		writeNPZ(t, p, c.m)
		_, err := Load(p)
		if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error naming the file and %s", c.file, err, c.want)
		}
	}
}

// A byte flipped in the middle of a feature file (numpy: "Bad CRC-32")
// must not load as a changed feature row.
func TestLoadRejectsCorruptFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f.npz")
	s := &Set{X: make([]float32, 200*16), N: 200, D: 16, Labels: make([]int, 200)}
	for i := range s.X {
		s.X[i] = float32(i)
	}
	if err := Save(p, s); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	i := bytes.Index(b, le(float32(1600)))
	b[i+2] ^= 0x10
	os.WriteFile(p, b, 0o644)
	if _, err := Load(p); err == nil || !strings.Contains(err.Error(), "CRC") || !strings.Contains(err.Error(), p) {
		t.Fatalf("corrupt file: %v", err)
	}
}

func TestValidateOverflow(t *testing.T) {
	s := &Set{X: make([]float32, 128), N: 4, D: 1<<62 + 32, Labels: make([]int, 4)}
	if err := s.Validate(); err == nil {
		t.Fatal("N×D overflowing to len(X): no error")
	}
}
