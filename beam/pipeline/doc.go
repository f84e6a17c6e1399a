// Package pipeline is Fly-CL's learn on Apache Beam: the inputs (image
// files of a data set, or rows of a feature file) are cut into shards;
// workers extract features with flycl's extractor (extract.Extractor, one
// per DoFn instance with its ONNX Runtime session: OpenExtractor), expand them
// with the model's projection and top-k, and sum the training statistics
// G = Σ hᵀh and S = Σ hᵀy of each bundle in float64; the pieces are summed
// per row block of G across bundles, and one final step verifies that
// every sample was counted exactly once, chooses λ by GCV on the summed
// statistics, solves and writes the model file.
//
// The pipeline runs on any Beam runner: prism in-process for tests, and
// Flink, Spark or Dataflow through Beam's portable runner (see
// docs/SCALE.md).
package pipeline
