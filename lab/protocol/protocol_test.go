package protocol

import (
	"encoding/json"
	"os"
	"slices"
	"testing"
)

// The orders in ../../shared/reference/class_orders.json were computed by
// CPython's random and NumPy's RandomState.
func TestClassOrdersMatchReference(t *testing.T) {
	b, err := os.ReadFile("../../../shared/reference/class_orders.json")
	if err != nil {
		t.Skipf("reference orders not available: %v", err)
	}
	var ref map[string]map[string][]int
	if err := json.Unmarshal(b, &ref); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		order      Order
		group, key string
		c          int
		seed       int64
	}{
		{OrderFlyCL, "flycl_official_python_random_sample", "cifar100_seed1993", 100, 1993},
		{OrderFlyCL, "flycl_official_python_random_sample", "cub200_seed2023", 200, 2023},
		{OrderFlyCL, "flycl_official_python_random_sample", "vtab50_seed2023", 50, 2023},
		{OrderPILOT, "pilot_numpy_permutation", "numpy_seed1993_10", 10, 1993},
		{OrderPILOT, "pilot_numpy_permutation", "numpy_seed1993_50", 50, 1993},
		{OrderPILOT, "pilot_numpy_permutation", "numpy_seed1993_100", 100, 1993},
		{OrderPILOT, "pilot_numpy_permutation", "numpy_seed1993_200", 200, 1993},
	}
	for _, tc := range cases {
		want, ok := ref[tc.group][tc.key]
		if !ok {
			t.Fatalf("reference has no %s/%s", tc.group, tc.key)
		}
		got, err := ClassOrder(tc.order, tc.c, tc.seed)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s %s:\n got %v\nwant %v", tc.order, tc.key, got, want)
		}
	}
}

// Orders for other seeds, computed with /usr/bin/python3 (CPython 3.11,
// NumPy 1.24) by testdata/gen.py: seeds 0, 1, 42, 2**32+5 (a two-word
// CPython key), and -7 (CPython uses |seed|).
func TestClassOrdersOtherSeeds(t *testing.T) {
	b, err := os.ReadFile("testdata/orders.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref []struct {
		Order string
		C     int
		Seed  int64
		Perm  []int
	}
	if err := json.Unmarshal(b, &ref); err != nil {
		t.Fatal(err)
	}
	for _, r := range ref {
		got, err := ClassOrder(Order(r.Order), r.C, r.Seed)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, r.Perm) {
			t.Errorf("%s C=%d seed=%d:\n got %v\nwant %v", r.Order, r.C, r.Seed, got, r.Perm)
		}
	}
}

func TestSplit(t *testing.T) {
	order := []int{5, 3, 1, 0, 2, 4, 6}
	for _, tc := range []struct {
		init, inc int
		want      [][]int
	}{
		{2, 2, [][]int{{5, 3}, {1, 0}, {2, 4}, {6}}},
		{3, 4, [][]int{{5, 3, 1}, {0, 2, 4, 6}}},
		{7, 1, [][]int{{5, 3, 1, 0, 2, 4, 6}}},
	} {
		got, err := Split(order, tc.init, tc.inc)
		if err != nil || !slices.EqualFunc(got, tc.want, slices.Equal) {
			t.Errorf("Split(%d,%d) = %v %v, want %v", tc.init, tc.inc, got, err, tc.want)
		}
	}
	if _, err := Split(order, 8, 1); err == nil {
		t.Error("init > classes: no error")
	}
	if _, err := EqualTasks(order, 2); err == nil {
		t.Error("7 classes into 2 equal tasks: no error")
	}
	if got, _ := EqualTasks([]int{0, 1, 2, 3}, 2); len(got) != 2 {
		t.Errorf("EqualTasks: %v", got)
	}
}

func TestParseOrder(t *testing.T) {
	if o, l, err := ParseOrder("2,0,1", 3); err != nil || o != "list" || !slices.Equal(l, []int{2, 0, 1}) {
		t.Errorf("list: %v %v %v", o, l, err)
	}
	for _, bad := range []string{"2,0", "0,0,1", "0,1,3", "a,b,c", "random"} {
		if _, _, err := ParseOrder(bad, 3); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	if _, err := ClassOrder(OrderPILOT, 10, -1); err == nil {
		t.Error("negative numpy seed: no error")
	}
}
