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

// gradientFunc computes the mean loss of batch b at p and writes its gradient into g.
type gradientFunc interface {
	gradient(p *backend.JEIRTParams, b *backend.JEIRTBatch, g *backend.JEIRTParams) (float64, error)
}

// hostStepper keeps the parameters in host memory and applies AdamW after a
// gradient computed by grad.
type hostStepper struct {
	p, g *backend.JEIRTParams
	grad gradientFunc
	opt  *adamW
}

func newHostStepper(p *backend.JEIRTParams, opt backend.AdamW, grad gradientFunc) *hostStepper {
	return &hostStepper{p: p, g: p.ZeroLike(), grad: grad, opt: newAdamW(opt, p.Slices())}
}

func (s *hostStepper) Step(b *backend.JEIRTBatch, lr float64) (float64, error) {
	loss, err := s.grad.gradient(s.p, b, s.g)
	if err != nil {
		return 0, err
	}
	s.opt.step(lr, s.p.Slices(), s.g.Slices())
	return loss, nil
}

func (s *hostStepper) Params() *backend.JEIRTParams { return s.p }
