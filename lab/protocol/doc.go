// Package protocol defines the class-incremental protocol: the order in
// which classes arrive (from a seed, in the conventions of the Fly-CL
// reference code and of the PILOT/PyCIL toolboxes, bit-exact) and how that
// order is cut into tasks.
package protocol
