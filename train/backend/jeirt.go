package backend

import (
	"context"
	"math"
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
	Label []float32 // B: 1 correct, 0 wrong; for a cell of several trials or a graded score, its fraction k/n
	// Weight is each pair's trials n (nil: one each); the loss is then the
	// trial-weighted mean Σ n·BCE(z, k/n)/Σ n, the binomial log-likelihood
	// per trial (a graded score: the fractional logit model's).
	Weight []float32
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

// NewJEIRTStepper makes a stepper that starts from p (which it may take over). A device
// registers one with Register.
type NewJEIRTStepper func(p *JEIRTParams, opt AdamW) (JEIRTStepper, error)

// JEIRTDropout draws the adapter's inverted-dropout masks from a counter-based
// hash of (Seed, step, index) (splitmix64; Steele, Lea and Flood, "Fast
// Splittable Pseudorandom Number Generators", OOPSLA 2014) rather than from a
// stream, so that a device can draw the same mask where it needs it, in any
// order, and two runs with the same seed give the same masks on every
// device. Hidden unit c of row u at step t is kept, and scaled by 1/(1−P),
// when the top 24 bits of the hash of index u·Hidden+c are below
// round((1−P)·2²⁴). P 0 means no dropout.
type JEIRTDropout struct {
	P    float64
	Seed uint64
}

// Keep24 is the keep threshold on the hash's top 24 bits and Scale the kept
// units' multiplier.
func (d JEIRTDropout) Keep24() uint64 { return uint64(math.Round((1 - d.P) * (1 << 24))) }

// Scale is 1/(1−P) in float32, the kept units' multiplier.
func (d JEIRTDropout) Scale() float32 { return float32(1 / (1 - d.P)) }

// StepKey is the hash key of step t; unit index k of that step is kept when
// Splitmix64(StepKey(t)+k)>>40 < Keep24().
func (d JEIRTDropout) StepKey(t int64) uint64 {
	return Splitmix64(d.Seed ^ Splitmix64(uint64(t)))
}

// Splitmix64 is the splitmix64 finaliser of x + 0x9e3779b97f4a7c15, the
// hash the device kernels use too.
func Splitmix64(x uint64) uint64 {
	z := x + 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// Mask returns step t's mask for rows x hidden units in buf (grown as
// needed): Scale() where kept, else 0; nil when P is 0.
func (d JEIRTDropout) Mask(t int64, rows, hidden int, buf []float32) []float32 {
	if d.P == 0 {
		return nil
	}
	n := rows * hidden
	if cap(buf) < n {
		buf = make([]float32, n)
	}
	buf = buf[:n]
	key, keep, scale := d.StepKey(t), d.Keep24(), d.Scale()
	for k := range buf {
		if Splitmix64(key+uint64(k))>>40 < keep {
			buf[k] = scale
		} else {
			buf[k] = 0
		}
	}
	return buf
}

// JEIRTSchedule is one epoch of JE-IRT batches as indices into the items'
// encoder vectors, so that a device holding the vectors needs only these
// indices: step s has the rows RowStart[s]:RowStart[s+1] of Item and the
// pairs PairStart[s]:PairStart[s+1] of Row, Model and Label (Row counting
// from the step's first row), and the dropout mask Dropout.Mask(FirstStep+s).
type JEIRTSchedule struct {
	RowStart, PairStart []int // Steps()+1 each, from 0
	Item                []int32
	Row, Model          []int32
	Label               []float32
	Weight              []float32 // nil: one trial per pair (see JEIRTBatch.Weight)
	Dropout             JEIRTDropout
	FirstStep           int64
}

// Steps is the number of steps in the schedule.
func (s *JEIRTSchedule) Steps() int { return max(len(s.RowStart)-1, 0) }

// Batch fills b with step k of the schedule, its encoder vectors copied from
// features (NumItems x inputDim) and its dropout mask drawn for hidden
// units, and returns b (a new batch when b is nil).
func (s *JEIRTSchedule) Batch(k int, features []float32, inputDim, hidden int, b *JEIRTBatch) *JEIRTBatch {
	if b == nil {
		b = &JEIRTBatch{}
	}
	r0, r1 := s.RowStart[k], s.RowStart[k+1]
	p0, p1 := s.PairStart[k], s.PairStart[k+1]
	b.Item = append(b.Item[:0], s.Item[r0:r1]...)
	b.X = b.X[:0]
	for _, j := range b.Item {
		b.X = append(b.X, features[int(j)*inputDim:(int(j)+1)*inputDim]...)
	}
	b.Row = append(b.Row[:0], s.Row[p0:p1]...)
	b.Model = append(b.Model[:0], s.Model[p0:p1]...)
	b.Label = append(b.Label[:0], s.Label[p0:p1]...)
	b.Weight = b.Weight[:0]
	if s.Weight != nil {
		b.Weight = append(b.Weight, s.Weight[p0:p1]...)
	} else {
		b.Weight = nil
	}
	b.Mask = s.Dropout.Mask(s.FirstStep+int64(k), r1-r0, hidden, b.Mask)
	return b
}

// JEIRTEpochStepper is a JEIRTStepper that runs whole epochs on its device:
// the encoder vectors go up once, each epoch's schedule once, the dropout
// masks are drawn where they are used and the losses are read back once per
// epoch. train/jeirt uses it when a device's stepper offers it.
type JEIRTEpochStepper interface {
	JEIRTStepper
	// SetFeatures gives the stepper every item's encoder vector
	// (NumItems x InputDim, row-major), which the schedules index.
	SetFeatures(features []float32) error
	// Epoch runs the steps of s at learning rate lr and returns, in loss
	// (grown as needed), each step's mean loss before its update, as Step
	// would. It stops between steps when ctx is cancelled, returning
	// ctx's error.
	Epoch(ctx context.Context, s *JEIRTSchedule, lr float64, loss []float64) ([]float64, error)
	// SetEvalCells gives the stepper the cell sets that Evaluate scores.
	SetEvalCells(sets []JEIRTCells) error
	// Evaluate scores the current parameters, without dropout, on each set
	// of SetEvalCells: the mean binary cross-entropy and the accuracy
	// (P(correct) ≥ 0.5 exactly when correct), NaN for an empty set, in
	// loss and acc (grown as needed).
	Evaluate(loss, acc []float64) ([]float64, []float64, error)
}

// JEIRTCells are cells to score: each one's item, model and label (1
// correct, 0 wrong; a fraction with Weight, as in JEIRTBatch).
type JEIRTCells struct {
	Item, Model []int32
	Label       []float32
	Weight      []float32 // nil: one trial per cell
}
