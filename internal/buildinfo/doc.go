// Package buildinfo says which flycl is running: its version and commit
// (from the linker's -X flags when a release sets them, else from the
// build information Go stamps) and the CPU's SIMD features its numeric
// code can use. It is a utility below everything: flycl version prints
// it.
package buildinfo
