//go:build !unix

package ridge

import "time"

func cpuTime() time.Duration { return 0 }
