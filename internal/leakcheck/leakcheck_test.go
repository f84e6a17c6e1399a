package leakcheck

import (
	"runtime"
	"testing"
)

// TestSettledWaitsForAGoroutine: Settled returns only once a goroutine
// that was running when it was called has returned.
func TestSettledWaitsForAGoroutine(t *testing.T) {
	n := runtime.NumGoroutine()
	release, ended := make(chan struct{}), false
	done := make(chan struct{})
	go func() {
		<-release
		ended = true
		close(done)
	}()
	close(release)
	Settled(t, n)
	<-done // the goroutine's write happens before this read
	if !ended {
		t.Error("Settled returned before the goroutine ended")
	}
	if g := runtime.NumGoroutine(); g > n {
		t.Errorf("%d goroutines after Settled, want %d", g, n)
	}
}
