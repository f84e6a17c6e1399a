//go:build !cgo

package main

// selfPath is "" without cgo: there is no loader to ask, and locate then
// looks where it looks for any program (a build without cgo is vetted,
// never loaded as a C library).
func selfPath() string { return "" }
