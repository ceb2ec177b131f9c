//go:build cgo

package cbmm

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/jeirt/jeirt/cuda/internal/cbmm/cbmmtest"
	"github.com/jeirt/jeirt/cuda/internal/gpu"
	"github.com/jeirt/jeirt/cuda/internal/harness"
	"github.com/jeirt/jeirt/train/backend"
	"github.com/jeirt/jeirt/train/irt"
)

// TestHarnessIterate checks the fit's control on the device (Iterate and
// Revert: cbmm_sum_decide and cbmm_extrapolate) against the same kernels'
// Step with the control run on the host through Get and Set, as train/irt
// runs it for a backend that does not iterate: the outcomes, the losses and
// the parameters must be bit-identical, through extrapolations, rejected
// extrapolations, convergence and the final return to M(θ). A second run on
// the device must give the same bits again.
func TestHarnessIterate(t *testing.T) {
	counts := map[backend.CBMMOutcome]int{}
	for _, tc := range []struct {
		rank       int
		accelerate bool
		tol        float64
		iters      int
	}{{1, true, 1e-4, 24}, {3, true, 1e-6, 12}, {2, false, 1e-2, 12}} {
		t.Run(fmt.Sprintf("rank%d/accelerate=%v", tc.rank, tc.accelerate), func(t *testing.T) {
			kind := "2pl"
			if tc.rank > 1 {
				kind = "mirt"
			}
			rs := cbmmtest.Problems(t, kind, tc.rank, 21, 22, 23)
			probs := make([]*backend.CBMMProblem, len(rs))
			for k, r := range rs {
				probs[k] = backend.NewCBMMProblem(r)
			}
			K := len(probs)
			rng := rand.New(rand.NewPCG(uint64(tc.rank), 11))
			type point struct{ theta, a, b []float64 }
			starts := make([]point, K)
			for k, p := range probs {
				starts[k].theta, starts[k].a, starts[k].b = cbmmtest.RandomStart(rng, p.N, p.J, tc.rank)
			}
			clone := func(p point) point {
				return point{slices.Clone(p.theta), slices.Clone(p.a), slices.Clone(p.b)}
			}
			// run fits the batch for tc.iters iterations and returns the
			// outcomes, then the losses and the final parameters.
			run := func(onDevice bool) ([]backend.CBMMOutcome, []float64) {
				be := Backend{Device: "test", Open: func() (gpu.GPU, error) { return harness.NewGPU(), nil }}
				batch, err := be.Load(probs, tc.rank, 1, 1)
				if err != nil {
					t.Fatal(err)
				}
				defer batch.Close()
				it := batch.(backend.CBMMIterator)
				ctl := make([]backend.CBMMControl, K)
				m, prev := make([]point, K), make([]point, K)
				for k := range probs {
					batch.Set(k, starts[k].theta, starts[k].a, starts[k].b)
					ctl[k] = backend.NewCBMMControl()
					m[k], prev[k] = clone(starts[k]), clone(starts[k])
				}
				active := []bool{true, true, true}
				loss := make([]float64, K)
				outcome := make([]backend.CBMMOutcome, K)
				var outs []backend.CBMMOutcome
				var vals []float64
				for range tc.iters {
					if onDevice {
						err = it.Iterate(t.Context(), active, tc.tol, tc.accelerate, loss, outcome)
					} else {
						err = batch.Step(t.Context(), active, loss)
					}
					if err != nil {
						t.Fatal(err)
					}
					for k := range probs {
						if !active[k] {
							continue
						}
						out := ctl[k].Next(loss[k], tc.tol, tc.accelerate)
						if onDevice && outcome[k] != out {
							t.Fatalf("problem %d: the device decided %d, the host %d", k, outcome[k], out)
						}
						outs = append(outs, out)
						vals = append(vals, loss[k])
						if out == backend.CBMMConverged {
							active[k] = false
						}
						if onDevice {
							continue
						}
						switch out {
						case backend.CBMMRejected:
							batch.Set(k, m[k].theta, m[k].a, m[k].b)
							prev[k] = clone(m[k])
						case backend.CBMMAccepted:
							if tc.accelerate {
								batch.Get(k, m[k].theta, m[k].a, m[k].b)
								prev[k] = clone(m[k])
							}
						case backend.CBMMExtrapolated:
							batch.Get(k, m[k].theta, m[k].a, m[k].b)
							backend.Extrapolate(prev[k].theta, m[k].theta, ctl[k].StepBeta, false)
							backend.Extrapolate(prev[k].a, m[k].a, ctl[k].StepBeta, true)
							backend.Extrapolate(prev[k].b, m[k].b, ctl[k].StepBeta, false)
							batch.Set(k, prev[k].theta, prev[k].a, prev[k].b)
						}
					}
				}
				for k, p := range probs {
					if ctl[k].Extrapolated {
						if onDevice {
							if err := it.Revert(k); err != nil {
								t.Fatal(err)
							}
						} else {
							batch.Set(k, m[k].theta, m[k].a, m[k].b)
						}
					}
					th, a, b := make([]float64, p.N*tc.rank), make([]float64, p.J*tc.rank), make([]float64, p.J)
					batch.Get(k, th, a, b)
					vals = append(append(append(vals, th...), a...), b...)
				}
				return outs, vals
			}
			hostOuts, hostVals := run(false)
			devOuts, devVals := run(true)
			againOuts, againVals := run(true)
			if !slices.Equal(hostOuts, devOuts) {
				t.Fatalf("outcomes: host %v, device %v", hostOuts, devOuts)
			}
			if !slices.Equal(hostVals, devVals) {
				t.Errorf("host and device control differ: %.3g relative", cbmmtest.MaxRelDiff(hostVals, devVals))
			}
			if !slices.Equal(devOuts, againOuts) || !slices.Equal(devVals, againVals) {
				t.Errorf("two runs on the device differ: %.3g relative", cbmmtest.MaxRelDiff(devVals, againVals))
			}
			n := map[backend.CBMMOutcome]int{}
			for _, o := range devOuts {
				n[o]++
				counts[o]++
			}
			t.Logf("%d steps: %d kept, %d extrapolated, %d rejected, %d converged", len(devOuts),
				n[backend.CBMMAccepted], n[backend.CBMMExtrapolated], n[backend.CBMMRejected], n[backend.CBMMConverged])
		})
	}
	for _, o := range []backend.CBMMOutcome{backend.CBMMAccepted, backend.CBMMExtrapolated, backend.CBMMRejected, backend.CBMMConverged} {
		if counts[o] == 0 {
			t.Errorf("no step had outcome %d: the test does not cover it", o)
		}
	}
}

// TestHarnessCBMMFitDeterministic: two accelerated fits through train/irt
// (the SVD start, the device's control, the final Loss and Get) of the same
// seed give bit-identical parameters on the harness.
func TestHarnessCBMMFitDeterministic(t *testing.T) {
	rs := cbmmtest.Problems(t, "mirt", 2, 31, 32)
	fit := func() []float64 {
		c := irt.CBMM{Rank: 2, Tol: 1e-300, MaxIter: 10, Accelerate: true, Device: "cuda-harness"}
		out, err := c.FitBatch(context.Background(), rs)
		if err != nil {
			t.Fatal(err)
		}
		var v []float64
		for _, m := range out {
			v = append(append(append(append(v, m.Theta...), m.A...), m.B...), m.LossHistory...)
		}
		return v
	}
	a, b := fit(), fit()
	if !slices.Equal(a, b) {
		t.Errorf("two fits differ: %.3g relative", cbmmtest.MaxRelDiff(a, b))
	}
	if len(a) == 0 || slices.ContainsFunc(a, math.IsNaN) {
		t.Errorf("no parameters or NaN")
	}
}
