// Package classindex assigns dense class indices to integer labels in
// order of first appearance, the one rule Fly-CL and every baseline share
// (new labels of a step in ascending order).
package classindex
