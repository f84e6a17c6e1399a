// Package pipeline is Fly-CL's learn on Apache Beam: the inputs (image
// files of a data set, or rows of a feature file) are cut into shards;
// workers extract features with flycl's extractor (extract.Extractor, one
// per DoFn instance with its ONNX Runtime session: OpenExtractor), expand them
// with the model's projection and top-k, and sum the training statistics
// G = Σ hᵀh and S = Σ hᵀy of each shard in float64; the shards' pieces
// (row blocks of G, and S) are added in the fixed binary tree over the
// shards (internal/sumtree, as flycl merge adds statistics files), one
// GroupByKey per level with two children per key, so the sums are the same
// bits whatever the workers, bundles and arrival order; one final step
// verifies that every sample was counted exactly once, chooses λ by GCV on
// the summed statistics, solves and writes the model file.
//
// The pipeline runs on any Beam runner: prism in-process for tests, and
// Flink, Spark or Dataflow through Beam's portable runner (see
// docs/SCALE.md).
package pipeline
