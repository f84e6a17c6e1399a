//go:build !unix

package bench

import "time"

// processCPU reports 0 where getrusage does not exist (Windows): the CPU
// columns of the benchmarks then read 0.
func processCPU() time.Duration { return 0 }
