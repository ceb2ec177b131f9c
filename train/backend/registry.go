package backend

import (
	"fmt"
	"sort"
	"sync"
)

// The device names. A device registers what it implements of each seam (CBMM,
// JEIRT) under its name; "cpu" always has both, "cuda" registers itself from
// package cuda in a binary built with -tags jeirtcuda.
const (
	Auto = "auto"
	CPU  = "cpu"
	CUDA = "cuda"
)

var (
	mu      sync.Mutex
	devices = map[string][]any{}
)

// Register makes impl (a CBMM, a JEIRT or an Encoders) available on device. Registering a
// second implementation of the same seam on a device panics: it is a
// programming error, as is an impl of no seam.
func Register(device string, impl any) {
	mu.Lock()
	defer mu.Unlock()
	kind := seam(impl)
	if kind == "" {
		panic(fmt.Sprintf("backend: %T implements no seam", impl))
	}
	for _, old := range devices[device] {
		if seam(old) == kind {
			panic("backend: " + kind + " registered twice on device " + device)
		}
	}
	devices[device] = append(devices[device], impl)
}

func seam(impl any) string {
	switch impl.(type) {
	case CBMMDevice:
		return "cBMM"
	case NewJEIRTStepper:
		return "JE-IRT step"
	case Encoders:
		return "text encoder"
	}
	return ""
}

// Devices lists the registered device names, sorted.
func Devices() []string {
	mu.Lock()
	defer mu.Unlock()
	names := make([]string, 0, len(devices))
	for n := range devices {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Resolve applies the one device rule: "auto" (or "") is cuda when this binary
// has it, else cpu; "cpu" is always there and "cuda" must be compiled in.
// Every --device flag and every settings struct's Device go through it.
func Resolve(device string) (string, error) {
	mu.Lock()
	defer mu.Unlock()
	return resolve(device)
}

func resolve(device string) (string, error) {
	switch device {
	case "", Auto:
		if _, ok := devices[CUDA]; ok {
			return CUDA, nil
		}
		return CPU, nil
	case CUDA:
		if _, ok := devices[CUDA]; !ok {
			return "", fmt.Errorf("device cuda: this jeirt binary was built without CUDA; build the CUDA runner with scripts/build-cuda.sh (it writes bin/jeirt-cuda, and a bin/jeirt that runs --device cuda commands in it)")
		}
		return CUDA, nil
	case CPU:
		return CPU, nil
	}
	if _, ok := devices[device]; ok {
		return device, nil // a device registered under another name (tests)
	}
	return "", fmt.Errorf("device %q: unknown (want auto, cpu or cuda)", device)
}

// Lookup resolves device by Resolve's rule and returns its implementation of
// the seam T (CBMM or JEIRT) and the device's name.
func Lookup[T any](device string) (T, string, error) {
	mu.Lock()
	defer mu.Unlock()
	var zero T
	name, err := resolve(device)
	if err != nil {
		return zero, "", err
	}
	for _, impl := range devices[name] {
		if t, ok := impl.(T); ok {
			return t, name, nil
		}
	}
	return zero, "", fmt.Errorf("device %s: no %T in this binary", name, zero)
}
