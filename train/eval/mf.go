package eval

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/jeirt/jeirt/model"
)

// MF is EmbedLLM's matrix factorisation baseline (Zhuang et al. 2024,
// EmbedLLM, Sec. 4.1; TextMF in its algorithm/mf.py): a model vector u_i
// and bias b_i, a question vector v_j and bias c_j, and
//
//	P(model i answers question j correctly) = σ(⟨u_i, v_j⟩ + b_i + c_j + b₀),
//
// trained by binary cross-entropy with a ridge penalty
// (λ/2)(Σ_i ‖u_i‖²/N + Σ_j ‖v_j‖²/J_train) on the model and question
// vectors (TextMF's classifier weight is absorbed into u_i). The question's
// [v_j, c_j] is either free, one per question with training cells (Text
// false), or EmbedLLM's text form (Text true): W·x_j + w₀, a learned linear
// map of the question's encoder vector x_j, so that a question never seen in
// training is predicted from its text. d and λ are chosen on the validation
// cells (lowest log loss) among Dims x Decays; each fit is full-batch Adam,
// early-stopped on the validation loss (fitLoop).
type MF struct {
	Text     bool
	Features []float32 // J x FeatDim encoder vectors of every item (Text)
	FeatDim  int
	// Dims and Decays are the candidate d and λ; nil means MFDims and
	// MFDecays.
	Dims   []int
	Decays []float64
	Seed   uint64
	// Threads fits that many candidates at once; 0 means runtime.GOMAXPROCS(0).
	Threads int
}

// MFDims and MFDecays are MF's default candidates.
var (
	MFDims   = []int{8, 32}
	MFDecays = []float64{1e-2, 1e-1, 1}
)

// MFResult is what MF.Fit chose and predicted.
type MFResult struct {
	Pred    []float64 // P(correct) of the test cells
	Dim     int
	Decay   float64
	ValLoss float64 // NaN without validation cells
	Steps   int
}

// Fit trains every candidate on trainR, keeps the one with the lowest
// validation log loss on valR (without validation cells, the middle
// candidate of the list, d-major) and predicts testR's cells. trainR, valR and
// testR share their models and items.
func (mf MF) Fit(ctx context.Context, trainR, valR, testR *model.Responses) (*MFResult, error) {
	if mf.Text && len(mf.Features) != trainR.NumItems()*mf.FeatDim {
		return nil, fmt.Errorf("mf: %d feature values for %d items of width %d", len(mf.Features), trainR.NumItems(), mf.FeatDim)
	}
	dims, decays := mf.Dims, mf.Decays
	if dims == nil {
		dims = MFDims
	}
	if decays == nil {
		decays = MFDecays
	}
	type cand struct {
		d      int
		lambda float64
		theta  []float64
		val    float64
		steps  int
		err    error
	}
	var grid []*cand
	for _, d := range dims {
		for _, l := range decays {
			grid = append(grid, &cand{d: d, lambda: l})
		}
	}
	var x []float64 // J x D, float64 for the products
	if mf.Text {
		x = make([]float64, len(mf.Features))
		for k, v := range mf.Features {
			x[k] = float64(v)
		}
	}
	threads := mf.Threads
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	ty, tw := cellTargets(trainR)
	vy, vw := cellTargets(valR)
	err := parallel(ctx, len(grid), threads, func(k int) {
		c := grid[k]
		f := mfFit{MF: mf, x: x, d: c.d, lambda: c.lambda, N: trainR.NumModels(), J: trainR.NumItems()}
		c.theta = f.init(trainR)
		steps, best, err := fitLoop{LR: 0.05, MaxSteps: 200, Patience: 4}.run(ctx, c.theta,
			func(theta, grad []float64) float64 { return f.loss(theta, grad, trainR, ty, tw, true) },
			func(theta []float64) float64 {
				if valR.Len() == 0 {
					return math.NaN()
				}
				return f.loss(theta, nil, valR, vy, vw, false)
			})
		c.val, c.steps, c.err = best, steps, err
	})
	if err != nil {
		return nil, err
	}
	for _, c := range grid {
		if c.err != nil {
			return nil, c.err
		}
	}
	best := grid[len(grid)/2]
	if valR.Len() > 0 {
		best = grid[0]
		for _, c := range grid[1:] {
			if c.val < best.val {
				best = c
			}
		}
	}
	f := mfFit{MF: mf, x: x, d: best.d, lambda: best.lambda, N: trainR.NumModels(), J: trainR.NumItems()}
	return &MFResult{Pred: f.predict(best.theta, testR), Dim: best.d, Decay: best.lambda, ValLoss: best.val, Steps: best.steps}, nil
}

// mfFit is one candidate of MF. Its parameters are one vector: U (N x d),
// the model biases (N), then the question part, [v_j, c_j] for every
// question (J x (d+1)) when free, W ((d+1) x D) and w₀ (d+1) in the text
// form, and b₀ last.
type mfFit struct {
	MF
	x         []float64 // J x FeatDim (Text)
	d         int
	lambda    float64
	N, J      int
	q, gq     []float64 // J x (d+1) question vectors and their gradient (text form)
	trainItem []bool    // items with training cells: the penalty's J_train
}

func (f *mfFit) init(trainR *model.Responses) []float64 {
	d, N, J := f.d, f.N, f.J
	rng := rand.New(rand.NewPCG(f.Seed, uint64(d)))
	var theta []float64
	if f.Text {
		theta = make([]float64, N*d+N+(d+1)*f.FeatDim+d+1+1)
	} else {
		theta = make([]float64, N*d+N+J*(d+1)+1)
	}
	for k := 0; k < N*d; k++ {
		theta[k] = 0.1 * rng.NormFloat64()
	}
	qs := theta[N*d+N : len(theta)-1]
	if f.Text {
		bound := 1 / math.Sqrt(float64(f.FeatDim)) // PyTorch's nn.Linear
		for k := range qs {
			qs[k] = bound * (2*rng.Float64() - 1)
		}
	} else {
		for j := 0; j < J; j++ {
			for k := 0; k < d; k++ {
				qs[j*(d+1)+k] = 0.1 * rng.NormFloat64()
			}
		}
	}
	p := min(max(trainR.MeanCorrect(), 1e-3), 1-1e-3)
	theta[len(theta)-1] = math.Log(p / (1 - p))
	f.trainItem = make([]bool, J)
	for _, j := range trainR.Item {
		f.trainItem[j] = true
	}
	return theta
}

// questions returns the J x (d+1) question vectors [v_j, c_j] of theta.
func (f *mfFit) questions(theta []float64) []float64 {
	d, N, J := f.d, f.N, f.J
	if !f.Text {
		return theta[N*d+N : N*d+N+J*(d+1)]
	}
	w := theta[N*d+N : N*d+N+(d+1)*f.FeatDim]
	w0 := theta[N*d+N+(d+1)*f.FeatDim : len(theta)-1]
	if f.q == nil {
		f.q, f.gq = make([]float64, J*(d+1)), make([]float64, J*(d+1))
	}
	for j := 0; j < J; j++ {
		copy(f.q[j*(d+1):(j+1)*(d+1)], w0)
	}
	blas64.Gemm(blas.NoTrans, blas.Trans, 1, gen64(J, f.FeatDim, f.x), gen64(d+1, f.FeatDim, w), 1, gen64(J, d+1, f.q))
	return f.q
}

// loss is the weighted BCE of r's cells (targets y, weights w: cellTargets) (plus the penalty when penalty),
// with its gradient written into grad when grad is not nil.
func (f *mfFit) loss(theta, grad []float64, r *model.Responses, y, w []float64, penalty bool) float64 {
	d, N, J := f.d, f.N, f.J
	U, bm, b0 := theta[:N*d], theta[N*d:N*d+N], theta[len(theta)-1]
	q := f.questions(theta)
	var gU, gbm, gq []float64
	if grad != nil {
		clear(grad)
		gU, gbm = grad[:N*d], grad[N*d:N*d+N]
		if f.Text {
			gq = f.gq
			clear(gq)
		} else {
			gq = grad[N*d+N : N*d+N+J*(d+1)]
		}
	}
	var L, gb0 float64
	for c := range y {
		i, j := int(r.Model[c]), int(r.Item[c])
		u, v := U[i*d:(i+1)*d], q[j*(d+1):(j+1)*(d+1)]
		z := bm[i] + v[d] + b0
		for k, uk := range u {
			z += uk * v[k]
		}
		L += w[c] * model.BCE(z, y[c])
		if grad == nil {
			continue
		}
		g := w[c] * (model.Sigmoid(z) - y[c])
		gu, gv := gU[i*d:(i+1)*d], gq[j*(d+1):(j+1)*(d+1)]
		for k := range u {
			gu[k] += g * v[k]
			gv[k] += g * u[k]
		}
		gbm[i] += g
		gv[d] += g
		gb0 += g
	}
	if !penalty {
		return L
	}
	jt := 0
	for _, t := range f.trainItem {
		if t {
			jt++
		}
	}
	lu, lq := f.lambda/float64(N), f.lambda/float64(max(jt, 1))
	for k, uk := range U {
		L += lu / 2 * uk * uk
		if grad != nil {
			gU[k] += lu * uk
		}
	}
	for j := 0; j < J; j++ {
		if !f.trainItem[j] {
			continue
		}
		for k := 0; k < d; k++ {
			v := q[j*(d+1)+k]
			L += lq / 2 * v * v
			if grad != nil {
				gq[j*(d+1)+k] += lq * v
			}
		}
	}
	if grad == nil {
		return L
	}
	grad[len(grad)-1] = gb0
	if f.Text { // back through q = X·Wᵀ + w₀
		gw := grad[N*d+N : N*d+N+(d+1)*f.FeatDim]
		gw0 := grad[N*d+N+(d+1)*f.FeatDim : len(grad)-1]
		blas64.Gemm(blas.Trans, blas.NoTrans, 1, gen64(J, d+1, gq), gen64(J, f.FeatDim, f.x), 0, gen64(d+1, f.FeatDim, gw))
		for j := 0; j < J; j++ {
			for k := range gw0 {
				gw0[k] += gq[j*(d+1)+k]
			}
		}
	}
	return L
}

// predict is P(correct) for r's cells.
func (f *mfFit) predict(theta []float64, r *model.Responses) []float64 {
	d, N := f.d, f.N
	U, bm, b0 := theta[:N*d], theta[N*d:N*d+N], theta[len(theta)-1]
	q := f.questions(theta)
	p := make([]float64, r.Len())
	for c := range p {
		i, j := int(r.Model[c]), int(r.Item[c])
		z := bm[i] + q[j*(d+1)+d] + b0
		for k := 0; k < d; k++ {
			z += U[i*d+k] * q[j*(d+1)+k]
		}
		p[c] = model.Sigmoid(z)
	}
	return p
}

func gen64(rows, cols int, data []float64) blas64.General {
	return blas64.General{Rows: rows, Cols: cols, Stride: cols, Data: data}
}
