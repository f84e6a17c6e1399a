package experiment

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
)

// TestSourcesIdentify: the files read are identified in a fixed order,
// each by the resolved file's size and SHA-256 (computed here with
// crypto/sha256) under the path the user gave; files not read are left
// out, and a missing one is an error.
func TestSourcesIdentify(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	train, test, w := write("train.npz", "train"), write("test.npz", "test rows"), write("w.npz", "W")
	data := write("cifar.tar.gz", "the archive")
	s := Sources{W: w, Test: test, Train: train, Data: data, DataGiven: ""}
	got, err := s.Identify()
	if err != nil {
		t.Fatal(err)
	}
	want := []struct{ role, path, body string }{
		{"train", train, "train"}, {"test", test, "test rows"}, {"data", "", "the archive"}, {"w", w, "W"},
	}
	if len(got) != len(want) {
		t.Fatalf("%d inputs %+v, want %d", len(got), got, len(want))
	}
	for i, wi := range want {
		sum := sha256.Sum256([]byte(wi.body))
		if got[i].Role != wi.role || got[i].Path != wi.path || got[i].Size != int64(len(wi.body)) || got[i].SHA256 != hex.EncodeToString(sum[:]) {
			t.Errorf("input %d: %+v, want %s %q size %d", i, got[i], wi.role, wi.path, len(wi.body))
		}
	}
	if _, err := (Sources{Weights: filepath.Join(dir, "none")}).Identify(); err == nil {
		t.Error("missing weights: no error")
	}
	if ins, err := (Sources{}).Identify(); err != nil || len(ins) != 0 {
		t.Errorf("no files: %v, %v", ins, err)
	}
}

// TestDataName: the data set as given, else the training feature file.
func TestDataName(t *testing.T) {
	for _, tc := range []struct {
		c    Config
		want string
	}{
		{Config{Data: "cifar10:/d"}, "cifar10:/d"},
		{Config{Data: "features", Inputs: []Input{{Role: "test", Path: "te.npz"}, {Role: "train", Path: "tr.npz"}}}, "tr.npz"},
		{Config{Data: "features"}, "features"},
	} {
		if got := tc.c.DataName(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.c, got, tc.want)
		}
	}
}
