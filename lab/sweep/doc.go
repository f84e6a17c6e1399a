// Package sweep measures Fly-CL's sensitivity to one hyper-parameter (m, p
// or k): it runs the class-incremental protocol once per value and writes
// the table, the summaries and the plot.
package sweep
