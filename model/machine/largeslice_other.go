//go:build !linux

package machine

import (
	"unsafe"
)

func adviseHuge(unsafe.Pointer, uintptr) {}
