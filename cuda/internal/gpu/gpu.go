// Package gpu is the device layer of jeirt's CUDA code: the small interface
// (GPU) that the batched cBMM, the JE-IRT step and the text encoder's forward
// are written against — plain device buffers, copies, and launches of the
// kernels of package cuda/kernels by name — with the buffer handles, the
// errors and sm_90's launch limits. The cuda build implements it on
// gorgonia.org/cu's driver API (Open, behind -tags jeirtcuda: GPU 0, its
// primary context, one stream and a page-locked staging buffer); the CPU
// harness (package cuda/internal/harness) implements it with the same kernel
// sources compiled for the host, so that everything above the kernels is
// tested without a GPU.
package gpu

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

// Handle is a device address (0: none). Adding a byte offset to a handle
// addresses inside the buffer, as with a device pointer.
type Handle uintptr

// GPU is what the batched cBMM, JE-IRT and encoder code needs from a
// device: plain buffers, copies, and launches of the kernels in
// cuda/kernels by name.
//
// Every method but Do must be called inside Do, which holds the device and
// makes its context current on the calling OS thread.
type GPU interface {
	Name() string
	Do(f func() error) error
	// Alloc returns n bytes of device memory for what (named in errors).
	Alloc(what string, n int64) (Handle, error)
	Free(h Handle) error
	// CheckFree fails with ErrOutOfMemory when need bytes will not fit.
	CheckFree(what string, need int64) error
	// HtoD copies the slice src ([]float32, []float64, []int32, []uint32,
	// []int64 or []uint8) to dst; DtoH copies from src into the slice dst.
	HtoD(dst Handle, src any) error
	DtoH(dst any, src Handle) error
	// Memset0 zeroes n 4-byte words at h.
	Memset0(h Handle, n int64) error
	// Launch runs kernel name on a gridX x gridY grid of block threads. Its
	// arguments are handles, ints, float64s and bools, each passed as 64 bits.
	Launch(name string, gridX, gridY, block int, args ...any) error
}

// SliceBytes returns the address and length in bytes of a slice src of one
// of the element types a GPU copies.
func SliceBytes(src any) (unsafe.Pointer, int64) {
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

// MiB shows n bytes in MiB, as the errors do.
func MiB(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// FirstErr returns the first non-nil error of errs.
func FirstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// Buffers tracks a set of device allocations on G to free together.
type Buffers struct {
	G    GPU
	bufs []Handle
	Err  error // the first allocation error, for alloc chains
}

// Alloc allocates n elements of size bytes for what; after a failure it
// allocates nothing and returns 0 (the error is in b.Err).
func (b *Buffers) Alloc(what string, n, size int) Handle {
	if b.Err != nil {
		return 0
	}
	h, err := b.G.Alloc(what, int64(n)*int64(size))
	if err != nil {
		b.Err = err
		return 0
	}
	b.bufs = append(b.bufs, h)
	return h
}

// Free releases every buffer; freeing twice is a no-op.
func (b *Buffers) Free() error {
	var first error
	for _, h := range b.bufs {
		if err := b.G.Free(h); err != nil && first == nil {
			first = err
		}
	}
	b.bufs, b.Err = nil, nil
	return first
}

// Blocks is the number of blocks of per threads that cover n.
func Blocks(n, per int) int { return (n + per - 1) / per }

// sm_90's launch limits (CUDA C Programming Guide, table 21).
const (
	MaxGridX = 1<<31 - 1
	MaxGridY = 65535
	MaxBlock = 1024
)

// CheckGrid fails, wrapping ErrLaunch, when a gridX x gridY grid of block
// threads is over the device's limits: the driver would refuse it, or a
// grid size that wrapped would run the wrong blocks.
func CheckGrid(name string, gridX, gridY, block int) error {
	switch {
	case gridX < 1 || gridY < 1 || block < 1:
		return fmt.Errorf("%w: launching %s: empty grid %d x %d of %d threads", ErrLaunch, name, gridX, gridY, block)
	case gridX > MaxGridX:
		return fmt.Errorf("%w: launching %s: gridDim.x %d is over the limit of %d", ErrLaunch, name, gridX, MaxGridX)
	case gridY > MaxGridY:
		return fmt.Errorf("%w: launching %s: gridDim.y %d is over the limit of %d", ErrLaunch, name, gridY, MaxGridY)
	case block > MaxBlock:
		return fmt.Errorf("%w: launching %s: %d threads per block is over the limit of %d", ErrLaunch, name, block, MaxBlock)
	}
	return nil
}
