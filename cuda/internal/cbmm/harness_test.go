//go:build cgo

package cbmm

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/cuda/internal/cbmm/cbmmtest"
	"github.com/jeirt/jeirt/cuda/internal/gpu"
	"github.com/jeirt/jeirt/cuda/internal/harness"
	"github.com/jeirt/jeirt/cuda/kernels"
	"github.com/jeirt/jeirt/internal/stress"
	"github.com/jeirt/jeirt/model/synth"
	"github.com/jeirt/jeirt/train/backend"
)

// The tests run the batch code on the kernel sources compiled for the CPU
// (package harness), registered as device "cuda-harness" for the fits that
// train/irt drives, against train's CPU backend.
func init() {
	backend.Register("cuda-harness", Backend{Device: "cuda-harness", Open: func() (gpu.GPU, error) { return harness.NewGPU(), nil }})
}

func TestMain(m *testing.M) { harness.Main(m) }

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
			defer harness.UseMode(mode)()
			var out []float64
			for _, rank := range []int{1, 2} {
				b, err := be.Load(probs, rank, 1, 1)
				if err != nil {
					t.Fatal(err)
				}
				rng := rand.New(rand.NewPCG(3, 3))
				for k, p := range probs {
					th, a, bb := cbmmtest.RandomStart(rng, p.N, p.J, rank)
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
		host := Backend{Device: "test", Open: func() (gpu.GPU, error) { return harness.NewGPU(), nil }}
		cpuBackend, _, err := backend.Lookup[backend.CBMMDevice]("cpu")
		if err != nil {
			t.Fatal(err)
		}
		f, th, cpu := run(host, harness.Fibers), run(host, harness.Threads), run(cpuBackend, harness.Fibers)
		if !slices.Equal(f, th) {
			t.Errorf("batch %d: threads and fibers differ: %.3g relative", bi, cbmmtest.MaxRelDiff(f, th))
		}
		if d := cbmmtest.MaxRelDiff(cpu, f); d > 1e-9 {
			t.Errorf("batch %d: the kernels and the CPU differ by %.3g relative", bi, d)
		}
	}
}

// TestHarnessEveryRank runs every rank's kernels (cbmm_item_pass_r1 to _r8,
// cbmm_model_pass_r1 to _r8: the NNLS and θ solves on the device) for three
// iterations against the CPU fitter on 40 models x 24 items. With
// JEIRT_STRESS=full, ranks 1, 2 and 8 run twice more on the harness, with
// the CUDA threads as fibers and as OS threads (another schedule): the
// parameters must be bit-identical, as the reductions run in a fixed
// order. OS threads are slow (a barrier costs a context switch per thread,
// and rank 8 took nearly all of the test's time, even on 6 models x 5
// items), so by default TestHarnessThreads alone compares the schedules
// (ranks 1 and 2, with reductions across warps).
func TestHarnessEveryRank(t *testing.T) {
	active := []bool{true}
	problem := func(rank int) *backend.CBMMProblem {
		r, _, err := synth.Generate(synth.Options{Kind: "mirt", Models: 40, Items: 24, Rank: rank, Seed: int64(50 + rank)})
		if err != nil {
			t.Fatal(err)
		}
		return backend.NewCBMMProblem(r)
	}
	run := func(p *backend.CBMMProblem, rank int, be backend.CBMMDevice, mode harness.Mode) []float64 {
		defer harness.UseMode(mode)()
		b, err := be.Load([]*backend.CBMMProblem{p}, rank, 1, 1)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		rng := rand.New(rand.NewPCG(uint64(rank), 7))
		th, a, bb := cbmmtest.RandomStart(rng, p.N, p.J, rank)
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
	host := Backend{Device: "test", Open: func() (gpu.GPU, error) { return harness.NewGPU(), nil }}
	cpuBackend, _, err := backend.Lookup[backend.CBMMDevice]("cpu")
	if err != nil {
		t.Fatal(err)
	}
	for rank := 1; rank <= kernels.MaxRank; rank++ {
		p := problem(rank)
		f, cpu := run(p, rank, host, harness.Fibers), run(p, rank, cpuBackend, harness.Fibers)
		if d := cbmmtest.MaxRelDiff(cpu, f); d > 1e-9 {
			t.Errorf("rank %d: the kernels and the CPU differ by %.3g relative", rank, d)
		}
		if stress.Full() && (rank <= 2 || rank == kernels.MaxRank) {
			if th := run(p, rank, host, harness.Threads); !slices.Equal(f, th) {
				t.Errorf("rank %d: threads and fibers differ: %.3g relative", rank, cbmmtest.MaxRelDiff(f, th))
			}
		}
	}
}

// TestHarnessOutOfMemory checks the error a batch too large for the device
// gives, and that a failed load frees what it had allocated.
func TestHarnessOutOfMemory(t *testing.T) {
	g := harness.NewGPU()
	rs := cbmmtest.Problems(t, "2pl", 1, 1)
	p := backend.NewCBMMProblem(rs[0])
	l, _ := newLayout([]*backend.CBMMProblem{p}, 1)
	g.Capacity = l.deviceBytes() - 1
	be := Backend{Device: "test", Open: func() (gpu.GPU, error) { return g, nil }}
	_, err := be.Load([]*backend.CBMMProblem{p}, 1, 1, 1)
	want := fmt.Sprintf("cuda: out of device memory: a batch of 1 cBMM problems (%d cells) needs %s on CPU harness, %s free of %s",
		p.Len(), gpu.MiB(l.deviceBytes()), gpu.MiB(g.Capacity), gpu.MiB(g.Capacity))
	if !errors.Is(err, gpu.ErrOutOfMemory) || err.Error() != want {
		t.Fatalf("err = %v\nwant %s", err, want)
	}
	g.Capacity = l.deviceBytes()
	b, err := be.Load([]*backend.CBMMProblem{p}, 1, 1, 1)
	if err != nil {
		t.Fatalf("load at capacity: %v", err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	g.Capacity = 1 << 10
	if _, err := be.Load([]*backend.CBMMProblem{p}, 1, 1, 1); !errors.Is(err, gpu.ErrOutOfMemory) {
		t.Fatalf("err = %v", err)
	}
	if n, used := g.InUse(); n != 0 || used != 0 {
		t.Fatalf("%d buffers (%d bytes) left after a failed load", n, used)
	}
}

// TestLaunchLimitsAtFullSize runs the launch code at the largest shapes the
// commands use, on a dry device that checks every launch against sm_90's
// limits: cBMM at 1,000 models x 100,000 items (rank 1 and rank 8).
func TestLaunchLimitsAtFullSize(t *testing.T) {
	d := harness.NewDry()
	open := func() (gpu.GPU, error) { return d, nil }
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
		for _, rank := range []int{1, kernels.MaxRank} {
			b, err := Backend{Device: "dry", Open: open}.Load([]*backend.CBMMProblem{p}, rank, 1, 1)
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
			if err := b.(*batch).Iterate(t.Context(), []bool{true}, 1e-6, true, loss, make([]backend.CBMMOutcome, 1)); err != nil {
				t.Fatalf("%d x %d, rank %d: %v", c.models, c.items, rank, err)
			}
			if err := b.(*batch).Revert(0); err != nil {
				t.Fatalf("%d x %d, rank %d: %v", c.models, c.items, rank, err)
			}
		}
	}
	for _, name := range []string{"cbmm_item_pass_r1", fmt.Sprintf("cbmm_item_pass_r%d", kernels.MaxRank)} {
		if got, _ := d.Largest(name); got[0] != 100000 || got[2] != 256 {
			t.Errorf("%s: largest grid %d, block %d; want 100000 and 256", name, got[0], got[2])
		}
	}
	for _, name := range kernels.CBMM.Names {
		if strings.Contains(name, "pass_r") && !strings.HasSuffix(name, "_r1") && !strings.HasSuffix(name, fmt.Sprintf("_r%d", kernels.MaxRank)) {
			continue // the ranks between launch the same grids
		}
		g, ok := d.Largest(name)
		if !ok {
			t.Errorf("kernel %s was not launched", name)
		}
		t.Logf("%-18s largest grid %d x %d, block %d", name, g[0], g[1], g[2])
	}
}
