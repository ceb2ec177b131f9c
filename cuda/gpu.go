package cuda

import (
	"errors"
	"fmt"
	"unsafe"
)

// Errors a caller can test for with errors.Is; the wrapping message says
// which allocation, kernel or copy failed.
var (
	ErrNoDevice    = errors.New("cuda: no CUDA device")
	ErrOutOfMemory = errors.New("cuda: out of device memory")
	ErrLaunch      = errors.New("cuda: kernel failed")
)

// handle is a device address (0: none). Adding a byte offset to a handle
// addresses inside the buffer, as with a device pointer.
type handle uintptr

// gpu is what the batched cBMM and JE-IRT code needs from a device: plain
// buffers, copies, and launches of the kernels in kernels/*.cu by name. The
// cuda build implements it on gorgonia.org/cu (device.go); the tests
// implement it on the CPU with the same kernel sources compiled for the host
// (harness_test.go, package internal/harness),
// so that everything above the kernels is tested without a GPU.
//
// Every method but do must be called inside do, which holds the device and
// makes its context current on the calling OS thread.
type gpu interface {
	name() string
	do(f func() error) error
	// alloc returns n bytes of device memory for what (named in errors).
	alloc(what string, n int64) (handle, error)
	free(h handle) error
	// checkFree fails with ErrOutOfMemory when need bytes will not fit.
	checkFree(what string, need int64) error
	// htod copies the slice src ([]float32, []float64, []int32, []uint32,
	// []int64 or []uint8) to dst; dtoh copies from src into the slice dst.
	htod(dst handle, src any) error
	dtoh(dst any, src handle) error
	// memset0 zeroes n 4-byte words at h.
	memset0(h handle, n int64) error
	// launch runs kernel name on a gridX x gridY grid of block threads. Its
	// arguments are handles, ints, float64s and bools, each passed as 64 bits.
	launch(name string, gridX, gridY, block int, args ...any) error
}

// sliceBytes returns the address and length in bytes of a slice src of one
// of the element types gpu copies.
func sliceBytes(src any) (unsafe.Pointer, int64) {
	switch s := src.(type) {
	case []float32:
		return ptr(s), 4 * int64(len(s))
	case []float64:
		return ptr(s), 8 * int64(len(s))
	case []int32:
		return ptr(s), 4 * int64(len(s))
	case []uint32:
		return ptr(s), 4 * int64(len(s))
	case []int64:
		return ptr(s), 8 * int64(len(s))
	case []uint8:
		return ptr(s), int64(len(s))
	}
	panic(fmt.Sprintf("cuda: cannot copy a %T", src))
}

func ptr[T any](s []T) unsafe.Pointer {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Pointer(&s[0])
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// buffers tracks a set of device allocations to free together.
type buffers struct {
	g    gpu
	bufs []handle
	err  error // the first allocation error, for alloc chains
}

// alloc allocates n elements of size bytes for what; after a failure it
// allocates nothing and returns 0 (the error is in b.err).
func (b *buffers) alloc(what string, n, size int) handle {
	if b.err != nil {
		return 0
	}
	h, err := b.g.alloc(what, int64(n)*int64(size))
	if err != nil {
		b.err = err
		return 0
	}
	b.bufs = append(b.bufs, h)
	return h
}

// free releases every buffer; freeing twice is a no-op.
func (b *buffers) free() error {
	var first error
	for _, h := range b.bufs {
		if err := b.g.free(h); err != nil && first == nil {
			first = err
		}
	}
	b.bufs, b.err = nil, nil
	return first
}

func blocks(n, per int) int { return (n + per - 1) / per }

// sm_90's launch limits (CUDA C Programming Guide, table 21).
const (
	maxGridX = 1<<31 - 1
	maxGridY = 65535
	maxBlock = 1024
)

// checkGrid fails, wrapping ErrLaunch, when a gridX x gridY grid of block
// threads is over the device's limits: the driver would refuse it, or a
// grid size that wrapped would run the wrong blocks.
func checkGrid(name string, gridX, gridY, block int) error {
	switch {
	case gridX < 1 || gridY < 1 || block < 1:
		return fmt.Errorf("%w: launching %s: empty grid %d x %d of %d threads", ErrLaunch, name, gridX, gridY, block)
	case gridX > maxGridX:
		return fmt.Errorf("%w: launching %s: gridDim.x %d is over the limit of %d", ErrLaunch, name, gridX, maxGridX)
	case gridY > maxGridY:
		return fmt.Errorf("%w: launching %s: gridDim.y %d is over the limit of %d", ErrLaunch, name, gridY, maxGridY)
	case block > maxBlock:
		return fmt.Errorf("%w: launching %s: %d threads per block is over the limit of %d", ErrLaunch, name, block, maxBlock)
	}
	return nil
}
