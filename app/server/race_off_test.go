//go:build !race

package server

// raceDetector reports whether the tests run under the race detector,
// whose shadow memory counts in the process's resident memory.
const raceDetector = false
