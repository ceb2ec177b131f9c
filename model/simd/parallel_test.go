package simd

import (
	"runtime"
	"sync/atomic"
	"testing"
)

// TestParallel checks that every index runs exactly once, with more items
// than workers, nested calls (which must not deadlock however busy the pool
// is) and GOMAXPROCS 1.
func TestParallel(t *testing.T) {
	for _, procs := range []int{1, 2, 4} {
		old := runtime.GOMAXPROCS(procs)
		for _, n := range []int{0, 1, 2, 3, 17, 200} {
			counts := make([]atomic.Int32, n*n)
			Parallel(n, func(i int) {
				Parallel(n, func(j int) { counts[i*n+j].Add(1) })
			})
			for k := range counts {
				if c := counts[k].Load(); c != 1 {
					t.Fatalf("GOMAXPROCS %d, n %d: item %d ran %d times", procs, n, k, c)
				}
			}
			var covered atomic.Int64
			ParallelRange(n*7, 3, func(lo, hi int) { covered.Add(int64(hi - lo)) })
			if covered.Load() != int64(n*7) {
				t.Fatalf("ParallelRange covered %d of %d", covered.Load(), n*7)
			}
		}
		runtime.GOMAXPROCS(old)
	}
}
