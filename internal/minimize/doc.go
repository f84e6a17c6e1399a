// Package minimize finds the minimum of a function of one variable.
//
// Golden is a golden-section search for a function that is unimodal on an
// interval (the temperature fits of the open-set calibration, whose
// cross-entropy is convex in log(1/T)).
package minimize
