// Package inbox keeps the inputs a served model rejected as "unknown" or
// was least sure of, so that a person can label them later: a labelling
// inbox.
//
// An Inbox is a folder with one sub-folder per item, named by the item's
// ID (the time it was kept, in nanoseconds since 1970, 20 digits, so that
// names sort by age):
//
//	DIR/ID/image.jpg     the input image, downscaled (absent for a feature vector)
//	DIR/ID/features.f32  the feature vector, d little-endian float32
//	DIR/ID/item.json     the sidecar: time, model version, guess, scores, why kept
//
// Every file is written atomically (a synced temporary renamed into
// place), the sidecar last: an item exists once its sidecar does, and a
// crash mid-write leaves a folder without one, which Open removes. Removal
// deletes the sidecar first. Open rebuilds the index from the folder and
// trusts nothing in it: a sidecar that does not parse, or whose files are
// missing or differ from the sizes and CRC-32C checksums it records, is
// skipped with a log line (and left in place for a person to look at).
//
// Several processes may open one folder (flycl serve lists and learns
// what flycl watch keeps): every method holds a file lock on DIR/.lock
// while it runs, and first brings its index up to date with the items the
// others added (verified once, when first seen) or removed.
//
// The inbox is bounded in items and bytes: adding an item drops the
// oldest ones until the new one fits, whichever process kept them.
// Policy says which predictions are worth keeping. An item records the
// camera and zone of a video stream's frame (flycl watch --inbox).
package inbox
