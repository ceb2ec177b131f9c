package train

import (
	"fmt"
	"sort"
	"sync"
)

// JEIRTParams are the trainable JE-IRT parameters, row-major float32 in the
// layout of model.JEIRT: W1 is Hidden x InputDim, W2 is Dim x Hidden, M is
// NumModels x Dim and R (nil when the residual is off) NumItems x Dim.
type JEIRTParams struct {
	InputDim, Hidden, Dim int
	NumModels, NumItems   int

	W1, C1, W2, C2, M, R []float32

	// ResidualL2 weighs the penalty ResidualL2 · mean over the batch's pairs of ‖r_j‖².
	ResidualL2 float64
}

// Slices returns the parameter arrays in a fixed order (W1, c1, W2, c2, M, R),
// skipping R when it is off. Optimisers and gradients pair up by position.
func (p *JEIRTParams) Slices() [][]float32 {
	s := [][]float32{p.W1, p.C1, p.W2, p.C2, p.M}
	if p.R != nil {
		s = append(s, p.R)
	}
	return s
}

// zeroLike returns parameters of the same shape, all zero.
func (p *JEIRTParams) zeroLike() *JEIRTParams {
	z := *p
	z.W1, z.C1, z.W2, z.C2, z.M = make([]float32, len(p.W1)), make([]float32, len(p.C1)), make([]float32, len(p.W2)), make([]float32, len(p.C2)), make([]float32, len(p.M))
	if p.R != nil {
		z.R = make([]float32, len(p.R))
	}
	return &z
}

// clone returns a deep copy.
func (p *JEIRTParams) clone() *JEIRTParams {
	c := p.zeroLike()
	src, dst := p.Slices(), c.Slices()
	for k := range src {
		copy(dst[k], src[k])
	}
	return c
}

// JEIRTBatch is one training step's data. Its pairs refer to rows of X, so
// that by-question batching computes each question's adapter output once
// (each row is a distinct question) while per-pair batching gives every pair
// its own row, as the reference implementation does.
type JEIRTBatch struct {
	X    []float32 // U x InputDim encoder vectors, one row per adapter evaluation
	Item []int32   // U: the item index of each row (selects the residual r_j)
	Mask []float32 // U x Hidden dropout multipliers (0 or 1/(1−p)); nil means no dropout

	Row   []int32   // B: the row of X each pair uses
	Model []int32   // B: model index of each pair
	Label []float32 // B: 1 correct, 0 wrong
}

// Rows is U, the number of adapter evaluations.
func (b *JEIRTBatch) Rows() int { return len(b.Item) }

// JEIRTStepper runs the JE-IRT training step on one device: the forward pass,
// the gradient of the mean binary cross-entropy (plus the residual penalty)
// and one AdamW update of its parameters.
type JEIRTStepper interface {
	// Step updates the parameters on batch b at learning rate lr and returns
	// the batch's mean loss before the update.
	Step(b *JEIRTBatch, lr float64) (loss float64, err error)
	// Params returns the current parameters in host memory. The caller may
	// read them until the next Step.
	Params() *JEIRTParams
}

// AdamW is the optimiser setting (Loshchilov and Hutter, "Decoupled Weight
// Decay Regularization", ICLR 2019), with PyTorch's defaults when zero:
// Beta1 0.9, Beta2 0.999, Eps 1e-8.
type AdamW struct {
	WeightDecay, Beta1, Beta2, Eps float64
}

// JEIRTBackend makes a stepper that starts from p (which it may take over).
type JEIRTBackend func(p *JEIRTParams, opt AdamW) (JEIRTStepper, error)

var (
	backendMu     sync.Mutex
	jeirtBackends = map[string]JEIRTBackend{}
)

// RegisterJEIRTBackend makes a device available to TrainJEIRT under name
// (a CUDA build registers "cuda" in an init function).
func RegisterJEIRTBackend(name string, b JEIRTBackend) {
	backendMu.Lock()
	defer backendMu.Unlock()
	jeirtBackends[name] = b
}

// JEIRTDevices lists the registered devices.
func JEIRTDevices() []string {
	backendMu.Lock()
	defer backendMu.Unlock()
	names := make([]string, 0, len(jeirtBackends))
	for n := range jeirtBackends {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// jeirtBackend resolves a device name: "auto" is cuda when registered, else cpu.
func jeirtBackend(device string) (string, JEIRTBackend, error) {
	backendMu.Lock()
	defer backendMu.Unlock()
	if device == "" || device == "auto" {
		device = "cpu"
		if _, ok := jeirtBackends["cuda"]; ok {
			device = "cuda"
		}
	}
	b, ok := jeirtBackends[device]
	if !ok {
		if device == "cuda" {
			return "", nil, fmt.Errorf("device cuda: this jeirt binary was built without CUDA; build one with `go build -tags jeirtcuda ./cmd/jeirt`")
		}
		names := make([]string, 0, len(jeirtBackends))
		for n := range jeirtBackends {
			names = append(names, n)
		}
		sort.Strings(names)
		return "", nil, fmt.Errorf("device %q is not available (have %v)", device, names)
	}
	return device, b, nil
}

func init() {
	// cpu: the fused hand-written step; gorgonia: the same step as a Gorgonia
	// graph (the reference the fused step is tested against; slower).
	RegisterJEIRTBackend("cpu", func(p *JEIRTParams, opt AdamW) (JEIRTStepper, error) {
		return newHostStepper(p, opt, newFusedGradient(p)), nil
	})
	RegisterJEIRTBackend("gorgonia", func(p *JEIRTParams, opt AdamW) (JEIRTStepper, error) {
		return newHostStepper(p, opt, &graphGradient{}), nil
	})
}

// gradientFunc computes the mean loss of batch b at p and writes its gradient into g.
type gradientFunc interface {
	gradient(p *JEIRTParams, b *JEIRTBatch, g *JEIRTParams) (float64, error)
}

// hostStepper keeps the parameters in host memory and applies AdamW after a
// gradient computed by grad.
type hostStepper struct {
	p, g *JEIRTParams
	grad gradientFunc
	opt  *adamW
}

func newHostStepper(p *JEIRTParams, opt AdamW, grad gradientFunc) *hostStepper {
	return &hostStepper{p: p, g: p.zeroLike(), grad: grad, opt: newAdamW(opt, p.Slices())}
}

func (s *hostStepper) Step(b *JEIRTBatch, lr float64) (float64, error) {
	loss, err := s.grad.gradient(s.p, b, s.g)
	if err != nil {
		return 0, err
	}
	s.opt.step(lr, s.p.Slices(), s.g.Slices())
	return loss, nil
}

func (s *hostStepper) Params() *JEIRTParams { return s.p }
