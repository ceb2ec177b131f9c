//go:build cgo

package cbmm

import (
	"context"
	"encoding/binary"
	"math"
	"testing"

	"github.com/jeirt/jeirt/cuda/internal/gpu"
	"github.com/jeirt/jeirt/cuda/internal/harness"
	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/train/backend"
	"github.com/jeirt/jeirt/train/irt"
)

// fakeDecisions stands in for cbmm_sum_decide on the dry device: K
// problems whose losses fall, except every fourth iteration, when an
// extrapolation overshoots and is rejected; the outcomes are
// backend.CBMMControl's (which the kernel matches bit for bit:
// TestHarnessIterate).
func fakeDecisions(K int, tol float64) func([]uint8) {
	ctl := make([]backend.CBMMControl, K)
	for k := range ctl {
		ctl[k] = backend.NewCBMMControl()
	}
	t := 0
	return func(dst []uint8) {
		if len(dst) != 9*K {
			return
		}
		t++
		for k := range K {
			loss := 1e6 * (1 + 1/float64(t))
			if t%4 == 0 {
				loss *= 2
			}
			out := ctl[k].Next(loss, tol, true)
			binary.LittleEndian.PutUint64(dst[8*k:], math.Float64bits(loss))
			dst[8*K+k] = uint8(out)
		}
	}
}

// costDevice is the device of backend "cuda-cost", the batch code on a dry
// device that counts, for counting whole fits driven by train/irt.
var costDevice *harness.Dry

func init() {
	backend.Register("cuda-cost", Backend{Device: "cuda-cost", Open: func() (gpu.GPU, error) { return costDevice, nil }})
}

// TestCosts counts the device work of a cBMM iteration (1,000 models x
// 100,000 items, ranks 1 and 4, one problem and 25 replicates), without
// running the kernels (on harness.Dry): the
// counts per iteration do not depend on the cells, so the cBMM problem has
// two cells per item, and the device memory is given for the dense matrix
// (10⁸ cells) from the layout's formula. scripts/cuda-cpu-check.sh prints
// the log lines.
func TestCosts(t *testing.T) {
	const models, items = 1000, 100000
	p := &backend.CBMMProblem{N: models, J: items, ItemStart: make([]int32, items+1)}
	for j := range items {
		for e := range 2 {
			p.Cells = append(p.Cells, uint32((j+e)%models)<<1|uint32(e&1))
		}
		p.ItemStart[j+1] = int32(len(p.Cells))
	}
	for _, rank := range []int{1, 4} {
		for _, K := range []int{1, 25} {
			g := harness.NewDry()
			probs := make([]*backend.CBMMProblem, K)
			active := make([]bool, K)
			for k := range probs {
				probs[k], active[k] = p, true
			}
			if K > 1 && rank > 1 {
				continue // 25 replicates of 10⁸ cells do not fit; rank 1 shows the per-problem figures
			}
			b, err := Backend{Device: "cost", Open: func() (gpu.GPU, error) { return g, nil }}.Load(probs, rank, 1, 1)
			if err != nil {
				t.Fatal(err)
			}
			loss := make([]float64, K)
			if err := b.Step(t.Context(), active, loss); err != nil { // the first uploads the active flags
				t.Fatal(err)
			}
			before := g.Counts()
			const iters = 4
			for range iters {
				if err := b.Step(t.Context(), active, loss); err != nil {
					t.Fatal(err)
				}
			}
			d := g.Counts().Minus(before)
			if d.Launches != 3*iters || d.Up != 0 || d.Down != iters || d.DownBytes != int64(8*K*iters) {
				t.Errorf("cBMM rank %d, %d problems: %+v over %d iterations; want 3 launches, no copy up and one copy of %d bytes down each", rank, K, d, iters, 8*K)
			}
			dense := batchBytes(int64(K)*models*items, int64(K)*models, int64(K)*items, int64(K), int64(rank))
			t.Logf("cBMM %d x %d rank %d, %d problem(s): passes per iteration %d launches, %d B up, %d B down (%.1f B per problem), %d synchronisation(s); device memory %s (dense)",
				models, items, rank, K, d.Launches/iters, d.UpBytes/iters, d.DownBytes/iters, float64(d.UpBytes+d.DownBytes)/iters/float64(K), d.Down/iters, gpu.MiB(dense))
			b.Close()
		}
	}

	// Whole accelerated fits through train/irt at 1,000 x 100,000 (the SVD
	// start on the host, Load, the first Set, the iterations with their
	// extrapolations, rejections and the device's decisions, the final Loss,
	// Revert and Get), on the counting device with the decisions of
	// fakeDecisions: run for 8 and for 16 iterations, the difference is the
	// cost of 8 iterations, the rest the cost of starting and finishing.
	r := &model.Responses{Models: make([]string, models), Items: make([]string, items)}
	for j := range items {
		for e := range 2 {
			r.Model = append(r.Model, int32((j+e)%models))
			r.Item = append(r.Item, int32(j))
			r.Label = append(r.Label, uint8(e&1))
		}
	}
	for _, rank := range []int{1, 4} {
		for _, K := range []int{1, 4} {
			rs := make([]*model.Responses, K)
			for k := range rs {
				rs[k] = r
			}
			fit := func(iters int) harness.Counts {
				costDevice = harness.NewDry()
				costDevice.Report = fakeDecisions(K, 1e-300)
				c := irt.CBMM{Rank: rank, Tol: 1e-300, MaxIter: iters, Accelerate: true, Device: "cuda-cost", Threads: 2}
				out, err := c.FitBatch(context.Background(), rs)
				if err != nil {
					t.Fatal(err)
				}
				if out[0].Iterations != iters-iters/4 {
					t.Fatalf("%d kept steps in %d iterations, want %d", out[0].Iterations, iters, iters-iters/4)
				}
				return costDevice.Counts()
			}
			short, long := fit(8), fit(16)
			per := long.Minus(short)
			once := short.Minus(per)
			perProblem := float64(per.UpBytes+per.DownBytes) / 8 / float64(K)
			if per.Launches != 4*8 || per.Up != 0 || per.Down != 8 || per.DownBytes != int64(9*K*8) {
				t.Errorf("accelerated fit, rank %d, %d problems: %+v over 8 iterations; want 4 launches, no copy up and one copy of %d bytes down each", rank, K, per, 9*K)
			}
			if perProblem > 64 || per.Launches > 8*8 {
				t.Errorf("accelerated fit, rank %d, %d problems: %.1f B per problem per iteration, %d launches per iteration; want at most 64 and 8", rank, K, perProblem, per.Launches/8)
			}
			t.Logf("cBMM whole fit %d x %d rank %d, %d problem(s), accelerated, as train/irt drives it: per iteration %d launches, %d B up, %d B down (%.1f B per problem), %d synchronisation(s); once per fit %d launches, %d copies up (%.1f MiB), %d copies down (%.1f MiB)",
				models, items, rank, K, per.Launches/8, per.UpBytes/8, per.DownBytes/8, perProblem, per.Down/8,
				once.Launches, once.Up, float64(once.UpBytes)/(1<<20), once.Down, float64(once.DownBytes)/(1<<20))
		}
	}
}
