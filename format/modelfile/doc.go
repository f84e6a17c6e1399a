// Package modelfile saves and loads deployable Fly-CL models, so that a
// model can stop and continue learning later and classify raw images on
// another machine, and exchanges projection matrices W with other
// implementations as .npz files.
//
// Encode and Decode work on io.Writer and io.Reader (the image/png shape);
// Save and Load add atomic files on top. Encoding reads an immutable
// flycl.Snapshot, so a server can save while it keeps predicting.
//
// # Model file format (versions 4 and 5)
//
// All integers and floats are little-endian.
//
//	magic    8 bytes  "FLYCLMDL"
//	version  uint32   4, or 5 for a model in the dual form (1 to 3 are still read)
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
// grid, GCV and projection methods), W's seed and its fingerprint,
// "w_sha256" (projection.Matrix.Digest, the one digest of W that results
// record too; files before version 4 have a CRC-32C of its entries,
// "w_crc32c", still checked), verified when W is regenerated or read, the
// class labels, names
// and per-class sample counts, the λ of the stored classifier and the
// history of every learning step (its λ, GCV scores, classes added or
// removed, stage times), the model version (it increases with every
// change), when the model was created and saved, and the pipeline: the
// backbone (spec, name, output, dimension and a SHA-256 of its weights,
// so that a different checkpoint is refused) and the image transform.
// A model with a relative λ grid (flycl.LambdaRelative) adds
// "lambda_scale": "relative" and its "input_scale" (the power of two its
// inputs are multiplied by); absent, the grid is absolute and inputs are
// not scaled, so older files read unchanged. A model whose GCV scores λ on
// every sample learned so far (flycl.GCVAll) adds "gcv_scope": "all";
// absent, GCV scores the current task.
//
// A model in the dual form (flycl.Config.Dual: while it has few samples
// it keeps their codes instead of G) is written as version 5: its header
// adds "form": "dual", "dual_rows" (the samples) and "dual_nonzeros"
// (their non-zeros in all; with "dual_rows" they bound the data before
// anything is allocated), and "lambda_limit" when its last continuous λ
// fell at an end of its range; in place of G and S the data holds
//
//	classes  dual_rows int32: each sample's class index (-1: none, a class dropped without its data)
//	lengths  dual_rows int32: each sample's non-zeros
//	cols     dual_nonzeros int32: their columns, ascending within a sample
//	vals     dual_nonzeros float32: their values
//
// followed by C and an explicit W as above. 15 photos at m = 10000,
// k = 3000 are a 0.47 MiB file (G alone would be 191 MiB). A model in the
// primal form is still written as version 4, which builds before the dual
// form read.
//
// Version 1 files (before names, counts, versions and pipelines) load
// with classes named by their labels, unknown counts (-1) and the number
// of history steps as version; they are rewritten in the current version
// (4, or 5 in the dual form).
//
// Decoding checks meaning, not only bytes: sizes are bounded (MaxM, MaxD,
// MaxClasses) and compared with the file size before anything is
// allocated, arrays grow only as data arrives, and labels must be
// distinct and non-negative, counts non-negative, the λ grid and history
// positive, G, S and C finite.
//
// # Statistics file format (version 2)
//
// A statistics file holds the exact sufficient statistics of one task, or
// of one shard of a task, for Fly-CL: what a worker computes from its
// part of the data and what `flycl merge` adds up and teaches a model.
// All integers and floats are little-endian.
//
//	magic    8 bytes  "FLYCLSTA"
//	version  uint32   2 (1, whose W fingerprint is a CRC-32C, is still read)
//	hlen     uint32   length of the header
//	header   hlen bytes of JSON (see StatsHeader)
//	G        m(m+1)/2 float64: the lower triangle of G = Σ hᵀh, row by row
//	S        classes×m float64: row c = Σ of the codes of class c
//	ids      samples uint64: the sample identities, strictly ascending
//	crc      uint32   CRC-32C (Castagnoli) of every byte above
//	end      8 bytes  "FLYCLEND"
//
// G and S are float64: the codes are float32, so every product is exact
// and only the additions round (2⁻⁵³ relative each); partial sums from any
// number of shards add up to the single-process sums within that, and
// rounded to a model's float32 they agree bit for bit except, rarely, in
// the last bit (ridge.Stats). MergeStats adds the parts in a fixed binary
// tree over the shards of the split (internal/sumtree), so the same parts
// merged in any order give identical bits, and so do nested merges whose
// intermediate files each hold an aligned run of 2ˡ shards (a node of the
// tree), and the Beam pipeline over the same shards.
//
// The sample identities (a 64-bit FNV-1a hash of each sample's key, see
// SampleID) let a merge refuse overlapping parts: the same shard given
// twice, or shards of two different splittings.
package modelfile
