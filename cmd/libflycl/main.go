package main

// main is never called: the package is built as a C library
// (-buildmode=c-shared or c-archive), whose entry points are the
// functions of flycl.h.
func main() {}
