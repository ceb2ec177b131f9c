package cuda

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/jeirt/jeirt/cuda/internal/cbmm/cbmmtest"
	"github.com/jeirt/jeirt/cuda/internal/gpu"
	"github.com/jeirt/jeirt/train/backend"
)

// checkStepsMatchCPU steps the batch of device next to train's CPU backend
// from the same random start, with one problem going inactive half-way:
// losses must agree within tol relative at every iteration, and the
// parameters at the end.
func checkStepsMatchCPU(t *testing.T, device string, tol float64, iters int) {
	for _, tc := range []struct {
		kind  string
		rank  int
		sigma float64
	}{{"2pl", 1, 1}, {"mirt", 2, 1.7}, {"mirt", 3, 1}} {
		t.Run(fmt.Sprintf("%s/rank%d", tc.kind, tc.rank), func(t *testing.T) {
			rs := cbmmtest.Problems(t, tc.kind, tc.rank, 1, 2, 3)
			probs := make([]*backend.CBMMProblem, len(rs))
			for k, r := range rs {
				probs[k] = backend.NewCBMMProblem(r)
			}
			load := func(dev string) backend.CBMMBatch {
				be, _, err := backend.Lookup[backend.CBMMDevice](dev)
				if err != nil {
					t.Fatal(err)
				}
				b, err := be.Load(probs, tc.rank, tc.sigma, 2)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() {
					if err := b.Close(); err != nil {
						t.Error(err)
					}
				})
				return b
			}
			cpu, dev := load("cpu"), load(device)
			rng := rand.New(rand.NewPCG(7, 7))
			for k, p := range probs {
				th, a, b := cbmmtest.RandomStart(rng, p.N, p.J, tc.rank)
				cpu.Set(k, th, a, b)
				dev.Set(k, th, a, b)
			}
			active := []bool{true, true, true}
			lc, ld := make([]float64, 3), make([]float64, 3)
			for it := 0; it < iters; it++ {
				if it == iters/2 {
					active[1] = false
				}
				if err := cpu.Step(context.Background(), active, lc); err != nil {
					t.Fatal(err)
				}
				if err := dev.Step(context.Background(), active, ld); err != nil {
					t.Fatal(err)
				}
				for k := range lc {
					if active[k] && math.Abs(lc[k]-ld[k]) > tol*lc[k] {
						t.Fatalf("iteration %d problem %d: loss %.15g (cpu) vs %.15g (%s)", it, k, lc[k], ld[k], device)
					}
				}
			}
			all := []bool{true, true, true}
			if err := gpu.FirstErr(cpu.Loss(context.Background(), all, lc), dev.Loss(context.Background(), all, ld)); err != nil {
				t.Fatal(err)
			}
			for k, p := range probs {
				if math.Abs(lc[k]-ld[k]) > tol*lc[k] {
					t.Errorf("problem %d: final loss %.15g (cpu) vs %.15g (%s)", k, lc[k], ld[k], device)
				}
				r := tc.rank
				t1, a1, b1 := make([]float64, p.N*r), make([]float64, p.J*r), make([]float64, p.J)
				t2, a2, b2 := make([]float64, p.N*r), make([]float64, p.J*r), make([]float64, p.J)
				cpu.Get(k, t1, a1, b1)
				dev.Get(k, t2, a2, b2)
				if d := max(cbmmtest.MaxRelDiff(t1, t2), cbmmtest.MaxRelDiff(a1, a2), cbmmtest.MaxRelDiff(b1, b2)); d > 100*tol {
					t.Errorf("problem %d: parameters differ by %.3g", k, d)
				}
			}
		})
	}
}
