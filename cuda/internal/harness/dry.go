//go:build cgo

package harness

import (
	"fmt"
	"math"

	"github.com/jeirt/jeirt/cuda/internal/gpu"
)

// Dry is a gpu.GPU that runs nothing: every launch is only checked, against
// the kernel's signature and sm_90's limits, and recorded, and the device's
// work is counted (launches, copies each way and their bytes, device memory
// live and at its peak). It sizes launch configurations at full scale
// cheaply, and counts what the batch and stepper code asks of a device.
type Dry struct {
	next    gpu.Handle
	largest map[string][3]int // per kernel: the largest grid x, grid y and block
	sizes   map[gpu.Handle]int64
	counts  Counts
	// Live and Peak are the device memory allocated now and at most.
	Live, Peak int64
	// Report, when set, fills what the code reads back into a []uint8 (the
	// losses and outcomes of a cBMM Iterate) in place of the kernels, which
	// do not run.
	Report func(dst []uint8)
}

// Counts are a device's work: launches, copies up and down, and their bytes.
type Counts struct{ Launches, Up, Down, UpBytes, DownBytes int64 }

// Minus is the work from b to a.
func (a Counts) Minus(b Counts) Counts {
	return Counts{a.Launches - b.Launches, a.Up - b.Up, a.Down - b.Down, a.UpBytes - b.UpBytes, a.DownBytes - b.DownBytes}
}

// NewDry returns a dry device with nothing counted.
func NewDry() *Dry { return &Dry{largest: map[string][3]int{}, sizes: map[gpu.Handle]int64{}} }

// Counts returns the work counted so far.
func (d *Dry) Counts() Counts { return d.counts }

// Largest is the largest grid x, grid y and block kernel name was launched
// with, and whether it was launched.
func (d *Dry) Largest(name string) ([3]int, bool) { g, ok := d.largest[name]; return g, ok }

// Name implements gpu.GPU.
func (d *Dry) Name() string { return "dry run" }

// Do implements gpu.GPU.
func (d *Dry) Do(f func() error) error { return f() }

// CheckFree implements gpu.GPU: a dry device has room for anything.
func (d *Dry) CheckFree(string, int64) error { return nil }

// Memset0 implements gpu.GPU.
func (d *Dry) Memset0(gpu.Handle, int64) error { return nil }

// Alloc implements gpu.GPU: each allocation is 2⁴⁰ bytes past the last.
func (d *Dry) Alloc(_ string, n int64) (gpu.Handle, error) {
	d.next += 1 << 40
	d.sizes[d.next] = n
	d.Live += n
	d.Peak = max(d.Peak, d.Live)
	return d.next, nil
}

// Free implements gpu.GPU.
func (d *Dry) Free(h gpu.Handle) error {
	d.Live -= d.sizes[h]
	delete(d.sizes, h)
	return nil
}

// HtoD implements gpu.GPU.
func (d *Dry) HtoD(_ gpu.Handle, src any) error {
	if _, n := gpu.SliceBytes(src); n > 0 {
		d.counts.Up++
		d.counts.UpBytes += n
	}
	return nil
}

// DtoH implements gpu.GPU.
func (d *Dry) DtoH(dst any, _ gpu.Handle) error {
	if _, n := gpu.SliceBytes(dst); n > 0 {
		d.counts.Down++
		d.counts.DownBytes += n
	}
	if b, ok := dst.([]uint8); ok && d.Report != nil {
		d.Report(b)
	}
	return nil
}

// Launch implements gpu.GPU.
func (d *Dry) Launch(name string, gridX, gridY, block int, args ...any) error {
	d.counts.Launches++
	k, ok := Lookup(name)
	if !ok {
		return fmt.Errorf("no kernel %s", name)
	}
	if _, err := kernelArgs(k, args); err != nil {
		return err
	}
	if int64(gridX) > math.MaxUint32 || int64(gridY) > math.MaxUint32 {
		return fmt.Errorf("launching %s: grid %d x %d does not fit 32 bits", name, gridX, gridY)
	}
	if err := Check(Dim{X: uint32(gridX), Y: uint32(gridY), Z: 1}, Dim{X: uint32(block), Y: 1, Z: 1}, StaticShared()[name], 0); err != nil {
		return fmt.Errorf("launching %s (grid %d x %d, %d threads): %w", name, gridX, gridY, block, err)
	}
	m := d.largest[name]
	d.largest[name] = [3]int{max(m[0], gridX), max(m[1], gridY), max(m[2], block)}
	return nil
}
