//go:build !linux

package main

// threadID returns 0 where the thread's id is not read: the last error
// is then the process's (flycl.h: per thread on Linux).
func threadID() int { return 0 }
