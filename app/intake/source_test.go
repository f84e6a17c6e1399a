package intake

import (
	"os"
	"path/filepath"
	"testing"
)

func TestSampleKeys(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f.npz")
	os.WriteFile(p, []byte("abc"), 0o644)
	src, err := FeatureSource(p)
	if err != nil {
		t.Fatal(err)
	}
	// SHA-256("abc"), FIPS 180-2 appendix B.1.
	const want = "features sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
	if src != want {
		t.Errorf("FeatureSource = %q, want %q", src, want)
	}
	if _, err := FeatureSource(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("FeatureSource of a missing file: no error")
	}
	for _, tc := range []struct{ got, want string }{
		{RowKey(src, 12), want + "#12"},
		{PathKey("folder:/d train", "cat/1.jpg"), "folder:/d train#cat/1.jpg"},
	} {
		if tc.got != tc.want {
			t.Errorf("key %q, want %q", tc.got, tc.want)
		}
	}
}
