package machine

import (
	"syscall"
	"unsafe"
)

// adviseHuge marks the 2 MB-aligned interior of [p, p+size) MADV_HUGEPAGE;
// errors (a kernel without transparent huge pages) are ignored.
func adviseHuge(p unsafe.Pointer, size uintptr) {
	const huge = 2 << 20
	start := (uintptr(p) + huge - 1) &^ (huge - 1)
	end := (uintptr(p) + size) &^ (huge - 1)
	if end <= start {
		return
	}
	b := unsafe.Slice((*byte)(unsafe.Add(p, start-uintptr(p))), end-start)
	_ = syscall.Madvise(b, 14) // MADV_HUGEPAGE
}
