//go:build jeirtcuda

package gpu

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"unsafe"

	_ "github.com/jeirt/jeirt/cuda/internal/cuinit" // before gorgonia.org/cu's init: see there
	"github.com/jeirt/jeirt/cuda/kernels"
	"gorgonia.org/cu"
)

// device is GPU 0 (as CUDA_VISIBLE_DEVICES numbers them) with its primary
// context and the kernels of package kernels loaded: the GPU of the cuda build. Every
// driver call goes through Do, which holds the lock and makes the context
// current on a locked OS thread; kernels and copies run in order on the
// device's own stream (device_stream.go), and copies down wait for it.
type device struct {
	mu    sync.Mutex
	dev   cu.Device
	label string
	total int64
	ctx   cu.CUContext
	fns   map[string]cu.Function
	// stream runs every launch and copy; pinned is page-locked host memory
	// for the copies down (device_stream.go).
	stream cu.Stream
	pinned []byte
	last   string // the kernel launched last: the likely culprit of a fault seen at the next copy
	// fault is the first sticky error (a kernel fault): the context is
	// unusable after it, so every later call fails with it, and the process
	// must restart to use the GPU again.
	fault error
}

// stickyErrors are the CUDA errors after which the context is unusable.
var stickyErrors = []error{cu.IllegalAddress, cu.LaunchFailed, cu.MisalignedAddress, cu.IllegalInstruction,
	cu.HardwareStackError, cu.InvalidPc, cu.Assert, cu.LaunchTimeout, cu.EccUncorrectable}

// noteFault records err as the context's fault when it is a sticky error;
// inside Do.
func (d *device) noteFault(err error, during string) {
	if d.fault != nil || err == nil {
		return
	}
	for _, s := range stickyErrors {
		if errors.Is(err, s) {
			d.fault = fmt.Errorf("%w: %s on %s (after kernel %s): %v; the CUDA context is unusable, restart the process", ErrLaunch, during, d.label, d.last, err)
			return
		}
	}
}

var (
	openOnce   sync.Once
	openDev    *device
	openDevErr error
)

// Open returns the process's device, opening it on first use; after a
// kernel fault it returns the fault.
func Open() (GPU, error) {
	openOnce.Do(func() { openDev, openDevErr = open() })
	if openDevErr != nil {
		return nil, openDevErr
	}
	openDev.mu.Lock()
	fault := openDev.fault
	openDev.mu.Unlock()
	if fault != nil {
		return nil, fault
	}
	return openDev, nil
}

func open() (*device, error) {
	n, err := cu.NumDevices()
	if err != nil {
		return nil, fmt.Errorf("%w: counting devices: %v", ErrNoDevice, err)
	}
	if n == 0 {
		return nil, fmt.Errorf("%w: the driver reports none (check CUDA_VISIBLE_DEVICES)", ErrNoDevice)
	}
	d := &device{fns: map[string]cu.Function{}}
	if d.dev, err = cu.GetDevice(0); err != nil {
		return nil, fmt.Errorf("%w: device 0: %v", ErrNoDevice, err)
	}
	d.label, _ = d.dev.Name()
	d.total, _ = d.dev.TotalMem()
	if d.ctx, err = d.dev.RetainPrimaryCtx(); err != nil {
		return nil, fmt.Errorf("cuda: creating a context on %s: %w", d.label, err)
	}
	err = d.Do(func() error {
		if err := d.openStream(); err != nil {
			return err
		}
		major, minor, _ := d.dev.ComputeCapability()
		for _, m := range kernels.Modules() {
			mod, err := loadModule(m, major, minor)
			if err != nil {
				return fmt.Errorf("cuda: loading kernels/%s.ptx (PTX for compute_70, CUDA 11.8) on %s: %w", m.File, d.label, err)
			}
			for _, name := range m.Names {
				fn, err := mod.Function(name)
				if err != nil {
					return fmt.Errorf("cuda: kernels/%s.ptx has no kernel %s: %w", m.File, name, err)
				}
				d.fns[name] = fn
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return d, nil
}

// CubinsEnv names a folder of kernels assembled ahead of time for the
// device (NAME.sm_XY.cubin, from ptxas -arch=sm_XY NAME.ptx), which the open
// loads instead of having the driver JIT-compile the PTX, seconds per module
// (scripts/gpu-check.sh assembles them where the machine has ptxas). A
// module without a cubin there, or whose cubin the driver refuses, is
// loaded from its PTX as usual; a refusal is said on stderr.
const CubinsEnv = "JEIRT_CUDA_CUBINS"

// loadModule loads m from its cubin for compute capability major.minor when
// CubinsEnv has one, else from the embedded PTX.
func loadModule(m kernels.Module, major, minor int) (cu.Module, error) {
	if dir := os.Getenv(CubinsEnv); dir != "" && major > 0 {
		path := filepath.Join(dir, fmt.Sprintf("%s.sm_%d%d.cubin", m.File, major, minor))
		if _, err := os.Stat(path); err == nil {
			mod, err := cu.Load(path)
			if err == nil {
				return mod, nil
			}
			fmt.Fprintf(os.Stderr, "jeirt-cuda: %s: the driver refused it (%v); loading the PTX instead\n", path, err)
		}
	}
	return cu.LoadData(m.PTX)
}

// Describe says which GPU Open opens: "NVIDIA H200 (139.8 GiB)".
func Describe() (string, error) {
	if _, err := Open(); err != nil {
		return "", err
	}
	return fmt.Sprintf("%s (%.1f GiB)", openDev.label, float64(openDev.total)/(1<<30)), nil
}

func (d *device) Name() string { return d.label }

func (d *device) Do(f func() error) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if d.fault != nil {
		return d.fault
	}
	if err := cu.SetCurrentContext(d.ctx); err != nil {
		return fmt.Errorf("cuda: making the context of %s current: %w", d.label, err)
	}
	return f()
}

// Alloc allocates plain device memory (never managed memory).
func (d *device) Alloc(what string, n int64) (Handle, error) {
	if n == 0 {
		n = 8 // a valid address for an empty buffer
	}
	p, err := cu.MemAlloc(n)
	if err != nil {
		if errors.Is(err, cu.OutOfMemory) {
			free, total, _ := cu.MemInfo()
			return 0, fmt.Errorf("%w: allocating %s (%s) on %s, %s free of %s", ErrOutOfMemory, what, MiB(n), d.label, MiB(free), MiB(total))
		}
		return 0, fmt.Errorf("cuda: allocating %s (%s) on %s: %w", what, MiB(n), d.label, err)
	}
	return Handle(p), nil
}

func (d *device) Free(h Handle) error {
	if err := cu.MemFree(cu.DevicePtr(h)); err != nil {
		return fmt.Errorf("cuda: freeing device memory on %s: %w", d.label, err)
	}
	return nil
}

func (d *device) CheckFree(what string, need int64) error {
	free, total, err := cu.MemInfo()
	if err == nil && need > free {
		return fmt.Errorf("%w: %s needs %s on %s, %s free of %s", ErrOutOfMemory, what, MiB(need), d.label, MiB(free), MiB(total))
	}
	return nil
}

func (d *device) HtoD(dst Handle, src any) error {
	p, n := SliceBytes(src)
	if n == 0 {
		return nil
	}
	// Pageable source: the driver has staged it when the call returns, so
	// src may change at once; the copy is ordered with the launches.
	if err := cu.MemcpyHtoDAsync(cu.DevicePtr(dst), p, n, d.stream); err != nil {
		d.noteFault(err, "copying to the device")
		return d.copyErr("copying to the device", n, err)
	}
	return nil
}

// DtoH copies from the device; a kernel fault from an earlier launch surfaces here.
func (d *device) DtoH(dst any, src Handle) error {
	p, n := SliceBytes(dst)
	if n == 0 {
		return nil
	}
	if err := d.copyDown(p, src, n); err != nil {
		d.noteFault(err, "copying from the device")
		return d.copyErr("copying from the device", n, err)
	}
	return nil
}

func (d *device) copyErr(op string, n int64, err error) error {
	if d.last != "" && !errors.Is(err, cu.InvalidValue) {
		return fmt.Errorf("%w: %s (%s) on %s after kernel %s: %v", ErrLaunch, op, MiB(n), d.label, d.last, err)
	}
	return fmt.Errorf("cuda: %s (%s) on %s: %w", op, MiB(n), d.label, err)
}

func (d *device) Memset0(h Handle, n int64) error {
	if n == 0 {
		return nil
	}
	if err := cu.MemsetD32Async(cu.DevicePtr(h), 0, n, d.stream); err != nil {
		d.noteFault(err, "clearing device memory")
		return d.copyErr("clearing device memory", 4*n, err)
	}
	return nil
}

// Launch passes every argument as 64 bits: gorgonia.org/cu copies 8 bytes
// per argument, so the kernels take long long, double and pointers only.
func (d *device) Launch(name string, gridX, gridY, block int, args ...any) error {
	if gridX == 0 || gridY == 0 {
		return nil
	}
	fn, ok := d.fns[name]
	if !ok {
		return fmt.Errorf("%w: no kernel %s is loaded", ErrLaunch, name)
	}
	if err := CheckGrid(name, gridX, gridY, block); err != nil {
		return fmt.Errorf("%w on %s", err, d.label)
	}
	vals := make([]uint64, len(args))
	ptrs := make([]unsafe.Pointer, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case Handle:
			vals[i] = uint64(v)
		case int:
			vals[i] = uint64(int64(v))
		case float64:
			vals[i] = math.Float64bits(v)
		case bool:
			if v {
				vals[i] = 1
			}
		default:
			return fmt.Errorf("%w: kernel %s argument %d has type %T", ErrLaunch, name, i, a)
		}
		ptrs[i] = unsafe.Pointer(&vals[i])
	}
	d.last = name
	if err := fn.Launch(gridX, gridY, 1, block, 1, 1, 0, d.stream, ptrs); err != nil {
		d.noteFault(err, "launching "+name)
		return fmt.Errorf("%w: launching %s (grid %d x %d, %d threads) on %s: %v", ErrLaunch, name, gridX, gridY, block, d.label, err)
	}
	return nil
}
