// Package enginebench measures the Fly-CL engine on synthetic features at
// the scales of the paper's data sets, next to the BLAS floor of the same
// work: a bare ssyrk of a task's codes plus a bare spotrf of the m×m
// matrix, timed in the same process on the same machine.
package enginebench
