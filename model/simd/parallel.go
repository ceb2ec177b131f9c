package simd

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// The goroutines that run the parts of parallel work. After each task a
// worker spins for spinFor, polling for the next, before it sleeps: a forward
// pass is hundreds of products and elementwise passes back to back, and
// waking a sleeping thread for each costs tens of microseconds on a virtual
// machine (a 128×384×384 product takes about a hundred on two cores), as
// OpenMP runtimes found (their spin-wait before blocking).
const spinFor = 200 * time.Microsecond

var pool struct {
	mu      sync.Mutex
	workers int
	tasks   chan func()
}

// ensureWorkers starts workers until there are n.
func ensureWorkers(n int) {
	pool.mu.Lock()
	defer pool.mu.Unlock()
	if pool.tasks == nil {
		pool.tasks = make(chan func(), 64)
	}
	for ; pool.workers < n; pool.workers++ {
		go worker(pool.tasks)
	}
}

func worker(tasks chan func()) {
	for {
		var f func()
		select {
		case f = <-tasks:
		default:
			deadline := time.Now().Add(spinFor)
			for f == nil {
				select {
				case f = <-tasks:
				default:
					if time.Now().After(deadline) {
						f = <-tasks
					} else {
						runtime.Gosched()
					}
				}
			}
		}
		f()
	}
}

// Parallel runs f(0), …, f(n−1) on the calling goroutine and on up to
// GOMAXPROCS−1 of the pool's workers, each taking the next index until none
// is left, and returns when all are done. It waits for the indices taken,
// never for a worker to turn up, so calls nest (f may call Parallel) and a
// busy pool only means the caller does more of the work.
func Parallel(n int, f func(i int)) {
	if n <= 0 {
		return
	}
	helpers := min(n-1, runtime.GOMAXPROCS(0)-1)
	if helpers <= 0 {
		for i := 0; i < n; i++ {
			f(i)
		}
		return
	}
	ensureWorkers(helpers)
	var next, done atomic.Int64
	finished := make(chan struct{})
	run := func() {
		for {
			i := int(next.Add(1)) - 1
			if i >= n {
				return
			}
			f(i)
			if done.Add(1) == int64(n) {
				close(finished)
			}
		}
	}
	for h := 0; h < helpers; h++ {
		select {
		case pool.tasks <- run:
		default: // every worker busy and the queue full: the caller does it
		}
	}
	run()
	// Wait for the indices the helpers took, spinning first as they do: a
	// caller that sleeps lets its thread sleep too, and the next product
	// then waits for that thread to wake before its helper can start.
	deadline := time.Now().Add(spinFor)
	for done.Load() < int64(n) {
		if time.Now().After(deadline) {
			<-finished
			return
		}
		runtime.Gosched()
	}
}

// ParallelRange cuts [0, n) into one contiguous range per core (at most
// n/grain ranges) and runs f on each through Parallel.
func ParallelRange(n, grain int, f func(lo, hi int)) {
	parts := min(runtime.GOMAXPROCS(0), n/max(1, grain))
	if parts <= 1 {
		f(0, n)
		return
	}
	chunk := (n + parts - 1) / parts
	Parallel(parts, func(i int) {
		if lo := i * chunk; lo < n {
			f(lo, min(lo+chunk, n))
		}
	})
}
