package ortnode

import (
	"errors"
	"testing"
)

// A folder without onnxruntime-node is reported as unavailable (callers
// skip on it), never as a runner that fails later.
func TestFindWithoutRuntime(t *testing.T) {
	if _, err := Find(t.TempDir()); !errors.Is(err, ErrUnavailable) {
		t.Errorf("Find on an empty folder: %v, want ErrUnavailable", err)
	}
}
