// Package npz reads and writes NumPy .npz archives (and the .npy arrays
// inside them) holding the numeric arrays Fly-CL exchanges with other
// tools: feature matrices, labels, projection matrices and file paths.
//
// Reading checks what NumPy checks and what a header merely claims: every
// member is read to its end and its zip CRC-32 verified (NumPy refuses a
// corrupt member with "Bad CRC-32"); a shape whose size overflows, or
// that needs more bytes than the member holds, is an error before
// anything of that size is allocated; and the zip directory's sizes are
// checked against the file's size and deflate's maximum expansion. Errors
// name the file and the array. Numeric data of any integer, bool or float
// dtype (either byte order) is converted to the type asked for; strings
// are NumPy's fixed-width <U (UTF-32) or S (bytes) arrays.
//
// The .npy decoding is done here rather than by a library: the one Go
// library for it (codeberg.org/sbinet/npyio v0.14) panics on malformed
// headers and allocates whatever a header claims, and reads element by
// element through reflection. Writing is done here too, because npyio
// writes multi-dimensional arrays only as float64 (about 15 times slower
// on a 5000×768 float32 matrix).
package npz
