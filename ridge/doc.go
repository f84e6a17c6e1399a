// Package ridge provides Fly-CL's streaming ridge-regression classifier:
// the running statistics G = Σ Hᵀ H and S = Σ Hᵀ Y, the exact
// generalised cross-validation (GCV) score of a task for a grid of ridge
// parameters, and the Cholesky solve C = (G + λI)⁻¹ S. The factor of
// G + λI is kept between solves: adding or removing a few samples at the
// same λ keeps it and records the change as a low-rank term applied by the
// Woodbury identity (Accumulator.AddUpdating, SubDowndating; checked for
// drift against DriftTolerance), and the classifier moves by that change
// alone (UpdateSolution), instead of factoring again.
//
// Everything is float32 like the reference implementation; the sums that
// decide GCV are accumulated in float64, and the formulas avoid the
// cancellations (1 - df/n, Y - Ŷ) that make a naive float32 GCV inaccurate.
package ridge
