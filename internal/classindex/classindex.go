package classindex

import "slices"

// Register maps labels to class indices, appending the labels not yet in
// index to *order (in ascending order) and to index, and returns the index
// of every label and the labels that were new.
func Register(order *[]int, index map[int]int, labels []int) (idx, fresh []int) {
	seen := map[int]bool{}
	for _, l := range labels {
		if _, ok := index[l]; !ok && !seen[l] {
			seen[l] = true
			fresh = append(fresh, l)
		}
	}
	slices.Sort(fresh)
	for _, l := range fresh {
		index[l] = len(*order)
		*order = append(*order, l)
	}
	idx = make([]int, len(labels))
	for i, l := range labels {
		idx[i] = index[l]
	}
	return idx, fresh
}
