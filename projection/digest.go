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
func (w *Matrix) Digest() string {
	h := sha256.New()
	var b [8]byte
	for _, v := range []int{w.M, w.D, w.P} {
		binary.LittleEndian.PutUint64(b[:], uint64(v))
		h.Write(b[:])
	}
	buf := make([]byte, 0, 8*len(w.Cols))
	for _, c := range w.Cols {
		buf = binary.LittleEndian.AppendUint32(buf, uint32(c))
	}
	for _, v := range w.Vals {
		buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
	}
	h.Write(buf)
	return hex.EncodeToString(h.Sum(nil))
}
