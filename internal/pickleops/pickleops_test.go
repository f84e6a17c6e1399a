package pickleops

import (
	"encoding/binary"
	"os"
	"strings"
	"testing"
)

func TestLen(t *testing.T) {
	// CIFAR-10 batches.meta, written by Python's pickle (protocol 2): the
	// whole file is one pickle
	b, err := os.ReadFile("../../vision/dataset/testdata/cifar-10-batches-py/batches.meta")
	if err != nil {
		t.Fatal(err)
	}
	if n, err := Len(b); err != nil || n != len(b) {
		t.Errorf("batches.meta: %d, %v; want %d", n, err, len(b))
	}
	if n, err := Len(append(b[:len(b):len(b)], "trailing"...)); err != nil || n != len(b) {
		t.Errorf("pickle followed by data: %d, %v", n, err)
	}
	for name, c := range map[string][]byte{
		"truncated":  b[:len(b)-1],
		"huge str":   append([]byte("\x80\x04\x8d"), binary.LittleEndian.AppendUint64(nil, 1<<62)...),
		"huge frame": append([]byte("\x80\x04\x95"), binary.LittleEndian.AppendUint64(nil, 1<<40)...),
		"long bin":   append([]byte("\x80\x02X"), binary.LittleEndian.AppendUint32(nil, 1<<31)...),
		"bad opcode": []byte("\x80\x02\xff."),
		"no newline": []byte("ctorch\nFloat"),
	} {
		if _, err := Len(c); err == nil {
			t.Errorf("%s: no error", name)
		} else if name == "huge str" && !strings.Contains(err.Error(), "claims") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func FuzzLen(f *testing.F) {
	if b, err := os.ReadFile("../../vision/dataset/testdata/cifar-10-batches-py/batches.meta"); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if n, err := Len(b); err == nil && (n <= 0 || n > len(b) || b[n-1] != '.') {
			t.Fatalf("Len = %d for %d bytes", n, len(b))
		}
	})
}
