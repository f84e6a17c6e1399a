package leakcheck

import (
	"runtime"
	"testing"
	"time"
)

// Settled waits, up to 10 s, for the number of goroutines to fall back to
// n (a goroutine that has closed its done channel may not have returned
// yet), and fails t with every goroutine's stack when it does not.
func Settled(t testing.TB, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); runtime.NumGoroutine() > n; {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines, want %d:\n%s", runtime.NumGoroutine(), n, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(time.Millisecond)
	}
}
