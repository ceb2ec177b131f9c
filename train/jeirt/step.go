package jeirt

import (
	"github.com/jeirt/jeirt/train/backend"
)

// The CPU device registers the fused hand-written step, which device
// cpu:fused runs; Trainer.Fit runs the compiled Gorgonia graph (StepGraph) on
// device cpu.
func init() {
	backend.Register(backend.CPU, backend.NewJEIRTStepper(func(p *backend.JEIRTParams, opt backend.AdamW) (backend.JEIRTStepper, error) {
		return newHostStepper(p, opt, newFusedGradient(p)), nil
	}))
}

// The JE-IRT steps a CPU run can take (Result.Step names the one that ran).
const (
	// StepGraph is the adapter, the link and the loss as a Gorgonia graph
	// compiled once per batch-shape bucket and differentiated by Gorgonia
	// (graphGradient); the default.
	StepGraph = "graph"
	// StepFused is the same loss and gradient written out by hand on gonum's
	// BLAS (fusedGradient). It stays as the reference the graph is tested
	// against (TestJEIRTGraphMatchesFused) and timed against
	// (BenchmarkJEIRTEpochEmbedLLM); it is also what the device steps mirror.
	StepFused = "fused"
)

// gradientFunc computes the mean loss of batch b at p and its gradient,
// one slice per entry of p.Slices(), held by the gradientFunc until its next
// call (so that AdamW reads the graph's gradients where the graph wrote
// them).
type gradientFunc interface {
	gradient(p *backend.JEIRTParams, b *backend.JEIRTBatch) (grad [][]float32, loss float64, err error)
}

// hostStepper keeps the parameters in host memory and applies AdamW after a
// gradient computed by grad.
type hostStepper struct {
	p    *backend.JEIRTParams
	grad gradientFunc
	opt  *adamW
}

func newHostStepper(p *backend.JEIRTParams, opt backend.AdamW, grad gradientFunc) *hostStepper {
	return &hostStepper{p: p, grad: grad, opt: newAdamW(opt, p.Slices())}
}

func (s *hostStepper) Step(b *backend.JEIRTBatch, lr float64) (float64, error) {
	g, loss, err := s.grad.gradient(s.p, b)
	if err != nil {
		return 0, err
	}
	s.opt.step(lr, s.p.Slices(), g)
	return loss, nil
}

func (s *hostStepper) Params() *backend.JEIRTParams { return s.p }
