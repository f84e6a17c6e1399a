package projection

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
)

// Digest returns W's fingerprint, the one every file that names a W
// records (model and statistics files, results): the hexadecimal SHA-256
// of m, d and p as little-endian uint64, then the column indices of every
// row, row by row, as little-endian uint32, then all the values, row by
// row, as little-endian float32 bits. Two matrices have the same digest
// exactly when they are the same W (up to SHA-256 collisions).
//
// It is computed once per Matrix (W must not change once used, as for
// Dense), streaming W's bytes through the hash a block at a time.
func (w *Matrix) Digest() string {
	w.digestOnce.Do(func() { w.digest = w.computeDigest() })
	return w.digest
}

func (w *Matrix) computeDigest() string {
	h := sha256.New()
	var b [8]byte
	for _, v := range []int{w.M, w.D, w.P} {
		binary.LittleEndian.PutUint64(b[:], uint64(v))
		h.Write(b[:])
	}
	const block = 1 << 14
	buf := make([]byte, 0, 4*block)
	for i := 0; i < len(w.Cols); i += block {
		buf = buf[:0]
		for _, c := range w.Cols[i:min(len(w.Cols), i+block)] {
			buf = binary.LittleEndian.AppendUint32(buf, uint32(c))
		}
		h.Write(buf)
	}
	for i := 0; i < len(w.Vals); i += block {
		buf = buf[:0]
		for _, v := range w.Vals[i:min(len(w.Vals), i+block)] {
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
		}
		h.Write(buf)
	}
	return hex.EncodeToString(h.Sum(nil))
}
