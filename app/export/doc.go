// Package export writes a learned Fly-CL model as one ONNX graph that any
// ONNX Runtime (Python, JavaScript, C#, C++, ...) can run without flycl:
// a preprocessed image batch (or a batch of feature vectors) in, through
// the model's own backbone, the sparse projection W, top-k and the
// classifier C, to one score per class, with the class names in the
// model's metadata.
//
// The graph computes what flycl.Predictor.Scores computes, in float32:
// the same W (with the model's input scale folded in, a power of two, so
// exactly), the same top-k (signed or by magnitude, ties kept at the
// lowest indices: ONNX TopK with its index tie-break, scattered back into
// a zero vector) and the same product with C; only the order of the
// floating-point sums differs; Tolerance bounds what that order can change
// in each score. A model that answers "unknown" (reject.Rule) also
// gets its open-set score, the decision and the calibrated probability as
// outputs. See docs/EXPORT.md.
package export
