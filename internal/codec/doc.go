// Package codec reaches inside a flycl model for the module's own readers
// and writers of model files (modelfile, deploy's journal, export) and
// its research and benchmark harnesses (openset, baselines, analysis,
// internal/bench): it restores a model or a snapshot from decoded parts,
// reads G's rows for an encoder, shares a model's statistics with a
// writer instead of copying them, carries the calibration of the
// rejection through an undo, gives the codes a model learns from, and
// scores test sets by sgemm. None of it is part of package flycl's API.
//
// The functions come from package flycl through flycl.Internal, which only
// this module can call (its argument's type is internal/modelhook's Key);
// modelhook.Hooks types them.
package codec
