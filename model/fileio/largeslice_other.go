//go:build !linux

package fileio

import "unsafe"

func adviseHuge(unsafe.Pointer, uintptr) {}
