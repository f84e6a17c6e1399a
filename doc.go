// Package flycl implements Fly-CL, class-incremental continual learning on
// top of a frozen feature extractor: each feature vector v is expanded by a
// fixed sparse random projection h = W v (m×d, p non-zeros per row), only
// its k largest coordinates are kept, and a ridge classifier on the
// expanded codes is updated from streaming statistics. The ridge parameter
// of every task is chosen by generalised cross-validation on that task and
// the classifier is re-solved by Cholesky. There is no forgetting
// machinery: the statistics of earlier tasks are kept exactly.
//
// The package knows nothing about images, files or networks: inputs are
// row-major float32 feature matrices and integer labels. Backbones, data
// sets, persistence, the CLI and the server are layers around it.
package flycl
