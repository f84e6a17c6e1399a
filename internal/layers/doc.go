// Package layers holds no code: its test enforces the direction of imports
// between the groups of folders that make up flycl (docs/ARCHITECTURE.md).
//
// From the bottom up:
//
//	internal/  utilities below everything (atomic files, parallel loops, …)
//	core       the root package (the learner) and its numerics: linalg,
//	           projection, ridge, reject; internal/codec and
//	           internal/modelhook, the model's inside for the module's
//	           own readers and writers, and internal/statcmp, which
//	           compares two models' statistics for tests
//	format/    bytes on disk: npz, onnx, features, modelfile
//	vision/    pixels to features: imageio, transform, backbone, dataset,
//	           extract
//	app/       the product: deploy, store, server, inbox, teach, watch,
//	           frigate, export, fetch, configflag, locate
//	lab/       the research lab: experiment, protocol, metrics, baselines,
//	           methods, analysis, report, sweep, openset and the benchmarks
//	top        cmd/ (the command, the C library), scripts/, python/ and
//	           the Beam module (beam/)
//
// A package imports only packages of its own group or of groups below it,
// and the core imports neither net/http nor image: it knows nothing of
// pixels, files on a camera or HTTP.
package layers
