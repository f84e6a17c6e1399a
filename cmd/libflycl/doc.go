// Command libflycl is flycl's C library: built with
//
//	go build -buildmode=c-shared -o bin/libflycl.so ./cmd/libflycl
//	go build -buildmode=c-archive -o bin/libflycl.a ./cmd/libflycl
//
// (make libflycl), it exports the functions of the one public header
// flycl.h (docs/C.md): models made from a flycl.Config given as JSON,
// learning a task from float32 rows and labels, predicting scores, the top
// classes and the answer with "unknown" and its probability, forgetting,
// unlearning, the model file the flycl command reads and writes, and
// features of images through the shipped backbones. The Python package
// (python/flycl) binds it with ctypes.
//
// Every function returns a status code (FLYCL_OK or an error whose
// message flycl_last_error gives, per thread); no Go panic crosses into C.
// Models and extractors are handles, never pointers into Go memory.
// Predictions on one model may run concurrently; its changes are
// serialized.
//
// The files: exports.go is the C interface (arguments in, status out),
// lib.go the handle table and the calls on the library packages,
// adapter.go the models' configuration and records as JSON, status.go the
// status codes and lasterr.go the per-thread error message.
package main
