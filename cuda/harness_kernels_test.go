//go:build cgo

package cuda

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/cuda/internal/harness"
	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/synth"
	"github.com/jeirt/jeirt/train/backend"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if err := tracer.close(); err != nil {
		fmt.Fprintln(os.Stderr, "harness trace:", err)
		code = 1
	}
	os.Exit(code)
}

// TestHarnessCoversEveryKernel: the harness compiles every __global__ of
// kernels/*.cu, the Go side launches exactly those, and the kernels' argument
// types as the compiler sees them match the PTX's parameter counts.
func TestHarnessCoversEveryKernel(t *testing.T) {
	var inSource []string
	for _, f := range []string{"cbmm", "jeirt", "encoder"} {
		src, err := os.ReadFile(filepath.Join("kernels", f+".cu"))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range regexp.MustCompile(`__global__ void (\w+)\(`).FindAllStringSubmatch(string(src), -1) {
			inSource = append(inSource, m[1])
		}
	}
	var compiled []string
	for _, k := range harness.Kernels() {
		compiled = append(compiled, k.Name)
	}
	launched := kernelNames()
	for _, s := range [][]string{inSource, compiled, launched} {
		slices.Sort(s)
	}
	if !slices.Equal(inSource, compiled) || !slices.Equal(inSource, launched) {
		t.Fatalf("kernels in the .cu sources %v, compiled into the harness %v, launched by Go %v", inSource, compiled, launched)
	}
}

func TestHarnessSgemm(t *testing.T) { checkSgemm(t, newHostGPU()) }

// TestHarnessStepsMatchCPU: the kernels' iteration and the CPU's, step by
// step, on shapes whose items and models are not multiples of a warp.
func TestHarnessStepsMatchCPU(t *testing.T) { checkStepsMatchCPU(t, "cuda-harness", 1e-11, 10) }

// TestHarnessCBMMAgreesWithCPU is the acceptance test of batched cBMM on the
// real kernel sources.
func TestHarnessCBMMAgreesWithCPU(t *testing.T) {
	checkCBMMAgreement(t, "cuda-harness", 1e-10, 15)
}

// TestHarnessJEIRTAgreesWithCPU is the acceptance test of the JE-IRT step on
// the real kernel sources (float32 with atomic gradient sums).
func TestHarnessJEIRTAgreesWithCPU(t *testing.T) {
	checkJEIRTAgreement(t, "cuda-harness", 1e-4)
}

// TestHarnessThreads runs cBMM steps with every CUDA thread an OS thread and
// checks that they give bit for bit what the fibers give (the kernels do not
// depend on the order in which a block's threads run between barriers), and
// what train's CPU backend gives, at rank 1 and 2. One batch has long items
// (128-thread blocks in the item pass), the other long models (64-thread
// blocks in the model pass), so block_sum's reductions across warps run too.
func TestHarnessThreads(t *testing.T) {
	// Small: a block barrier of real threads costs a context switch each.
	batches := [][][2]int{{{130, 4}}, {{6, 60}}}
	for bi, shapes := range batches {
		var probs []*backend.CBMMProblem
		for k, shape := range shapes {
			r, _, err := synth.Generate(synth.Options{Kind: "mirt", Models: shape[0], Items: shape[1], Rank: 2, Seed: int64(30 + k)})
			if err != nil {
				t.Fatal(err)
			}
			probs = append(probs, backend.NewCBMMProblem(r))
		}
		active := make([]bool, len(probs))
		for k := range active {
			active[k] = true
		}
		run := func(be backend.CBMMDevice, mode harness.Mode) []float64 {
			old := harnessMode
			harnessMode = mode
			defer func() { harnessMode = old }()
			var out []float64
			for _, rank := range []int{1, 2} {
				b, err := be.Load(probs, rank, 1, 1)
				if err != nil {
					t.Fatal(err)
				}
				rng := rand.New(rand.NewPCG(3, 3))
				for k, p := range probs {
					th, a, bb := randomStart(rng, p.N, p.J, rank)
					b.Set(k, th, a, bb)
				}
				loss := make([]float64, len(probs))
				if err := b.Step(t.Context(), active, loss); err != nil {
					t.Fatal(err)
				}
				out = append(out, loss...)
				for k, p := range probs {
					th, a, bb := make([]float64, p.N*rank), make([]float64, p.J*rank), make([]float64, p.J)
					b.Get(k, th, a, bb)
					out = append(append(append(out, th...), a...), bb...)
				}
				if err := b.Close(); err != nil {
					t.Fatal(err)
				}
			}
			return out
		}
		host := cbmmBackend{device: "test", open: func() (gpu, error) { return newHostGPU(), nil }}
		cpuBackend, _, err := backend.Lookup[backend.CBMMDevice]("cpu")
		if err != nil {
			t.Fatal(err)
		}
		f, th, cpu := run(host, harness.Fibers), run(host, harness.Threads), run(cpuBackend, harness.Fibers)
		if !slices.Equal(f, th) {
			t.Errorf("batch %d: threads and fibers differ: %.3g relative", bi, maxRelDiff(f, th))
		}
		if d := maxRelDiff(cpu, f); d > 1e-9 {
			t.Errorf("batch %d: the kernels and the CPU differ by %.3g relative", bi, d)
		}
	}
}

// TestHarnessEveryRank runs every rank's kernels (cbmm_item_pass_r1 to _r8,
// cbmm_model_pass_r1 to _r8: the NNLS and θ solves on the device) for three
// iterations against the CPU fitter, and (ranks 1, 2 and 8, OS threads being
// slow) twice on the harness, with the CUDA threads as fibers and as OS
// threads (another schedule): the parameters must be bit-identical, as the
// reductions run in a fixed order.
func TestHarnessEveryRank(t *testing.T) {
	active := []bool{true}
	for rank := 1; rank <= MaxRank; rank++ {
		r, _, err := synth.Generate(synth.Options{Kind: "mirt", Models: 40, Items: 24, Rank: rank, Seed: int64(50 + rank)})
		if err != nil {
			t.Fatal(err)
		}
		probs := []*backend.CBMMProblem{backend.NewCBMMProblem(r)}
		p := probs[0]
		run := func(be backend.CBMMDevice, mode harness.Mode) []float64 {
			old := harnessMode
			harnessMode = mode
			defer func() { harnessMode = old }()
			b, err := be.Load(probs, rank, 1, 1)
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			rng := rand.New(rand.NewPCG(uint64(rank), 7))
			th, a, bb := randomStart(rng, p.N, p.J, rank)
			b.Set(0, th, a, bb)
			var out []float64
			loss := make([]float64, 1)
			for range 3 {
				if err := b.Step(t.Context(), active, loss); err != nil {
					t.Fatal(err)
				}
				out = append(out, loss[0])
			}
			b.Get(0, th, a, bb)
			return append(append(append(out, th...), a...), bb...)
		}
		host := cbmmBackend{device: "test", open: func() (gpu, error) { return newHostGPU(), nil }}
		cpuBackend, _, err := backend.Lookup[backend.CBMMDevice]("cpu")
		if err != nil {
			t.Fatal(err)
		}
		f, cpu := run(host, harness.Fibers), run(cpuBackend, harness.Fibers)
		if rank <= 2 || rank == MaxRank {
			if th := run(host, harness.Threads); !slices.Equal(f, th) {
				t.Errorf("rank %d: threads and fibers differ: %.3g relative", rank, maxRelDiff(f, th))
			}
		}
		if d := maxRelDiff(cpu, f); d > 1e-9 {
			t.Errorf("rank %d: the kernels and the CPU differ by %.3g relative", rank, d)
		}
	}
}

// TestHarnessOutOfMemory checks the error a batch too large for the device
// gives, and that a failed load frees what it had allocated.
func TestHarnessOutOfMemory(t *testing.T) {
	g := newHostGPU()
	rs := testProblems(t, "2pl", 1, 1)
	p := backend.NewCBMMProblem(rs[0])
	l, _ := newCBMMLayout([]*backend.CBMMProblem{p}, 1)
	g.capacity = l.deviceBytes() - 1
	be := cbmmBackend{device: "test", open: func() (gpu, error) { return g, nil }}
	_, err := be.Load([]*backend.CBMMProblem{p}, 1, 1, 1)
	want := fmt.Sprintf("cuda: out of device memory: a batch of 1 cBMM problems (%d cells) needs %s on CPU harness, %s free of %s",
		p.Len(), mib(l.deviceBytes()), mib(g.capacity), mib(g.capacity))
	if !errors.Is(err, ErrOutOfMemory) || err.Error() != want {
		t.Fatalf("err = %v\nwant %s", err, want)
	}
	g.capacity = l.deviceBytes()
	b, err := be.Load([]*backend.CBMMProblem{p}, 1, 1, 1)
	if err != nil {
		t.Fatalf("load at capacity: %v", err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	g.capacity = 1 << 10
	if _, err := be.Load([]*backend.CBMMProblem{p}, 1, 1, 1); !errors.Is(err, ErrOutOfMemory) {
		t.Fatalf("err = %v", err)
	}
	if len(g.mem) != 0 || g.used != 0 {
		t.Fatalf("%d buffers (%d bytes) left after a failed load", len(g.mem), g.used)
	}
}

// TestHarnessJEIRTBatchErrors checks the batch validation messages.
func TestHarnessJEIRTBatchErrors(t *testing.T) {
	p := &backend.JEIRTParams{InputDim: 3, Hidden: 4, Dim: 2, NumModels: 2, NumItems: 2,
		W1: make([]float32, 12), C1: make([]float32, 4), W2: make([]float32, 8), C2: make([]float32, 2), M: make([]float32, 4)}
	s, err := newJEIRTStepper(newHostGPU(), p, backend.AdamW{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, c := range []struct {
		b    backend.JEIRTBatch
		want string
	}{
		{backend.JEIRTBatch{X: make([]float32, 5), Item: []int32{0, 1}, Row: []int32{0}, Model: []int32{0}, Label: []float32{1}}, "cuda: JE-IRT batch has 5 encoder values for 2 rows of dimension 3"},
		{backend.JEIRTBatch{X: make([]float32, 3), Item: []int32{0}, Row: []int32{1}, Model: []int32{0}, Label: []float32{1}}, "cuda: JE-IRT batch pair 0 uses row 1 of 1"},
		{backend.JEIRTBatch{X: make([]float32, 3), Item: []int32{0}, Row: []int32{0}, Model: []int32{2}, Label: []float32{1}}, "cuda: JE-IRT batch pair 0 has model 2 of 2"},
		{backend.JEIRTBatch{X: make([]float32, 3), Item: []int32{0}, Mask: make([]float32, 3), Row: []int32{0}, Model: []int32{0}, Label: []float32{1}}, "cuda: JE-IRT batch has a dropout mask of 3 values for 1 rows x 4 hidden units"},
	} {
		if _, err := s.Step(&c.b, 0.1); err == nil || err.Error() != c.want {
			t.Errorf("err = %v, want %s", err, c.want)
		}
	}
}

// TestHarnessLaunchErrors: launches over sm_90's limits and with arguments
// of the wrong type fail before running, naming the kernel and the limit.
func TestHarnessLaunchErrors(t *testing.T) {
	g := newHostGPU()
	for _, c := range []struct {
		name          string
		gridX, gridY  int
		block         int
		args          []any
		want          string
		checkLimitErr bool
	}{
		{"jeirt_fwd2", 1, 1, 2048, []any{handle(0), handle(0), handle(0), handle(0), handle(0), handle(0), 0, 0, 0}, "launching jeirt_fwd2 (grid 1 x 1, 2048 threads) on CPU harness: over sm_90's launch limits: blockDim.x 2048 is over sm_90's limit of 1024", true},
		{"sgemm", 1, 70000, 256, []any{handle(0), handle(0), handle(0), 0, 0, 0, false, false, 1.0, 0.0}, "gridDim.y 70000 is over sm_90's limit of 65535", true},
		{"jeirt_fwd2", 1, 1, 32, []any{handle(0), handle(0), handle(0), handle(0), handle(0), handle(0), 1.5, 0, 0}, "launching jeirt_fwd2 on CPU harness: kernel jeirt_fwd2 argument 6 is a float64, the kernel takes a long long", false},
		{"jeirt_fwd2", 1, 1, 32, []any{handle(0), 0, 0}, "kernel jeirt_fwd2 takes 9 arguments, got 3", false},
	} {
		err := g.launch(c.name, c.gridX, c.gridY, c.block, c.args...)
		if !errors.Is(err, ErrLaunch) || !strings.Contains(err.Error(), c.want) || c.checkLimitErr != errors.Is(err, harness.ErrLimit) && c.checkLimitErr {
			t.Errorf("err = %v\nwant %s", err, c.want)
		}
	}
	if n := staticShared()["sgemm"]; n != 2*16*68*4 {
		t.Errorf("sgemm's static shared memory from the PTX: %d bytes, want %d", n, 2*16*68*4)
	}
	if n := staticShared()["cbmm_item_pass_r1"]; n != 256 {
		t.Errorf("cbmm_item_pass_r1's static shared memory from the PTX: %d bytes, want 256", n)
	}
	// Rank 8: 32 warps' partial sums of 54 + 1 entries, the sums, and the
	// NNLS work space of 9 unknowns.
	if n, want := staticShared()["cbmm_item_pass_r8"], int64(8*(33*55+2*81+6*9)); n != want {
		t.Errorf("cbmm_item_pass_r8's static shared memory from the PTX: %d bytes, want %d", n, want)
	}
}

// dryGPU runs the batch and stepper code without memory or kernels: every
// launch is only checked, against the kernel's signature and sm_90's limits,
// and recorded. It sizes launch configurations at full scale cheaply.
type dryGPU struct {
	next     handle
	launches map[string][3]int // per kernel: the largest grid x, grid y and block
	err      error
}

func (d *dryGPU) name() string                  { return "dry run" }
func (d *dryGPU) do(f func() error) error       { return f() }
func (d *dryGPU) free(handle) error             { return nil }
func (d *dryGPU) checkFree(string, int64) error { return nil }
func (d *dryGPU) htod(handle, any) error        { return nil }
func (d *dryGPU) dtoh(any, handle) error        { return nil }
func (d *dryGPU) memset0(handle, int64) error   { return nil }
func (d *dryGPU) alloc(_ string, n int64) (handle, error) {
	d.next += 1 << 40
	return d.next, nil
}

func (d *dryGPU) launch(name string, gridX, gridY, block int, args ...any) error {
	k, ok := harness.Lookup(name)
	if !ok {
		return fmt.Errorf("no kernel %s", name)
	}
	if _, err := kernelArgs(k, args); err != nil {
		return err
	}
	if int64(gridX) > math.MaxUint32 || int64(gridY) > math.MaxUint32 {
		return fmt.Errorf("launching %s: grid %d x %d does not fit 32 bits", name, gridX, gridY)
	}
	if err := harness.Check(harness.Dim{X: uint32(gridX), Y: uint32(gridY), Z: 1}, harness.Dim{X: uint32(block), Y: 1, Z: 1}, staticShared()[name], 0); err != nil {
		return fmt.Errorf("launching %s (grid %d x %d, %d threads): %w", name, gridX, gridY, block, err)
	}
	m := d.launches[name]
	d.launches[name] = [3]int{max(m[0], gridX), max(m[1], gridY), max(m[2], block)}
	return nil
}

// TestLaunchLimitsAtFullSize runs the launch code at the largest shapes the
// commands use, on a dry device that checks every launch against sm_90's
// limits: cBMM at 1,000 models x 100,000 items (rank 1 and rank 8), and
// JE-IRT steps at EmbedLLM size (768-d inputs, hidden 1,536, d 256, 112
// models, 36,054 items with residuals, 512-pair batches).
func TestLaunchLimitsAtFullSize(t *testing.T) {
	d := &dryGPU{launches: map[string][3]int{}}
	open := func() (gpu, error) { return d, nil }
	// The grids depend on the numbers of items and models; the blocks on the
	// mean cells per item, up to 256 threads from 193 cells on.
	for _, c := range []struct{ models, items, perItem int }{{1000, 100000, 2}, {1000, 500, 200}} {
		p := &backend.CBMMProblem{N: c.models, J: c.items, ItemStart: make([]int32, c.items+1)}
		for j := range c.items {
			for e := range c.perItem {
				p.Cells = append(p.Cells, uint32((j+e)%c.models)<<1|uint32(e&1))
			}
			p.ItemStart[j+1] = int32(len(p.Cells))
		}
		for _, rank := range []int{1, MaxRank} {
			b, err := cbmmBackend{device: "dry", open: open}.Load([]*backend.CBMMProblem{p}, rank, 1, 1)
			if err != nil {
				t.Fatal(err)
			}
			loss := make([]float64, 1)
			if err := b.Loss(t.Context(), []bool{true}, loss); err != nil {
				t.Fatalf("%d x %d, rank %d: %v", c.models, c.items, rank, err)
			}
			if err := b.Step(t.Context(), []bool{true}, loss); err != nil {
				t.Fatalf("%d x %d, rank %d: %v", c.models, c.items, rank, err)
			}
			if err := b.(*cbmmBatch).Iterate(t.Context(), []bool{true}, 1e-6, true, loss, make([]backend.CBMMOutcome, 1)); err != nil {
				t.Fatalf("%d x %d, rank %d: %v", c.models, c.items, rank, err)
			}
			if err := b.(*cbmmBatch).Revert(0); err != nil {
				t.Fatalf("%d x %d, rank %d: %v", c.models, c.items, rank, err)
			}
		}
	}
	for _, name := range []string{"cbmm_item_pass_r1", fmt.Sprintf("cbmm_item_pass_r%d", MaxRank)} {
		if got := d.launches[name]; got[0] != 100000 || got[2] != 256 {
			t.Errorf("%s: largest grid %d, block %d; want 100000 and 256", name, got[0], got[2])
		}
	}
	const D, H, dim, N, J, U = 768, 1536, 256, 112, 36054, 512
	p := &backend.JEIRTParams{InputDim: D, Hidden: H, Dim: dim, NumModels: N, NumItems: J, ResidualL2: 0.01,
		W1: make([]float32, H*D), C1: make([]float32, H), W2: make([]float32, dim*H), C2: make([]float32, dim),
		M: make([]float32, N*dim), R: make([]float32, J*dim)}
	s, err := newJEIRTStepper(d, p, backend.AdamW{})
	if err != nil {
		t.Fatal(err)
	}
	b := &backend.JEIRTBatch{X: make([]float32, U*D), Item: make([]int32, U), Mask: make([]float32, U*H),
		Row: make([]int32, U), Model: make([]int32, U), Label: make([]float32, U)}
	for u := range U {
		b.Item[u], b.Row[u], b.Model[u] = int32(u*70), int32(u), int32(u%N)
	}
	if _, err := s.Step(b, 1e-3); err != nil {
		t.Fatal(err)
	}
	// Validation: every item's question embedding and 10% of the cells.
	var cells backend.JEIRTCells
	for k := range N * J / 10 {
		cells.Item, cells.Model, cells.Label = append(cells.Item, int32(k%J)), append(cells.Model, int32(k%N)), append(cells.Label, 1)
	}
	if err := firstErr(s.SetFeatures(make([]float32, J*D)), s.SetEvalCells([]backend.JEIRTCells{cells})); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Evaluate(nil, nil); err != nil {
		t.Fatal(err)
	}
	for _, name := range append(append([]string(nil), cbmmKernels...), jeirtKernels...) {
		if name == "sgemm" {
			continue // the text encoder's
		}
		if strings.HasPrefix(name, "cbmm_") && strings.Contains(name, "pass_r") && !strings.HasSuffix(name, "_r1") && !strings.HasSuffix(name, fmt.Sprintf("_r%d", MaxRank)) {
			continue // the ranks between launch the same grids
		}
		g, ok := d.launches[name]
		if !ok {
			t.Errorf("kernel %s was not launched", name)
		}
		t.Logf("%-16s largest grid %d x %d, block %d", name, g[0], g[1], g[2])
	}
}

// TestHarnessJEIRTDeterministic runs the same JE-IRT steps twice, with the
// CUDA threads as fibers and as OS threads (another schedule): the
// parameters must be bit-identical, as every gradient sum has one writer
// adding its terms in the batch's order (no float atomics).
func TestHarnessJEIRTDeterministic(t *testing.T) {
	const D, H, dim, N, J, U, B = 16, 32, 8, 4, 10, 8, 24
	rng := rand.New(rand.NewPCG(5, 9))
	params := func() *backend.JEIRTParams {
		r := rand.New(rand.NewPCG(1, 2))
		fill := func(n int) []float32 {
			x := make([]float32, n)
			for i := range x {
				x[i] = float32(r.NormFloat64() * 0.3)
			}
			return x
		}
		return &backend.JEIRTParams{InputDim: D, Hidden: H, Dim: dim, NumModels: N, NumItems: J, ResidualL2: 0.01,
			W1: fill(H * D), C1: fill(H), W2: fill(dim * H), C2: fill(dim), M: fill(N * dim), R: fill(J * dim)}
	}
	var batches []*backend.JEIRTBatch
	for range 3 {
		b := &backend.JEIRTBatch{X: make([]float32, U*D), Item: make([]int32, U), Mask: make([]float32, U*H),
			Row: make([]int32, B), Model: make([]int32, B), Label: make([]float32, B)}
		for i := range b.X {
			b.X[i] = float32(rng.NormFloat64())
		}
		for i := range b.Mask {
			if rng.Float64() < 0.8 {
				b.Mask[i] = 1.25
			}
		}
		for u := range U {
			b.Item[u] = int32(rng.IntN(J)) // items may repeat across rows
		}
		for k := range B {
			b.Row[k], b.Model[k], b.Label[k] = int32(rng.IntN(U)), int32(rng.IntN(N)), float32(rng.IntN(2))
		}
		batches = append(batches, b)
	}
	run := func(mode harness.Mode) []float32 {
		old := harnessMode
		harnessMode = mode
		defer func() { harnessMode = old }()
		s, err := newJEIRTStepper(newHostGPU(), params(), backend.AdamW{WeightDecay: 0.01})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		var out []float32
		for _, b := range batches {
			loss, err := s.Step(b, 1e-2)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, float32(loss))
		}
		for _, x := range s.Params().Slices() {
			out = append(out, x...)
		}
		return out
	}
	f, th := run(harness.Fibers), run(harness.Threads)
	for i := range f {
		if math.Float32bits(f[i]) != math.Float32bits(th[i]) {
			t.Fatalf("value %d: fibers %v, threads %v: not bit-identical", i, f[i], th[i])
		}
	}
}

// TestHarnessJEIRTEpochDeterministic runs two epochs of a schedule with
// dropout through Epoch (the masks drawn on the device), with the CUDA
// threads as fibers, again as fibers, and as OS threads (another schedule),
// and through Step with the masks drawn on the host
// (backend.JEIRTSchedule.Batch): the losses and parameters must be
// bit-identical every time.
func TestHarnessJEIRTEpochDeterministic(t *testing.T) {
	const D, H, dim, N, J = 16, 32, 8, 4, 10
	rng := rand.New(rand.NewPCG(3, 4))
	params := func() *backend.JEIRTParams {
		r := rand.New(rand.NewPCG(1, 2))
		fill := func(n int) []float32 {
			x := make([]float32, n)
			for i := range x {
				x[i] = float32(r.NormFloat64() * 0.3)
			}
			return x
		}
		return &backend.JEIRTParams{InputDim: D, Hidden: H, Dim: dim, NumModels: N, NumItems: J, ResidualL2: 0.01,
			W1: fill(H * D), C1: fill(H), W2: fill(dim * H), C2: fill(dim), M: fill(N * dim), R: fill(J * dim)}
	}
	feats := make([]float32, J*D)
	for i := range feats {
		feats[i] = float32(rng.NormFloat64())
	}
	sc := &backend.JEIRTSchedule{RowStart: []int{0}, PairStart: []int{0}, Dropout: backend.JEIRTDropout{P: 0.3, Seed: 11}}
	for _, st := range [][2]int{{8, 24}, {3, 3}, {70, 90}} { // rows, pairs; 70 rows take two row tiles
		U, B := st[0], st[1]
		for range U {
			sc.Item = append(sc.Item, int32(rng.IntN(J))) // items repeat across rows
		}
		for range B {
			sc.Row = append(sc.Row, int32(rng.IntN(U)))
			sc.Model = append(sc.Model, int32(rng.IntN(N)))
			sc.Label = append(sc.Label, float32(rng.IntN(2)))
		}
		sc.RowStart = append(sc.RowStart, len(sc.Item))
		sc.PairStart = append(sc.PairStart, len(sc.Row))
	}
	run := func(mode harness.Mode, epochs bool) []float32 {
		old := harnessMode
		harnessMode = mode
		defer func() { harnessMode = old }()
		s, err := newJEIRTStepper(newHostGPU(), params(), backend.AdamW{WeightDecay: 0.01})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if err := s.SetFeatures(feats); err != nil {
			t.Fatal(err)
		}
		var out []float32
		sc := *sc
		var b *backend.JEIRTBatch
		for e := range 2 {
			sc.FirstStep = int64(e * sc.Steps())
			if epochs {
				loss, err := s.Epoch(t.Context(), &sc, 1e-2, nil)
				if err != nil {
					t.Fatal(err)
				}
				for _, l := range loss {
					out = append(out, float32(l))
				}
				continue
			}
			for k := range sc.Steps() {
				b = sc.Batch(k, feats, D, H, b)
				l, err := s.Step(b, 1e-2)
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, float32(l))
			}
		}
		for _, x := range s.Params().Slices() {
			out = append(out, x...)
		}
		return out
	}
	want := run(harness.Fibers, true)
	for _, c := range []struct {
		what   string
		mode   harness.Mode
		epochs bool
	}{{"Epoch, fibers again", harness.Fibers, true}, {"Epoch, OS threads", harness.Threads, true}, {"Step with host masks", harness.Fibers, false}} {
		got := run(c.mode, c.epochs)
		for i := range want {
			if math.Float32bits(want[i]) != math.Float32bits(got[i]) {
				t.Fatalf("%s: value %d is %v, first run %v: not bit-identical", c.what, i, got[i], want[i])
			}
		}
	}
}

// TestHarnessJEIRTEvaluate scores cell sets on the device (Evaluate) and on
// the host (model.JEIRT's question embeddings plus the residual, model.Logit,
// the same loss and accuracy as train/jeirt's validation).
func TestHarnessJEIRTEvaluate(t *testing.T) {
	const D, H, dim, N, J = 16, 32, 8, 4, 10
	rng := rand.New(rand.NewPCG(8, 9))
	fill := func(n int, s float64) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(rng.NormFloat64() * s)
		}
		return x
	}
	p := &backend.JEIRTParams{InputDim: D, Hidden: H, Dim: dim, NumModels: N, NumItems: J, ResidualL2: 0.01,
		W1: fill(H*D, 0.3), C1: fill(H, 0.3), W2: fill(dim*H, 0.3), C2: fill(dim, 0.3), M: fill(N*dim, 1), R: fill(J*dim, 0.1)}
	feats := fill(J*D, 1)
	var sets []backend.JEIRTCells
	for _, n := range []int{300, 0, 5} { // 300 cells: 38 blocks of 8 warps
		var c backend.JEIRTCells
		for range n {
			c.Item = append(c.Item, int32(rng.IntN(J)))
			c.Model = append(c.Model, int32(rng.IntN(N)))
			c.Label = append(c.Label, float32(rng.IntN(2)))
		}
		sets = append(sets, c)
	}
	s, err := newJEIRTStepper(newHostGPU(), p.Clone(), backend.AdamW{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := firstErr(s.SetFeatures(feats), s.SetEvalCells(sets)); err != nil {
		t.Fatal(err)
	}
	loss, acc, err := s.Evaluate(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := &model.JEIRT{InputDim: D, Hidden: H, Dim: dim, W1: p.W1, C1: p.C1, W2: p.W2, C2: p.C2}
	q := m.QuestionEmbeddings(feats, J)
	for k := range q {
		q[k] += p.R[k]
	}
	for k, c := range sets {
		if len(c.Item) == 0 {
			if !math.IsNaN(loss[k]) || !math.IsNaN(acc[k]) {
				t.Errorf("set %d (empty): loss %v, accuracy %v; want NaN", k, loss[k], acc[k])
			}
			continue
		}
		var wantLoss, right float64
		near := 0 // cells whose logit is too close to 0 for the accuracy to be sure
		for i := range c.Item {
			j, mi := int(c.Item[i]), int(c.Model[i])
			z := model.Logit(q[j*dim:(j+1)*dim], p.M[mi*dim:(mi+1)*dim])
			y := float64(c.Label[i])
			wantLoss += model.BCE(z, y)
			if (z >= 0) == (y == 1) {
				right++
			}
			if math.Abs(z) < 1e-5 {
				near++
			}
		}
		n := float64(len(c.Item))
		wantLoss, right = wantLoss/n, right/n
		if rel := math.Abs(loss[k]-wantLoss) / wantLoss; !(rel < 1e-6) {
			t.Errorf("set %d: loss %.10g on the device, %.10g on the host (relative %.2g)", k, loss[k], wantLoss, rel)
		}
		if math.Abs(acc[k]-right)*n > float64(near) {
			t.Errorf("set %d: accuracy %v on the device, %v on the host", k, acc[k], right)
		}
		t.Logf("set %d, %d cells: loss %.10g device, %.10g host; accuracy %.4f device, %.4f host", k, len(c.Item), loss[k], wantLoss, acc[k], right)
	}
}
