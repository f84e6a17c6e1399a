package backbone

import (
	"strings"
	"testing"
)

// TestSessionThreadsBounded: a session asked for more threads than
// MaxThreads is refused, naming the number, before ONNX Runtime starts
// them (flycl learn --threads 100000 ran for minutes instead).
func TestSessionThreadsBounded(t *testing.T) {
	m, err := tinyConvNet(tinyWeights(1, []int{3, 4}), 1)()
	if err != nil {
		t.Fatal(err)
	}
	// one past the bound (not 100000: without the bound the test would
	// hang where the command did)
	s, err := m.NewSession(MaxThreads + 1)
	if err == nil {
		s.Close()
	}
	if err == nil || !strings.Contains(err.Error(), "threads 1025: at most 1024") {
		t.Fatalf("NewSession(%d): %v, want a refusal naming the threads", MaxThreads+1, err)
	}
}
