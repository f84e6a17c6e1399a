// Package bench holds the machinery of flycl's benchmark commands
// ("flycl-lab bench ..."): library code that takes its inputs explicitly (an
// opened backbone, image files, a configuration, counts and durations)
// and prints its table to an io.Writer. The commands in cmd/flycl only
// resolve flags, paths and the environment, and call it.
//
// It is internal: its output is for people reading a benchmark, not an
// API.
package bench
