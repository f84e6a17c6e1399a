package main

import "sync"

// lastErrors holds the message of the last failed call of each thread
// (by its id: a C call into Go runs on the caller's thread).
var lastErrors sync.Map

func setLastError(msg string) { lastErrors.Store(threadID(), msg) }

func lastError() string {
	if v, ok := lastErrors.Load(threadID()); ok {
		return v.(string)
	}
	return ""
}
