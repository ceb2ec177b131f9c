//go:build !linux

package model

import "unsafe"

func adviseHuge(unsafe.Pointer, uintptr) {}
