// Package statcmp lets tests compare two models' streaming statistics up
// to float32 rounding: after rows were added to G and S and some of them
// subtracted again (an undo, a forget, a failed online learn taken back),
// each add and subtract rounds by at most u = 2⁻²⁴ of a partial sum, and
// every partial sum of G_ij is bounded by √(A_ii·A_jj), A the Gram of
// every row ever learned (Cauchy–Schwarz).
package statcmp
