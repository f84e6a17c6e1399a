// Package ortnode runs an ONNX graph in ONNX Runtime for Node.js (the npm
// package onnxruntime-node, which `make ort` installs) through the script
// run.js: the tests and benchmarks of flycl's exported graphs check them
// in a runtime that flycl does not link, through its JavaScript API.
package ortnode
