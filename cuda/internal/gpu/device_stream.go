//go:build jeirtcuda

package gpu

/*
#cgo LDFLAGS: -lcuda
#include <cuda.h>
*/
import "C"

import (
	"fmt"
	"unsafe"

	"gorgonia.org/cu"
)

// pinnedBytes is the size of the device's page-locked staging buffer: every
// copy down of at most this many bytes (the per-iteration losses and
// outcomes of cBMM, the per-step losses of JE-IRT) goes through it, a DMA
// straight into host memory instead of the driver's pageable staging.
const pinnedBytes = 1 << 20

// openStream makes the device's stream and its page-locked staging buffer;
// inside Do. The stream is created blocking (CU_STREAM_DEFAULT), so that
// it stays ordered with work on the legacy default stream (cuBLAS's, whose
// handle is not given a stream): asynchronous copies and launches on a
// stream of our own, without a race with anything on stream 0.
func (d *device) openStream() error {
	s, err := cu.MakeStream(cu.DefaultStream)
	if err != nil {
		return fmt.Errorf("cuda: creating a stream on %s: %w", d.label, err)
	}
	var p unsafe.Pointer
	if r := C.cuMemAllocHost(&p, C.size_t(pinnedBytes)); r != C.CUDA_SUCCESS {
		s.Destroy()
		return fmt.Errorf("cuda: allocating %s of page-locked host memory for %s: CUDA error %d", MiB(pinnedBytes), d.label, int(r))
	}
	d.stream, d.pinned = s, unsafe.Slice((*byte)(p), pinnedBytes)
	return nil
}

// copyDown copies n bytes at src to p on the device's stream and waits for
// them: through the page-locked buffer when they fit, else straight into
// p (pageable, which the driver stages). A kernel fault of an earlier
// launch surfaces here.
func (d *device) copyDown(p unsafe.Pointer, src Handle, n int64) error {
	if n <= int64(len(d.pinned)) {
		if err := cu.MemcpyDtoHAsync(unsafe.Pointer(&d.pinned[0]), cu.DevicePtr(src), n, d.stream); err != nil {
			return err
		}
		if err := d.stream.Synchronize(); err != nil {
			return err
		}
		copy(unsafe.Slice((*byte)(p), n), d.pinned[:n])
		return nil
	}
	if err := cu.MemcpyDtoHAsync(p, cu.DevicePtr(src), n, d.stream); err != nil {
		return err
	}
	return d.stream.Synchronize()
}
