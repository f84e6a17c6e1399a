// Package zoo holds the ImageNet-pretrained backbone weights that ship with
// flycl, built into every binary that imports it: MobileNetV2 1.0 and
// SqueezeNet 1.1 from the ONNX Model Zoo (Apache License 2.0; the licence
// and the attribution are the files LICENSE and NOTICE of FS).
//
// FS is laid out as a models folder: one sub-folder per backbone of
// per-layer .npy files (float32, NCHW, batch normalisation folded into each
// convolution), the layout backbone.LoadNPYFS reads and
// extract.OpenBackboneFS takes. The weights digest (backbone.Model.Hash)
// depends on the files' names and contents only, so a backbone built from
// FS has the digest of one built from a copy of the same files on disk, and
// a model file made with either loads with both.
//
// The package has no path, environment or default of its own: a caller
// chooses to use FS.
package zoo
