//go:build unix

package proctime

import (
	"syscall"
	"time"
)

// CPU returns the user and system CPU time of this process, all its
// threads together (getrusage), or 0 when it cannot be read.
func CPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
