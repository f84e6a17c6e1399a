package classindex

import (
	"slices"
	"testing"
)

func TestRegister(t *testing.T) {
	var order []int
	index := map[int]int{}
	idx, fresh := Register(&order, index, []int{7, 3, 7, 9})
	if !slices.Equal(fresh, []int{3, 7, 9}) || !slices.Equal(order, []int{3, 7, 9}) || !slices.Equal(idx, []int{1, 0, 1, 2}) {
		t.Fatalf("first: idx %v fresh %v order %v", idx, fresh, order)
	}
	idx, fresh = Register(&order, index, []int{9, -1, 3})
	if !slices.Equal(fresh, []int{-1}) || !slices.Equal(order, []int{3, 7, 9, -1}) || !slices.Equal(idx, []int{2, 3, 0}) {
		t.Fatalf("second: idx %v fresh %v order %v", idx, fresh, order)
	}
}
