//go:build !unix

package proctime

import "time"

// CPU returns 0 where getrusage does not exist (Windows): the CPU columns
// of the benchmarks then read 0.
func CPU() time.Duration { return 0 }
