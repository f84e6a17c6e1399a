package parallel

import (
	"runtime"
	"sync"
)

// For calls f on contiguous ranges covering [0,n), one range per CPU (at
// most n), concurrently, and waits for all of them.
func For(n int, f func(lo, hi int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 {
		f(0, n)
		return
	}
	var wg sync.WaitGroup
	for t := 0; t < workers; t++ {
		lo, hi := t*n/workers, (t+1)*n/workers
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(lo, hi)
		}()
	}
	wg.Wait()
}
