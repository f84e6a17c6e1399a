//go:build unix

package ridge

import (
	"syscall"
	"time"
)

// cpuTime returns the process's user+system CPU time: benchmarks report
// it next to wall time because on a shared machine wall time measures
// the other load as much as the code (with OPENBLAS_NUM_THREADS=1 the
// CPU time of BLAS work is nearly independent of it).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
