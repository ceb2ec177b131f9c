package backend

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

// ZeroLike returns parameters of the same shape, all zero.
func (p *JEIRTParams) ZeroLike() *JEIRTParams {
	z := *p
	z.W1, z.C1, z.W2, z.C2, z.M = make([]float32, len(p.W1)), make([]float32, len(p.C1)), make([]float32, len(p.W2)), make([]float32, len(p.C2)), make([]float32, len(p.M))
	if p.R != nil {
		z.R = make([]float32, len(p.R))
	}
	return &z
}

// Clone returns a deep copy.
func (p *JEIRTParams) Clone() *JEIRTParams {
	c := p.ZeroLike()
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

// JEIRT makes a stepper that starts from p (which it may take over). A device
// registers one with Register.
type JEIRT func(p *JEIRTParams, opt AdamW) (JEIRTStepper, error)
