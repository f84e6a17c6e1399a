// Package modelhook hands the few functions that reach inside a flycl
// model (to restore one from a model file's parts, to write its
// statistics, to carry its calibration through a journal) from the root
// package to internal/codec, which sits above the root and types them.
// They are kept out of the root package's API: only the module's own
// readers and writers of model files, and its research and benchmark
// harnesses, use them.
//
// Package flycl sets every variable once, in its init, before any other
// package can read them; nothing changes them after. Each is a func of
// the type its comment gives (internal/codec asserts it), in the style of
// grpc's internal package: this package cannot name flycl's types, which
// import it.
package modelhook
