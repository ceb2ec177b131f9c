//go:build cgo

package harness

import (
	"fmt"
	"math"
	"os"
	"regexp"
	"strconv"
	"sync"
	"unsafe"

	"github.com/jeirt/jeirt/cuda/internal/gpu"
	"github.com/jeirt/jeirt/cuda/kernels"
)

// GPU is a gpu.GPU whose memory is host memory and whose kernels are the
// real cuda/kernels/*.cu, compiled for the CPU and launched by Launch: every
// CUDA thread of a block runs as a thread of its own, and each launch is
// checked against sm_90's limits (static shared memory read from the
// committed PTX). Running the batch and stepper code on it tests the kernels
// and everything above them without a GPU: buffer sizes and offsets,
// argument order and types, grid sizes, the host solves and the order of
// launches and copies.
//
// JEIRT_HARNESS_MODE=threads runs the CUDA threads as OS threads (slow on a
// small machine); the default runs them as fibers switched at barriers.
// JEIRT_HARNESS_TRACE=file records launches, with their inputs and outputs,
// for the sanitizer runs of scripts/cuda-cpu-check.sh (replay/; CloseTrace
// ends the file).
type GPU struct {
	mu  sync.Mutex
	mem map[gpu.Handle]int64 // live allocations and their sizes
	// Capacity is the device memory in bytes (0: unlimited); allocations
	// past it fail with gpu.ErrOutOfMemory.
	Capacity int64
	used     int64
}

// NewGPU returns a harness device with no memory in use.
func NewGPU() *GPU { return &GPU{mem: map[gpu.Handle]int64{}} }

// InUse returns the live allocations and their bytes.
func (e *GPU) InUse() (buffers int, bytes int64) { return len(e.mem), e.used }

// Name implements gpu.GPU.
func (e *GPU) Name() string { return "CPU harness" }

// Do implements gpu.GPU.
func (e *GPU) Do(f func() error) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return f()
}

// Alloc implements gpu.GPU.
func (e *GPU) Alloc(what string, n int64) (gpu.Handle, error) {
	if e.Capacity > 0 && e.used+n > e.Capacity {
		return 0, fmt.Errorf("%w: allocating %s (%s) on %s, %s free of %s", gpu.ErrOutOfMemory, what, gpu.MiB(n), e.Name(), gpu.MiB(e.Capacity-e.used), gpu.MiB(e.Capacity))
	}
	a, err := Alloc(n)
	if err != nil {
		return 0, fmt.Errorf("%w: allocating %s: %v", gpu.ErrOutOfMemory, what, err)
	}
	e.used += n
	e.mem[gpu.Handle(a)] = n
	return gpu.Handle(a), nil
}

// Free implements gpu.GPU.
func (e *GPU) Free(h gpu.Handle) error {
	n, ok := e.mem[h]
	if !ok {
		return fmt.Errorf("harness: freeing %#x, which is not an allocation", h)
	}
	e.used -= n
	delete(e.mem, h)
	return Free(uintptr(h))
}

// CheckFree implements gpu.GPU.
func (e *GPU) CheckFree(what string, need int64) error {
	if e.Capacity > 0 && need > e.Capacity-e.used {
		return fmt.Errorf("%w: %s needs %s on %s, %s free of %s", gpu.ErrOutOfMemory, what, gpu.MiB(need), e.Name(), gpu.MiB(e.Capacity-e.used), gpu.MiB(e.Capacity))
	}
	return nil
}

// span returns n bytes of device memory at h, failing when they run past the
// allocation.
func span(h gpu.Handle, n int64, op string) ([]byte, error) {
	b, _, err := Bytes(uintptr(h))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	if int64(len(b)) < n {
		return nil, fmt.Errorf("%s of %d bytes at %#x runs %d bytes past the allocation", op, n, h, n-int64(len(b)))
	}
	return b[:n], nil
}

// HtoD implements gpu.GPU.
func (e *GPU) HtoD(dst gpu.Handle, src any) error {
	p, n := gpu.SliceBytes(src)
	if n == 0 {
		return nil
	}
	b, err := span(dst, n, "htod")
	if err != nil {
		return err
	}
	copy(b, unsafe.Slice((*byte)(p), n))
	return nil
}

// DtoH implements gpu.GPU.
func (e *GPU) DtoH(dst any, src gpu.Handle) error {
	p, n := gpu.SliceBytes(dst)
	if n == 0 {
		return nil
	}
	b, err := span(src, n, "dtoh")
	if err != nil {
		return err
	}
	copy(unsafe.Slice((*byte)(p), n), b)
	return nil
}

// Memset0 implements gpu.GPU.
func (e *GPU) Memset0(h gpu.Handle, n int64) error {
	b, err := span(h, 4*n, "memset")
	if err != nil {
		return err
	}
	clear(b)
	return nil
}

// kernelArgs converts launch arguments to the kernel's 64-bit words, checking
// them against the kernel's own signature: a handle for each pointer, an int
// or bool for each integer, a float64 for each double.
func kernelArgs(k Kernel, args []any) ([]uint64, error) {
	if len(args) != len(k.Args) {
		return nil, fmt.Errorf("kernel %s takes %d arguments, got %d", k.Name, len(k.Args), len(args))
	}
	w := make([]uint64, len(args))
	for i, a := range args {
		switch c := k.Args[i]; {
		case c == 's':
			switch v := a.(type) {
			case int:
				w[i] = uint64(int64(v))
			case bool:
				if v {
					w[i] = 1
				}
			default:
				return nil, fmt.Errorf("kernel %s argument %d is a %T, the kernel takes a long long", k.Name, i, a)
			}
		case c == 'x':
			v, ok := a.(float64)
			if !ok {
				return nil, fmt.Errorf("kernel %s argument %d is a %T, the kernel takes a double", k.Name, i, a)
			}
			w[i] = math.Float64bits(v)
		default:
			v, ok := a.(gpu.Handle)
			if !ok {
				return nil, fmt.Errorf("kernel %s argument %d is a %T, the kernel takes a pointer", k.Name, i, a)
			}
			w[i] = uint64(v)
		}
	}
	return w, nil
}

// Launch implements gpu.GPU.
func (e *GPU) Launch(name string, gridX, gridY, block int, args ...any) error {
	k, ok := Lookup(name)
	if !ok {
		return fmt.Errorf("%w: launching %s on %s: no such kernel", gpu.ErrLaunch, name, e.Name())
	}
	w, err := kernelArgs(k, args)
	if err != nil {
		return fmt.Errorf("%w: launching %s on %s: %v", gpu.ErrLaunch, name, e.Name(), err)
	}
	grid, blk := Dim{X: uint32(gridX), Y: uint32(gridY), Z: 1}, Dim{X: uint32(block), Y: 1, Z: 1}
	if gridX < 1 || gridY < 1 || block < 1 || int64(gridX) > math.MaxUint32 || int64(gridY) > math.MaxUint32 || block > math.MaxUint32 {
		return fmt.Errorf("%w: launching %s (grid %d x %d, %d threads) on %s: empty or oversized", gpu.ErrLaunch, name, gridX, gridY, block, e.Name())
	}
	shared := StaticShared()[name]
	if err := Check(grid, blk, shared, 0); err != nil {
		return fmt.Errorf("%w: launching %s (grid %d x %d, %d threads) on %s: %w", gpu.ErrLaunch, name, gridX, gridY, block, e.Name(), err)
	}
	rec := tracer.start(k, grid, blk, shared, w)
	if err := Launch(name, grid, blk, shared, w, launchMode()); err != nil {
		return fmt.Errorf("%w: %v", gpu.ErrLaunch, err)
	}
	tracer.finish(rec)
	return nil
}

var (
	modeMu sync.Mutex
	mode   = func() Mode {
		if os.Getenv("JEIRT_HARNESS_MODE") == "threads" {
			return Threads
		}
		return Fibers
	}()
)

func launchMode() Mode {
	modeMu.Lock()
	defer modeMu.Unlock()
	return mode
}

// UseMode makes GPU launches run a block's threads as m until the returned
// function restores the mode before.
func UseMode(m Mode) (restore func()) {
	modeMu.Lock()
	defer modeMu.Unlock()
	old := mode
	mode = m
	return func() {
		modeMu.Lock()
		defer modeMu.Unlock()
		mode = old
	}
}

// StaticShared is each kernel's static shared memory in bytes, from the
// .shared declarations of the committed PTX (what the device will allocate).
var StaticShared = sync.OnceValue(func() map[string]int64 {
	m := map[string]int64{}
	re := regexp.MustCompile(`\.shared \.align \d+ \.b8 _ZZ(\d+)(\w+)\[(\d+)\]`)
	for _, mod := range kernels.Modules() {
		for _, s := range re.FindAllStringSubmatch(mod.PTX, -1) {
			n, _ := strconv.Atoi(s[1])
			size, _ := strconv.ParseInt(s[3], 10, 64)
			m[s[2][:n]] += size
		}
	}
	return m
})
