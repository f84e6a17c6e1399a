// Package metrics computes the class-incremental learning metrics of the
// paper from per-task evaluation counts: the accuracy matrix, average
// incremental accuracy, last accuracy, backward transfer and forgetting.
package metrics
