// Package locate finds the files flycl needs outside its binary: the ONNX
// Runtime shared library, the per-layer backbone weights, the grey-scale
// data sets and the feature cache.
//
// There is one type, Resolver. Each of its methods resolves one path in
// the same order: the command-line flag when it was given (Resolver.Flags),
// else the FLYCL_* environment variable when it is set (even to ""), else
// the documented default (Settings lists them). It is the only library
// package of flycl that reads an environment variable (the commands may:
// flycl info prints OpenBLAS's); every other package takes these paths
// explicitly. The zero Resolver is ready to use: no flags given.
//
// The commands (cmd/flycl, the Beam launcher beam/cmd/flycl-beam) build a
// Resolver from their flags and call it; a library that needs a path takes
// it as an argument instead.
package locate
