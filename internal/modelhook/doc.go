// Package modelhook types the few functions that reach inside a flycl
// model (to restore one from a model file's parts, to write its
// statistics, to carry its calibration through a journal, to score test
// sets by sgemm) for internal/codec, which sits above the root package
// and is their one caller. They are kept out of the root package's API:
// only the module's own readers and writers of model files, and its
// research and benchmark harnesses, use them (through codec).
//
// Package flycl implements Hooks with a stateless value that
// flycl.Internal returns. Internal's argument is a Key, which no package
// outside this module can name or build, so no other module can call it;
// nothing is registered and no variable is set. Hooks takes flycl's
// types as type parameters because this package cannot import flycl,
// which imports it; codec instantiates it with them, so every call is
// checked by the compiler.
package modelhook
