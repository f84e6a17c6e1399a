package parallel

import (
	"runtime"
	"sync/atomic"
	"testing"
)

func TestEachCoversEveryIndexOnce(t *testing.T) {
	for _, procs := range []int{1, 2, 4} {
		prev := runtime.GOMAXPROCS(procs)
		for _, n := range []int{0, 1, 2, 3, 17, 1000} {
			hits := make([]int32, n)
			Each(n, func(i int) { atomic.AddInt32(&hits[i], 1) })
			for i, h := range hits {
				if h != 1 {
					t.Fatalf("GOMAXPROCS=%d n=%d: index %d visited %d times", procs, n, i, h)
				}
			}
		}
		runtime.GOMAXPROCS(prev)
	}
}
