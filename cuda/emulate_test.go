package cuda

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/synth"
	"github.com/jeirt/jeirt/train/backend"
)

// The test binary registers the GPU code on the emulated device as
// "cuda-emulated", so the GPU acceptance tests (agreement_test.go) also run
// without a GPU.
var emu = newEmuGPU()

func openEmu() (gpu, error) { return emu, nil }

func init() {
	backend.Register("cuda-emulated", cbmmBackend{device: "cuda-emulated", open: openEmu})
	backend.Register("cuda-emulated", jeirtBackend(openEmu))
}

func TestEmulatedCBMMAgreesWithCPU(t *testing.T) { checkCBMMAgreement(t, "cuda-emulated", 1e-10) }

func TestEmulatedJEIRTAgreesWithCPU(t *testing.T) { checkJEIRTAgreement(t, "cuda-emulated", 1e-4) }

func TestEmulatedSgemm(t *testing.T) { checkSgemm(t, newEmuGPU()) }

func softplusSigmoid(t float64) (sp, sg float64) {
	ex := math.Exp(-math.Abs(t))
	s := 1 / (1 + ex)
	sp = math.Max(t, 0) + math.Log1p(ex)
	if t >= 0 {
		return sp, s
	}
	return sp, ex * s
}

// testProblems returns K synthetic response matrices of different shapes.
func testProblems(t testing.TB, kind string, rank int, seeds ...int64) []*model.Responses {
	t.Helper()
	var rs []*model.Responses
	for k, s := range seeds {
		r, _, err := synth.Generate(synth.Options{Kind: kind, Models: 25 + 7*k, Items: 60 + 13*k, Rank: rank, Missing: 0.3, Seed: s})
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	return rs
}

// randomStart fills a start point (A ≥ 0) from rng.
func randomStart(rng *rand.Rand, n, j, r int) (theta, a, b []float64) {
	theta, a, b = make([]float64, n*r), make([]float64, j*r), make([]float64, j)
	for k := range theta {
		theta[k] = rng.NormFloat64()
	}
	for k := range a {
		a[k] = math.Abs(rng.NormFloat64())
	}
	for k := range b {
		b[k] = rng.NormFloat64()
	}
	return
}

// checkStepsMatchCPU steps the batch of device next to train's CPU backend
// from the same random start, with one problem going inactive half-way:
// losses must agree within tol relative at every iteration, and the
// parameters at the end.
func checkStepsMatchCPU(t *testing.T, device string, tol float64) {
	for _, tc := range []struct {
		kind  string
		rank  int
		sigma float64
	}{{"2pl", 1, 1}, {"mirt", 2, 1.7}, {"mirt", 3, 1}} {
		t.Run(fmt.Sprintf("%s/rank%d", tc.kind, tc.rank), func(t *testing.T) {
			rs := testProblems(t, tc.kind, tc.rank, 1, 2, 3)
			probs := make([]*backend.CBMMProblem, len(rs))
			for k, r := range rs {
				probs[k] = backend.NewCBMMProblem(r)
			}
			load := func(dev string) backend.CBMMBatch {
				be, _, err := backend.Lookup[backend.CBMM](dev)
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
				th, a, b := randomStart(rng, p.N, p.J, tc.rank)
				cpu.Set(k, th, a, b)
				dev.Set(k, th, a, b)
			}
			active := []bool{true, true, true}
			lc, ld := make([]float64, 3), make([]float64, 3)
			for it := 0; it < 30; it++ {
				if it == 15 {
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
			if err := firstErr(cpu.Loss(context.Background(), all, lc), dev.Loss(context.Background(), all, ld)); err != nil {
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
				if d := max(maxRelDiff(t1, t2), maxRelDiff(a1, a2), maxRelDiff(b1, b2)); d > 100*tol {
					t.Errorf("problem %d: parameters differ by %.3g", k, d)
				}
			}
		})
	}
}

func maxRelDiff(x, y []float64) float64 {
	m := 0.0
	for i := range x {
		m = math.Max(m, math.Abs(x[i]-y[i])/(1+math.Abs(x[i])))
	}
	return m
}

func TestEmulatedStepsMatchCPU(t *testing.T) { checkStepsMatchCPU(t, "cuda-emulated", 1e-11) }

// TestEmulatedOutOfMemory checks the error a batch too large for the device
// gives, and that a failed load frees what it had allocated.
func TestEmulatedOutOfMemory(t *testing.T) {
	g := newEmuGPU()
	rs := testProblems(t, "2pl", 1, 1)
	p := backend.NewCBMMProblem(rs[0])
	l, _ := newCBMMLayout([]*backend.CBMMProblem{p}, 1)
	g.capacity = l.deviceBytes() - 1
	be := cbmmBackend{device: "test", open: func() (gpu, error) { return g, nil }}
	_, err := be.Load([]*backend.CBMMProblem{p}, 1, 1, 1)
	want := fmt.Sprintf("cuda: out of device memory: a batch of 1 cBMM problems (%d cells) needs %s on emulated GPU, %s free of %s",
		p.Len(), mib(l.deviceBytes()), mib(g.capacity), mib(g.capacity))
	if !errors.Is(err, ErrOutOfMemory) || err.Error() != want {
		t.Fatalf("err = %v\nwant %s", err, want)
	}
	// Enough for the estimate but not for the 8-byte minimum allocations of
	// empty buffers: the allocation itself fails, and nothing stays allocated.
	g.capacity = l.deviceBytes()
	if _, err := be.Load([]*backend.CBMMProblem{p}, 1, 1, 1); err != nil {
		t.Fatalf("load at capacity: %v", err)
	}
	g.capacity = 1 << 10
	g.used = 0
	clear(g.mem)
	if _, err := be.Load([]*backend.CBMMProblem{p}, 1, 1, 1); !errors.Is(err, ErrOutOfMemory) {
		t.Fatalf("err = %v", err)
	}
	if len(g.mem) != 0 || g.used != 0 {
		t.Fatalf("%d buffers (%d bytes) left after a failed load", len(g.mem), g.used)
	}
}

// TestEmulatedJEIRTBatchErrors checks the batch validation messages.
func TestEmulatedJEIRTBatchErrors(t *testing.T) {
	p := &backend.JEIRTParams{InputDim: 3, Hidden: 4, Dim: 2, NumModels: 2, NumItems: 2,
		W1: make([]float32, 12), C1: make([]float32, 4), W2: make([]float32, 8), C2: make([]float32, 2), M: make([]float32, 4)}
	s, err := newJEIRTStepper(newEmuGPU(), p, backend.AdamW{})
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
