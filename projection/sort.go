package projection

import (
	"math/bits"
	"slices"
)

func sortByKey(idx []int, key []int32) {
	slices.SortFunc(idx, func(a, b int) int { return int(key[a]) - int(key[b]) })
}

// sortedColumns appends the positions of set's one bits to dst in
// increasing order, clearing set as it goes.
func sortedColumns(dst []int32, set []uint64) []int32 {
	for w, b := range set {
		for b != 0 {
			dst = append(dst, int32(w*64+bits.TrailingZeros64(b)))
			b &= b - 1
		}
		set[w] = 0
	}
	return dst
}
