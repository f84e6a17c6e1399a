// Package onnx builds ONNX models in memory: a graph of standard operators
// with float32 weights as initialisers, serialised to the ONNX protobuf
// format with google.golang.org/protobuf's low-level wire encoder. It is
// how Fly-CL turns checkpoint tensors into a model for ONNX Runtime
// without any Python export step.
package onnx
