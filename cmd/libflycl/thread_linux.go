package main

import "syscall"

// threadID returns the calling OS thread's id.
func threadID() int { return syscall.Gettid() }
