// Package analysis computes the diagnostics of the paper's figures, such
// as how correlated the class prototypes are at each stage of Fly-CL.
package analysis
