//go:build cgo

package harness

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"

	"github.com/jeirt/jeirt/cuda/internal/gpu"
)

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

func (t *launchTracer) start(k Kernel, grid, block Dim, shared int64, w []uint64) *traceRecord {
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
		b, base, err := Bytes(uintptr(w[i]))
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
			all, _, _ := Bytes(base)
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
		after, _, _ := Bytes(base)
		t.w.Write(le.AppendUint64(nil, uint64(len(after))))
		t.w.Write(r.before[i])
		t.w.Write(after)
	}
}

// Main is the TestMain of a package whose tests launch on the harness: it
// runs the tests, then ends the JEIRT_HARNESS_TRACE file (CloseTrace), and
// exits with the tests' status (1 when the trace could not be written).
func Main(m *testing.M) {
	code := m.Run()
	if err := CloseTrace(); err != nil {
		fmt.Fprintln(os.Stderr, "harness trace:", err)
		code = 1
	}
	os.Exit(code)
}

// CloseTrace ends the JEIRT_HARNESS_TRACE file (Main calls it after the
// tests); without a trace it does nothing.
func CloseTrace() error {
	t := tracer
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return gpu.FirstErr(t.err, t.w.Flush(), t.f.Close())
}
