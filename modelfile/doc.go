// Package modelfile saves and loads deployable Fly-CL models, so that a
// model can stop and continue learning later and classify raw images on
// another machine, and exchanges projection matrices W with other
// implementations as .npz files.
//
// Encode and Decode work on io.Writer and io.Reader (the image/png shape);
// Save and Load add atomic files on top. Encoding reads an immutable
// flycl.Snapshot, so a server can save while it keeps predicting.
//
// # Model file format (version 2)
//
// All integers and floats are little-endian.
//
//	magic    8 bytes  "FLYCLMDL"
//	version  uint32   2 (1 is still read)
//	hlen     uint32   length of the header
//	header   hlen bytes of JSON (see Header)
//	G        m(m+1)/2 float32: the lower triangle of G, row by row
//	S        classes×m float32
//	C        classes×m float32 (present when the header says coef)
//	Wcols    m×p int32, then Wvals m×p float32 (present when W is explicit)
//	crc      uint32   CRC-32C (Castagnoli) of every byte above
//	end      8 bytes  "FLYCLEND"
//
// The header holds the Fly-CL configuration (d, m, p, k, top-k mode, λ
// grid, GCV and projection methods), W's seed and a CRC-32C fingerprint of
// its entries (checked when W is regenerated), the class labels, names
// and per-class sample counts, the λ of the stored classifier and the
// history of every learning step (its λ, GCV scores, classes added or
// removed, stage times), the model version (it increases with every
// change), when the model was created and saved, and the pipeline: the
// backbone (spec, name, output, dimension and a SHA-256 of its weights,
// so that a different checkpoint is refused) and the image transform.
// A model with a relative λ grid (flycl.LambdaRelative) adds
// "lambda_scale": "relative" and its "input_scale" (the power of two its
// inputs are multiplied by); absent, the grid is absolute and inputs are
// not scaled, so older files read unchanged.
//
// Version 1 files (before names, counts, versions and pipelines) load
// with classes named by their labels, unknown counts (-1) and the number
// of history steps as version; they are rewritten as version 2.
//
// Decoding checks meaning, not only bytes: sizes are bounded (MaxM, MaxD,
// MaxClasses) and compared with the file size before anything is
// allocated, arrays grow only as data arrives, and labels must be
// distinct and non-negative, counts non-negative, the λ grid and history
// positive, G, S and C finite.
package modelfile
