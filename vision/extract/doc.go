// Package extract turns images into a model's features with a frozen
// backbone: decode, preprocess, run the model in batches.
//
// There are only a few types: BackboneSpec names a backbone as a user gives
// it ("name[:path]") and opens it; Extractor is a backbone output with the
// transform and decoder of its images, the one extractor of every command,
// the server, watch, export and the benchmarks (Interface is what a server
// or watcher needs of it, for stand-ins in tests); Job is one extraction
// of a data set that Run performs. The others are their options, results
// and errors (CalibOptions, Rates, ImageError). Run caches its results
// under a key of (weights, transform, data content, split, output), so
// repeated runs skip the work, and resumes where it stopped after an
// interruption.
package extract
