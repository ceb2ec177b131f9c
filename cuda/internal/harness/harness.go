//go:build cgo

// Package harness runs jeirt's CUDA kernels on the CPU: the .cu sources in
// cuda/kernels, the same files nvcc compiles to the committed PTX, are
// compiled by the host C++ compiler against cuda_host.h (threadIdx, blockIdx,
// __shared__, __syncthreads, warp shuffles, atomics) and launched by
// launch.cpp, which runs every CUDA thread of a block as a thread of its own
// and checks each launch against sm_90's limits. It needs no CUDA header or
// driver; the tests of package cuda and its internal packages run the GPU
// code on it against train's CPU code, and scripts/cuda-cpu-check.sh replays
// recorded launches under ThreadSanitizer and AddressSanitizer (replay/).
// GPU and Dry are package gpu's device interface on the harness: one runs the
// kernels, one only checks and counts their launches.
package harness

/*
#cgo CXXFLAGS: -std=c++20 -O2 -Wno-unknown-pragmas
#cgo LDFLAGS: -lpthread
#include <stdlib.h>
#include "harness.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"sort"
	"sync"
	"unsafe"
)

// Dim is a grid or block shape.
type Dim struct{ X, Y, Z uint32 }

// Mode says how a block's CUDA threads run.
type Mode int

const (
	// Fibers runs a block's threads as fibers on the calling thread,
	// switched at barriers and shuffles: the same semantics, fast.
	Fibers Mode = C.JH_FIBERS
	// Threads runs each CUDA thread of a block as an OS thread.
	Threads Mode = C.JH_THREADS
)

// Kernel is a registered kernel and its arguments, one letter each: f d i u b
// l for pointers to float, double, int, unsigned int, unsigned char and long
// long (upper case when const), s for a 64-bit integer, x for a double.
type Kernel struct {
	Name, Args string
}

// Kernels lists the kernels compiled into the harness.
func Kernels() []Kernel {
	n := int(C.jh_kernel_count())
	ks := make([]Kernel, n)
	for k := range ks {
		ks[k] = Kernel{C.GoString(C.jh_kernel_name(C.int(k))), C.GoString(C.jh_kernel_args(C.int(k)))}
	}
	return ks
}

// Lookup returns the kernel called name.
func Lookup(name string) (Kernel, bool) {
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	k := int(C.jh_kernel_find(cs))
	if k < 0 {
		return Kernel{}, false
	}
	return Kernel{name, C.GoString(C.jh_kernel_args(C.int(k)))}, true
}

// ErrLimit is wrapped by the errors of launches over the device's limits.
var ErrLimit = errors.New("over sm_90's launch limits")

func cdim(d Dim) C.jh_dim { return C.jh_dim{x: C.uint(d.X), y: C.uint(d.Y), z: C.uint(d.Z)} }

// Check returns nil when a launch of grid x block threads using the given
// static and dynamic shared memory fits sm_90's limits.
func Check(grid, block Dim, staticShared, dynShared int64) error {
	var buf [256]C.char
	if C.jh_check_launch(cdim(grid), cdim(block), C.longlong(staticShared), C.longlong(dynShared), &buf[0], C.int(len(buf))) != 0 {
		return fmt.Errorf("%w: %s", ErrLimit, C.GoString(&buf[0]))
	}
	return nil
}

// Launch runs kernel name on a grid of blocks with the given arguments (a
// device address, an integer, or a double's bits each). The memory the
// addresses point into must come from Alloc.
func Launch(name string, grid, block Dim, staticShared int64, args []uint64, mode Mode) error {
	cs := C.CString(name)
	k := C.jh_kernel_find(cs)
	C.free(unsafe.Pointer(cs))
	if k < 0 {
		return fmt.Errorf("harness: no kernel %s", name)
	}
	if err := Check(grid, block, staticShared, 0); err != nil {
		return fmt.Errorf("harness: launching %s (grid %d x %d x %d, block %d x %d x %d): %w", name, grid.X, grid.Y, grid.Z, block.X, block.Y, block.Z, err)
	}
	ca := (*C.uint64_t)(C.calloc(C.size_t(len(args)+1), 8))
	defer C.free(unsafe.Pointer(ca))
	copy(unsafe.Slice((*uint64)(unsafe.Pointer(ca)), len(args)), args)
	var buf [256]C.char
	if C.jh_launch(k, cdim(grid), cdim(block), C.longlong(staticShared), ca, C.int(len(args)), C.int(mode), &buf[0], C.int(len(buf))) != 0 {
		return fmt.Errorf("harness: launching %s: %s", name, C.GoString(&buf[0]))
	}
	return nil
}

// Counters are totals since the process started.
type Counters struct {
	Launches, Atomics, Barriers, Shuffles int64
}

// ReadCounters returns the launcher's counters.
func ReadCounters() Counters {
	var l, a, b, s C.longlong
	C.jh_counters(&l, &a, &b, &s)
	return Counters{int64(l), int64(a), int64(b), int64(s)}
}

// Memory: C allocations (the kernels read them from C++ threads), found by
// address.
var (
	memMu  sync.Mutex
	allocs = map[uintptr]block{}
)

type block struct {
	p unsafe.Pointer
	n int64
}

// Alloc returns n zeroed bytes of C memory (at least 8), by address.
func Alloc(n int64) (uintptr, error) {
	p := C.calloc(C.size_t(max(n, 8)), 1)
	if p == nil {
		return 0, fmt.Errorf("harness: allocating %d bytes: out of memory", n)
	}
	memMu.Lock()
	defer memMu.Unlock()
	a := uintptr(p)
	allocs[a] = block{p, n}
	return a, nil
}

// Free releases an allocation.
func Free(addr uintptr) error {
	memMu.Lock()
	defer memMu.Unlock()
	b, ok := allocs[addr]
	if !ok {
		return fmt.Errorf("harness: freeing %#x, which is not an allocation", addr)
	}
	delete(allocs, addr)
	C.free(b.p)
	return nil
}

// Bytes returns the memory from addr to the end of the allocation holding it,
// and the allocation's start.
func Bytes(addr uintptr) ([]byte, uintptr, error) {
	memMu.Lock()
	defer memMu.Unlock()
	// Few allocations are live at a time: a sorted scan is enough.
	starts := make([]uintptr, 0, len(allocs))
	for a := range allocs {
		starts = append(starts, a)
	}
	sort.Slice(starts, func(i, j int) bool { return starts[i] < starts[j] })
	i := sort.Search(len(starts), func(i int) bool { return starts[i] > addr }) - 1
	if i < 0 || addr >= starts[i]+uintptr(allocs[starts[i]].n) && !(addr == starts[i]) {
		return nil, 0, fmt.Errorf("harness: address %#x is not in an allocation", addr)
	}
	b := allocs[starts[i]]
	off := int64(addr - starts[i])
	return unsafe.Slice((*byte)(unsafe.Add(b.p, off)), b.n-off), starts[i], nil
}
