// Package projection provides Fly-CL's fixed sparse random expansion: an
// m×d matrix W with exactly p non-zero N(0,1) entries in every row, applied
// to feature vectors, followed by a per-sample top-k winner-take-all.
//
// W is generated from a seed by a portable generator, so the same seed
// gives the same W on every run and platform (Generate; Start generates
// it in a goroutine, for a new model whose first photos are being
// extracted meanwhile). It can also be built from explicit entries (New),
// for instance a matrix exported by another implementation.
package projection
