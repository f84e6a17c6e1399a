package main

/*
#cgo linux LDFLAGS: -ldl
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>

// flycl_self_path is the path of the file this function was loaded from:
// libflycl.so when loaded as a shared library, the program when
// libflycl.a was linked into it.
static const char *flycl_self_path(void) {
	Dl_info info;
	if (dladdr((void *)flycl_self_path, &info) && info.dli_fname != NULL) {
		return info.dli_fname;
	}
	return NULL;
}
*/
import "C"

import "path/filepath"

// selfPath is the absolute path of the file libflycl runs from ("" when the
// loader does not say), from which locate finds the ONNX Runtime library
// of an install (PREFIX/lib/libflycl.so: PREFIX/lib/flycl/) or of the
// Python wheel (beside it).
func selfPath() string {
	p := C.flycl_self_path()
	if p == nil {
		return ""
	}
	s, err := filepath.Abs(C.GoString(p))
	if err != nil {
		return ""
	}
	return s
}
