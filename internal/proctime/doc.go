// Package proctime reads the CPU time this process has used, which
// benchmarks print beside wall time: on a machine shared with other jobs
// the wall time measures the other load as much as the code.
package proctime
