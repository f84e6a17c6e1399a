// Package answer turns a model's scores into the answers a user reads:
// the top classes of each input, "unknown" where the model's rejection
// refuses it (with its probability, margin and typicality), the rows of
// flycl predict's table, and their accuracy against true classes.
//
// It reads a flycl.Predictor and a reject.Rule only: the model file, its
// store and the input pipeline are its callers' (flycl predict, the
// server, the watchers).
package answer
