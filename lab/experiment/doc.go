// Package experiment runs the class-incremental protocol: for every seed
// it orders the classes, cuts them into tasks, lets each method learn the
// tasks in turn, and evaluates it on the test samples of every task seen
// so far. It records the accuracy matrix, the time of every learning step
// and the peak memory, for the paper's tables and figures.
//
// A Result is what result.json holds; its format is versioned
// (SchemaVersion) and documented in docs/RESULTS-FORMAT.md.
package experiment
