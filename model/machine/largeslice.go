package machine

import (
	"unsafe"
)

// hugePageMin is the size from which MakeLarge asks for huge pages.
const hugePageMin = 16 << 20

// MakeLarge returns make([]T, n), and for slices of 16 MB or more first asks
// the kernel to back it with transparent huge pages where it can (Linux with
// transparent_hugepage set to madvise or always): a large slice that is then
// written cell by cell takes one page fault per 2 MB instead of one per 4 KB,
// which at 10^8 cells is a large share of a read or a layout. Elsewhere, or
// when the kernel declines, it is plain make.
func MakeLarge[T any](n int) []T {
	s := make([]T, n)
	var zero T
	if size := uintptr(n) * unsafe.Sizeof(zero); n > 0 && size >= hugePageMin {
		adviseHuge(unsafe.Pointer(&s[0]), size)
	}
	return s
}
