// Package intake turns what a user gives into samples to learn from or
// predict: an input request (InputRequest: a feature file, a data set, image
// files or raw pixels, with its options checked against the input), the
// input it opens (Input: samples by range or by shard, class names, sample
// keys), the images it could not read (BadFilesError), and the extractor
// a model's images go through (ResolveExtractor, ExtractSplits: the
// backbone, transform and precision a new or trained model needs).
//
// It writes no file and knows no model beyond its pipeline: app/deploy
// learns what it loads, app/store makes the learn durable. It resolves no
// flags, environment or default paths: callers pass them in (the
// extractor's opener included).
package intake
