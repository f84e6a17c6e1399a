//go:build unix

package proctime

import (
	"testing"
	"time"
)

// TestCPUCountsWork: busy work on this goroutine makes the process's CPU
// time rise by 20 ms within 10 s of wall time (however loaded the machine,
// a running goroutine gets CPU; the kernel accounts in ticks of at most
// 10 ms), and CPU time never falls between two reads.
func TestCPUCountsWork(t *testing.T) {
	c0 := CPU()
	if c0 <= 0 {
		t.Fatalf("CPU() = %v at the start of a running test", c0)
	}
	start := time.Now()
	x, last := 1.0, c0
	for {
		for i := 0; i < 100000; i++ {
			x = x*1.0000001 + 1e-9
		}
		c := CPU()
		if c < last {
			t.Fatalf("CPU time fell from %v to %v", last, c)
		}
		last = c
		if c-c0 >= 20*time.Millisecond {
			return
		}
		if time.Since(start) > 10*time.Second {
			t.Fatalf("10 s of busy work added %v of CPU time (x=%g)", c-c0, x)
		}
	}
}
