//go:build cgo

package cuda

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/jeirt/jeirt/cuda/internal/harness"
	"github.com/jeirt/jeirt/train/backend"
)

// hostGPU is a gpu whose memory is host memory and whose kernels are the real
// kernels/*.cu, compiled for the CPU and launched by package harness: every
// CUDA thread of a block runs as a thread of its own, and each launch is
// checked against sm_90's limits (static shared memory read from the
// committed PTX). Running the batch and stepper code on it tests the kernels
// and everything above them without a GPU: buffer sizes and offsets,
// argument order and types, grid sizes, the host solves and the order of
// launches and copies.
//
// JEIRT_HARNESS_MODE=threads runs the CUDA threads as OS threads (slow on a
// small machine); the default runs them as fibers switched at barriers.
// JEIRT_HARNESS_TRACE=file records launches, with their inputs and outputs,
// for the sanitizer runs of scripts/cuda-cpu-check.sh (harness/replay).
type hostGPU struct {
	mu       sync.Mutex
	mem      map[handle]int64 // live allocations and their sizes
	capacity int64            // bytes; 0: unlimited
	used     int64
	launches map[string]int
	// Host<->device traffic, for cost reports: bytes and copies each way.
	htodBytes, dtohBytes, htodCopies, dtohCopies int64
}

func newHostGPU() *hostGPU { return &hostGPU{mem: map[handle]int64{}, launches: map[string]int{}} }

func (e *hostGPU) name() string { return "CPU harness" }

func (e *hostGPU) do(f func() error) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return f()
}

func (e *hostGPU) alloc(what string, n int64) (handle, error) {
	if e.capacity > 0 && e.used+n > e.capacity {
		return 0, fmt.Errorf("%w: allocating %s (%s) on %s, %s free of %s", ErrOutOfMemory, what, mib(n), e.name(), mib(e.capacity-e.used), mib(e.capacity))
	}
	a, err := harness.Alloc(n)
	if err != nil {
		return 0, fmt.Errorf("%w: allocating %s: %v", ErrOutOfMemory, what, err)
	}
	e.used += n
	e.mem[handle(a)] = n
	return handle(a), nil
}

func (e *hostGPU) free(h handle) error {
	n, ok := e.mem[h]
	if !ok {
		return fmt.Errorf("harness: freeing %#x, which is not an allocation", h)
	}
	e.used -= n
	delete(e.mem, h)
	return harness.Free(uintptr(h))
}

func (e *hostGPU) checkFree(what string, need int64) error {
	if e.capacity > 0 && need > e.capacity-e.used {
		return fmt.Errorf("%w: %s needs %s on %s, %s free of %s", ErrOutOfMemory, what, mib(need), e.name(), mib(e.capacity-e.used), mib(e.capacity))
	}
	return nil
}

// span returns n bytes of device memory at h, failing when they run past the
// allocation.
func (e *hostGPU) span(h handle, n int64, op string) ([]byte, error) {
	b, _, err := harness.Bytes(uintptr(h))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	if int64(len(b)) < n {
		return nil, fmt.Errorf("%s of %d bytes at %#x runs %d bytes past the allocation", op, n, h, n-int64(len(b)))
	}
	return b[:n], nil
}

func (e *hostGPU) htod(dst handle, src any) error {
	p, n := sliceBytes(src)
	if n == 0 {
		return nil
	}
	b, err := e.span(dst, n, "htod")
	if err != nil {
		return err
	}
	e.htodBytes += n
	e.htodCopies++
	copy(b, unsafe.Slice((*byte)(p), n))
	return nil
}

func (e *hostGPU) dtoh(dst any, src handle) error {
	p, n := sliceBytes(dst)
	if n == 0 {
		return nil
	}
	b, err := e.span(src, n, "dtoh")
	if err != nil {
		return err
	}
	e.dtohBytes += n
	e.dtohCopies++
	copy(unsafe.Slice((*byte)(p), n), b)
	return nil
}

func (e *hostGPU) memset0(h handle, n int64) error {
	b, err := e.span(h, 4*n, "memset")
	if err != nil {
		return err
	}
	clear(b)
	return nil
}

// kernelArgs converts launch arguments to the kernel's 64-bit words, checking
// them against the kernel's own signature: a handle for each pointer, an int
// or bool for each integer, a float64 for each double.
func kernelArgs(k harness.Kernel, args []any) ([]uint64, error) {
	if len(args) != len(k.Args) {
		return nil, fmt.Errorf("kernel %s takes %d arguments, got %d", k.Name, len(k.Args), len(args))
	}
	w := make([]uint64, len(args))
	for i, a := range args {
		switch c := k.Args[i]; {
		case c == 's':
			switch v := a.(type) {
			case int:
				w[i] = uint64(int64(v))
			case bool:
				if v {
					w[i] = 1
				}
			default:
				return nil, fmt.Errorf("kernel %s argument %d is a %T, the kernel takes a long long", k.Name, i, a)
			}
		case c == 'x':
			v, ok := a.(float64)
			if !ok {
				return nil, fmt.Errorf("kernel %s argument %d is a %T, the kernel takes a double", k.Name, i, a)
			}
			w[i] = math.Float64bits(v)
		default:
			v, ok := a.(handle)
			if !ok {
				return nil, fmt.Errorf("kernel %s argument %d is a %T, the kernel takes a pointer", k.Name, i, a)
			}
			w[i] = uint64(v)
		}
	}
	return w, nil
}

func (e *hostGPU) launch(name string, gridX, gridY, block int, args ...any) error {
	k, ok := harness.Lookup(name)
	if !ok {
		return fmt.Errorf("%w: launching %s on %s: no such kernel", ErrLaunch, name, e.name())
	}
	w, err := kernelArgs(k, args)
	if err != nil {
		return fmt.Errorf("%w: launching %s on %s: %v", ErrLaunch, name, e.name(), err)
	}
	grid, blk := harness.Dim{X: uint32(gridX), Y: uint32(gridY), Z: 1}, harness.Dim{X: uint32(block), Y: 1, Z: 1}
	if gridX < 1 || gridY < 1 || block < 1 || int64(gridX) > math.MaxUint32 || int64(gridY) > math.MaxUint32 || block > math.MaxUint32 {
		return fmt.Errorf("%w: launching %s (grid %d x %d, %d threads) on %s: empty or oversized", ErrLaunch, name, gridX, gridY, block, e.name())
	}
	shared := staticShared()[name]
	if err := harness.Check(grid, blk, shared, 0); err != nil {
		return fmt.Errorf("%w: launching %s (grid %d x %d, %d threads) on %s: %w", ErrLaunch, name, gridX, gridY, block, e.name(), err)
	}
	e.launches[name]++
	rec := tracer.start(k, grid, blk, shared, w)
	if err := harness.Launch(name, grid, blk, shared, w, harnessMode); err != nil {
		return fmt.Errorf("%w: %v", ErrLaunch, err)
	}
	tracer.finish(rec)
	return nil
}

var harnessMode = func() harness.Mode {
	if os.Getenv("JEIRT_HARNESS_MODE") == "threads" {
		return harness.Threads
	}
	return harness.Fibers
}()

// staticShared is each kernel's static shared memory in bytes, from the
// .shared declarations of the committed PTX (what the device will allocate).
var staticShared = sync.OnceValue(func() map[string]int64 {
	m := map[string]int64{}
	re := regexp.MustCompile(`\.shared \.align \d+ \.b8 _ZZ(\d+)(\w+)\[(\d+)\]`)
	for _, f := range []string{"cbmm", "jeirt", "encoder"} {
		ptx, err := os.ReadFile(filepath.Join("kernels", f+".ptx"))
		if err != nil {
			panic(err)
		}
		for _, s := range re.FindAllStringSubmatch(string(ptx), -1) {
			n, _ := strconv.Atoi(s[1])
			size, _ := strconv.ParseInt(s[3], 10, 64)
			m[s[2][:n]] += size
		}
	}
	return m
})

// launchTracer writes launches to JEIRT_HARNESS_TRACE for harness/replay: the
// kernel, grid, block, static shared memory, arguments (pointers as an
// allocation and an offset), and every allocation the pointers reach before
// and after the launch. It keeps one launch of each kernel per block size
// and small integer arguments (rank, update, transposition flags).
type launchTracer struct {
	mu   sync.Mutex
	w    *bufio.Writer
	f    *os.File
	seen map[string]int
	err  error
}

type traceRecord struct {
	head   []byte
	bases  []uintptr
	before [][]byte
}

var tracer = func() *launchTracer {
	path := os.Getenv("JEIRT_HARNESS_TRACE")
	if path == "" {
		return nil
	}
	f, err := os.Create(path)
	if err != nil {
		panic(err)
	}
	t := &launchTracer{f: f, w: bufio.NewWriter(f), seen: map[string]int{}}
	t.w.WriteString("JHTRACE1")
	return t
}()

func (t *launchTracer) start(k harness.Kernel, grid, block harness.Dim, shared int64, w []uint64) *traceRecord {
	if t == nil {
		return nil
	}
	key := fmt.Sprintf("%s/%d", k.Name, block.X)
	for i, c := range k.Args {
		if c == 's' && w[i] < 16 {
			key += "/" + strconv.FormatUint(w[i], 10)
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	// The replay runs each CUDA thread as an OS thread (under TSan, slowly):
	// small grids only (TestHarnessThreads and the JE-IRT tests launch every
	// kernel on one; scripts/cuda-cpu-check.sh checks that all are there).
	if t.seen[key] >= 1 || int64(grid.X)*int64(grid.Y) > 48 {
		return nil
	}
	t.seen[key]++
	r := &traceRecord{}
	le := binary.LittleEndian
	h := le.AppendUint16(nil, uint16(len(k.Name)))
	h = append(h, k.Name...)
	for _, v := range []uint32{grid.X, grid.Y, grid.Z, block.X, block.Y, block.Z} {
		h = le.AppendUint32(h, v)
	}
	h = le.AppendUint64(h, uint64(shared))
	h = le.AppendUint32(h, uint32(len(w)))
	for i, c := range k.Args {
		if c == 's' || c == 'x' || w[i] == 0 {
			kind := byte(0)
			if c != 's' && c != 'x' {
				kind = 2
			}
			h = append(h, kind)
			h = le.AppendUint64(h, w[i])
			continue
		}
		b, base, err := harness.Bytes(uintptr(w[i]))
		if err != nil {
			t.err = err
			return nil
		}
		idx := -1
		for j, x := range r.bases {
			if x == base {
				idx = j
			}
		}
		if idx < 0 {
			idx = len(r.bases)
			r.bases = append(r.bases, base)
			all, _, _ := harness.Bytes(base)
			r.before = append(r.before, append([]byte(nil), all...))
		}
		_ = b
		h = append(h, 1)
		h = le.AppendUint32(h, uint32(idx))
		h = le.AppendUint64(h, uint64(uintptr(w[i])-base))
	}
	r.head = h
	return r
}

func (t *launchTracer) finish(r *traceRecord) {
	if t == nil || r == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	le := binary.LittleEndian
	t.w.Write(r.head)
	t.w.Write(le.AppendUint32(nil, uint32(len(r.bases))))
	for i, base := range r.bases {
		after, _, _ := harness.Bytes(base)
		t.w.Write(le.AppendUint64(nil, uint64(len(after))))
		t.w.Write(r.before[i])
		t.w.Write(after)
	}
}

func (t *launchTracer) close() error {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := firstErr(t.err, t.w.Flush(), t.f.Close()); err != nil {
		return err
	}
	return nil
}

// The test binary registers the GPU code on the CPU harness as device
// "cuda-harness", so the GPU acceptance tests (agreement_test.go) run on the
// real kernel sources without a GPU.
var host = newHostGPU()

func openHost() (gpu, error) { return host, nil }

func init() {
	backend.Register("cuda-harness", cbmmBackend{device: "cuda-harness", open: openHost})
	backend.Register("cuda-harness", jeirtBackend(openHost))
	backend.Register("cuda-harness", encoderSeam{open: openHost, dense: func(gpu) dense { return hostDense{} }})
}

// kernelNames lists the kernels the Go code launches.
func kernelNames() []string {
	return append(append(append([]string(nil), cbmmKernels...), jeirtKernels...), encoderKernels...)
}

func argLetters(name string) string {
	k, _ := harness.Lookup(name)
	return strings.ToLower(k.Args)
}
