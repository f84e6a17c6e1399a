// Package leakcheck lets tests check that the goroutines a piece of work
// started have ended.
package leakcheck
