package extract

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flycl/flycl/vision/backbone"
)

// TestCacheDirNotAFolder: a cache folder that is a file is refused
// saying it is the feature cache's (a bare "mkdir X: not a directory"
// did not say which of a command's paths was at fault).
func TestCacheDirNotAFolder(t *testing.T) {
	file := filepath.Join(t.TempDir(), "photo.jpg")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	j := &Job{Model: &backbone.Model{Name: "fake", Hash: "0", Outputs: []string{"f"}, Dims: []int{3}}, CacheDir: file}
	_, _, err := Run(context.Background(), j)
	if err == nil || !strings.Contains(err.Error(), "feature cache folder "+file) {
		t.Fatalf("a file as the cache folder: %v", err)
	}
}
