package projection

import "slices"

func sortInt32(s []int32) { slices.Sort(s) }

func sortByKey(idx []int, key []int32) {
	slices.SortFunc(idx, func(a, b int) int { return int(key[a]) - int(key[b]) })
}
