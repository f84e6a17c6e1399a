package protocol

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Order names a class-order convention.
type Order string

const (
	// OrderFlyCL is the Fly-CL reference code's order:
	// random.seed(seed); random.sample(range(C), C) in CPython.
	OrderFlyCL Order = "flycl"
	// OrderPILOT is the PILOT/PyCIL/RanPAC toolboxes' order:
	// numpy.random.seed(seed); numpy.random.permutation(C).
	OrderPILOT Order = "pilot"
	// OrderNone keeps the classes in their natural order 0..C-1.
	OrderNone Order = "none"
)

// ClassOrder returns a permutation of 0..c-1 by the named convention. For
// OrderFlyCL the seed may be any int64; for OrderPILOT it must lie in
// [0, 2³²), as NumPy requires.
func ClassOrder(order Order, c int, seed int64) ([]int, error) {
	if c <= 0 {
		return nil, fmt.Errorf("protocol: class count must be positive, got %d", c)
	}
	switch order {
	case OrderNone:
		out := make([]int, c)
		for i := range out {
			out[i] = i
		}
		return out, nil
	case OrderFlyCL:
		return pythonSample(pythonSeed(seed), c), nil
	case OrderPILOT:
		if seed < 0 || seed > math.MaxUint32 {
			return nil, fmt.Errorf("protocol: numpy seeds must be in [0, 2^32), got %d", seed)
		}
		return numpyPermutation(uint32(seed), c), nil
	}
	return nil, fmt.Errorf("protocol: unknown class order %q (want flycl, pilot, none, or a list)", order)
}

// pythonSample is random.sample(range(n), n) (CPython 3.x; with k == n the
// pool algorithm is always taken).
func pythonSample(m *mt19937, n int) []int {
	pool := make([]int, n)
	for i := range pool {
		pool[i] = i
	}
	out := make([]int, n)
	for i := 0; i < n; i++ {
		j := m.randbelow(n - i)
		out[i] = pool[j]
		pool[j] = pool[n-i-1]
	}
	return out
}

// numpyPermutation is numpy.random.seed(seed); numpy.random.permutation(n)
// with the legacy RandomState.
func numpyPermutation(seed uint32, n int) []int {
	m := &mt19937{}
	m.initGenrand(seed)
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	for i := n - 1; i >= 1; i-- {
		j := int(m.numpyInterval(uint32(i)))
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// ParseOrder parses an order given on a command line: "flycl", "pilot",
// "none", or an explicit comma-separated permutation such as "3,0,2,1".
// For a named convention the returned list is nil.
func ParseOrder(s string, c int) (Order, []int, error) {
	switch Order(s) {
	case OrderFlyCL, OrderPILOT, OrderNone:
		return Order(s), nil, nil
	}
	if !strings.Contains(s, ",") {
		return "", nil, fmt.Errorf("protocol: unknown class order %q (want flycl, pilot, none, or a comma-separated list)", s)
	}
	var list []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return "", nil, fmt.Errorf("protocol: class order: %q is not an integer", f)
		}
		list = append(list, v)
	}
	if err := CheckPermutation(list, c); err != nil {
		return "", nil, err
	}
	return "list", list, nil
}

// CheckPermutation reports whether order is a permutation of 0..c-1.
func CheckPermutation(order []int, c int) error {
	if len(order) != c {
		return fmt.Errorf("protocol: class order has %d entries, the data has %d classes", len(order), c)
	}
	seen := make([]bool, c)
	for _, v := range order {
		if v < 0 || v >= c {
			return fmt.Errorf("protocol: class order names class %d, outside [0,%d)", v, c)
		}
		if seen[v] {
			return fmt.Errorf("protocol: class order names class %d twice", v)
		}
		seen[v] = true
	}
	return nil
}

// Split cuts the ordered classes into tasks: the first task takes init
// classes and every later one increment classes (the last may be smaller
// if the count does not divide). init == increment gives equal tasks.
func Split(order []int, init, increment int) ([][]int, error) {
	if init <= 0 || increment <= 0 {
		return nil, fmt.Errorf("protocol: task sizes must be positive (init %d, increment %d)", init, increment)
	}
	if init > len(order) {
		return nil, fmt.Errorf("protocol: first task has %d classes, only %d exist", init, len(order))
	}
	tasks := [][]int{slices.Clone(order[:init])}
	for lo := init; lo < len(order); lo += increment {
		tasks = append(tasks, slices.Clone(order[lo:min(len(order), lo+increment)]))
	}
	return tasks, nil
}

// EqualTasks splits the order into t tasks of equal size; the class count
// must be divisible by t.
func EqualTasks(order []int, t int) ([][]int, error) {
	if t <= 0 || len(order)%t != 0 {
		return nil, fmt.Errorf("protocol: %d classes cannot be split into %d equal tasks", len(order), t)
	}
	return Split(order, len(order)/t, len(order)/t)
}
