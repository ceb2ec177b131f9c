package backend

import (
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/jeirt/jeirt/model"
)

// The device strings: the one selector of where the hot loops run, taken
// from a --device flag or a config's train.device by the same rule
// (Resolve). A device registers what it implements of each seam (CBMM,
// JEIRT, Encoders) under its name; "cpu" always has them, "cuda" registers
// itself from package cuda in a binary built with -tags jeirtcuda.
// CPUFused is the CPU with the JE-IRT step written out by hand instead of
// the Gorgonia graph step that plain "cpu" runs (every other seam is the
// CPU's own).
const (
	Auto     = "auto"
	CPU      = "cpu"
	CPUFused = "cpu:fused"
	CUDA     = "cuda"
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

// resolutions counts Resolve's calls: one per run (see Resolutions).
var resolutions atomic.Int64

// Resolve applies the one device rule to a requested device: "auto" (or
// "") is cuda when this binary has it, else cpu; "cpu" and "cpu:fused" are
// always there and "cuda" must be compiled in. A run resolves its device
// once, from its --device flag or its config, and hands the result down;
// Lookup and EncoderOn take it as it is.
func Resolve(request string) (string, error) {
	resolutions.Add(1)
	mu.Lock()
	defer mu.Unlock()
	return resolve(request)
}

// Resolutions is how many times this process has applied the device rule:
// the test that a run resolves its device once counts it.
func Resolutions() int64 { return resolutions.Load() }

// Retired device names, refused with the name to use instead (for one
// release).
var retired = map[string]string{
	"gorgonia": `device "gorgonia" was retired: use cpu (its default JE-IRT step is the Gorgonia graph; cpu:fused is the hand-written one)`,
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
			return "", model.FieldErrorf("Device", "device cuda: this jeirt binary was built without CUDA; build the CUDA runner with scripts/build-cuda.sh (it writes bin/jeirt-cuda, and a bin/jeirt that runs {Device} cuda commands in it)")
		}
		return CUDA, nil
	case CPU, CPUFused:
		return device, nil
	}
	if msg, ok := retired[device]; ok {
		return "", errors.New(msg)
	}
	if _, ok := devices[device]; ok {
		return device, nil // a device registered under another name (tests)
	}
	return "", fmt.Errorf("device %q: unknown (want auto, cpu, cpu:fused or cuda)", device)
}

// registryName is the name a resolved device's implementations are
// registered under: cpu:fused is the CPU's.
func registryName(device string) string {
	if device == CPUFused {
		return CPU
	}
	return device
}

// Lookup returns device's implementation of the seam T (CBMM, JEIRT or
// Encoders) and the device's name. device is a resolved device (Resolve's
// result); a caller that resolved none may pass "auto" or "", which Lookup
// resolves.
func Lookup[T any](device string) (T, string, error) {
	var zero T
	if device == "" || device == Auto {
		var err error
		if device, err = Resolve(device); err != nil {
			return zero, "", err
		}
	}
	mu.Lock()
	defer mu.Unlock()
	name, err := resolve(device)
	if err != nil {
		return zero, "", err
	}
	for _, impl := range devices[registryName(name)] {
		if t, ok := impl.(T); ok {
			return t, name, nil
		}
	}
	return zero, "", fmt.Errorf("device %s: no %T in this binary", name, zero)
}

// Implements reports whether the resolved device has an implementation of
// T (for example CBMMSigned, the signed-loadings fit).
func Implements[T any](device string) bool {
	mu.Lock()
	defer mu.Unlock()
	for _, impl := range devices[registryName(device)] {
		if _, ok := impl.(T); ok {
			return true
		}
	}
	return false
}
