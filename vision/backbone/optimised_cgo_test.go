//go:build cgo

package backbone

import (
	"os"
	"path/filepath"
	"testing"

	ort "github.com/yalue/onnxruntime_go"
)

// optimisedGraph returns the ONNX graph ONNX Runtime's optimiser (level
// all, as sessions use) makes of m, as it writes it to a file.
func optimisedGraph(t *testing.T, m *Model) []byte {
	t.Helper()
	opts, err := ort.NewSessionOptions()
	if err != nil {
		t.Fatal(err)
	}
	defer opts.Destroy()
	path := filepath.Join(t.TempDir(), "opt.onnx")
	opts.SetGraphOptimizationLevel(ort.GraphOptimizationLevelEnableAll)
	opts.SetOptimizedModelFilePath(path)
	s, err := ort.NewDynamicAdvancedSessionWithONNXData(m.ONNX, []string{m.Input}, m.Outputs, opts)
	if err != nil {
		t.Fatal(err)
	}
	s.Destroy()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
