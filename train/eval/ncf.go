package eval

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/blas"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/simd"
)

// NCF is torch_measure's neural collaborative filter (its
// baselines/ncf.py, NCFHead): the concatenation [e_i, x_j] of a model
// vector and the question's encoder vector through
//
//	Linear(256), LayerNorm, GELU, Dropout(0.1), Linear(128), LayerNorm, GELU, Dropout(0.1), Linear(1)
//
// and P(correct) = σ(that), trained by binary cross-entropy with AdamW at
// torch_measure's lr 1e-3 and weight decay 1e-4, PyTorch's initialisation.
// torch_measure embeds a model by its name's sentence embedding; here e_i
// is learned (ModelDim wide, N(0, 1) as nn.Embedding), so a question new
// to training is predicted from its text and a model needs training cells.
// The first layer is computed as W_e·e_i + W_x·x_j, each part once per
// model and per question of a batch, and a batch is every training cell of
// a few questions (at least BatchCells): the same function and gradient as
// the concatenation, at the cost of a layer per question rather than per
// cell. Training stops when the validation loss has not improved for two
// epochs (at most MaxEpochs) and keeps the best epoch.
type NCF struct {
	Features []float32 // J x FeatDim encoder vectors of every item
	FeatDim  int
	// ModelDim is e_i's width; 0 means 32. MaxEpochs is 0 for 10
	// (torch_measure's epochs), BatchCells 0 for 512.
	ModelDim, MaxEpochs, BatchCells int
	Seed                            uint64
}

const (
	ncfH1, ncfH2 = 256, 128
	ncfDropout   = 0.1
	ncfLR, ncfWD = 1e-3, 1e-4
)

// NCFResult is what NCF.Fit trained and predicted.
type NCFResult struct {
	Pred      []float64 // P(correct) of the test cells
	Epochs    int       // epochs run
	BestEpoch int
	ValLoss   float64 // NaN without validation cells
}

// ncfNet is NCF's parameters, views of one vector (theta) for AdamW.
type ncfNet struct {
	theta                                   []float32
	E, We, Wx, b1, g1, be1, W2, b2, g2, be2 []float32
	w3, b3                                  []float32
	N, J, D, dm                             int
}

func newNCFNet(N, J, D, dm int) *ncfNet {
	n := &ncfNet{N: N, J: J, D: D, dm: dm}
	sizes := []int{N * dm, ncfH1 * dm, ncfH1 * D, ncfH1, ncfH1, ncfH1, ncfH2 * ncfH1, ncfH2, ncfH2, ncfH2, ncfH2, 1}
	total := 0
	for _, s := range sizes {
		total += s
	}
	n.theta = make([]float32, total)
	views := []*[]float32{&n.E, &n.We, &n.Wx, &n.b1, &n.g1, &n.be1, &n.W2, &n.b2, &n.g2, &n.be2, &n.w3, &n.b3}
	off := 0
	for k, s := range sizes {
		*views[k] = n.theta[off : off+s]
		off += s
	}
	return n
}

// like is a net of the same shape whose views cover theta (a gradient or
// a copy).
func (n *ncfNet) like(theta []float32) *ncfNet {
	m := newNCFNet(n.N, n.J, n.D, n.dm)
	copy(m.theta, theta)
	return m
}

// ncfPass holds one batch's activations for the backward pass.
type ncfPass struct {
	B                    int
	y1, a1, d1, m1, r1   []float32 // LN1 output, GELU, dropout output, mask, 1/σ per row
	y2, a2, d2, m2, r2   []float32
	n1, n2               []float32 // normalised (before γ, β)
	h1, h2, z, tmp, tmp2 []float32
}

func grow(b []float32, n int) []float32 {
	if cap(b) < n {
		return make([]float32, n)
	}
	return b[:n]
}

// layerNorm normalises each row of h (width w) into n, writes γ·n + β into
// y and 1/σ into r.
func layerNorm(h, n, y, r, g, be []float32, rows, w int) {
	for b := 0; b < rows; b++ {
		row := h[b*w : (b+1)*w]
		var mu, v float64
		for _, x := range row {
			mu += float64(x)
		}
		mu /= float64(w)
		for _, x := range row {
			v += (float64(x) - mu) * (float64(x) - mu)
		}
		rs := 1 / math.Sqrt(v/float64(w)+1e-5)
		r[b] = float32(rs)
		for k, x := range row {
			nk := float32((float64(x) - mu) * rs)
			n[b*w+k] = nk
			y[b*w+k] = nk*g[k] + be[k]
		}
	}
}

// forward runs the net on cells (model, item) given A = W_e·E (N x 256) and
// C = W_x·X + b1 for the items (row of item j at crow[j]); with rng, dropout
// is on. It returns the logits in p.z.
func (n *ncfNet) forward(p *ncfPass, model_, item []int32, A, C []float32, crow []int32, rng *rand.Rand) {
	B := len(model_)
	p.B = B
	p.h1 = grow(p.h1, B*ncfH1)
	for b := 0; b < B; b++ {
		h, a, c := p.h1[b*ncfH1:(b+1)*ncfH1], A[int(model_[b])*ncfH1:], C[int(crow[item[b]])*ncfH1:]
		for k := range h {
			h[k] = a[k] + c[k]
		}
	}
	p.n1, p.y1, p.a1, p.d1, p.r1 = grow(p.n1, B*ncfH1), grow(p.y1, B*ncfH1), grow(p.a1, B*ncfH1), grow(p.d1, B*ncfH1), grow(p.r1, B)
	layerNorm(p.h1, p.n1, p.y1, p.r1, n.g1, n.be1, B, ncfH1)
	simd.GELU(p.a1, p.y1)
	p.m1 = dropout(p.d1, p.a1, p.m1, rng)
	p.h2 = grow(p.h2, B*ncfH2)
	simd.SgemmBias(blas.NoTrans, blas.Trans, B, ncfH2, ncfH1, 1, p.d1, ncfH1, n.W2, ncfH1, 0, p.h2, ncfH2, n.b2)
	p.n2, p.y2, p.a2, p.d2, p.r2 = grow(p.n2, B*ncfH2), grow(p.y2, B*ncfH2), grow(p.a2, B*ncfH2), grow(p.d2, B*ncfH2), grow(p.r2, B)
	layerNorm(p.h2, p.n2, p.y2, p.r2, n.g2, n.be2, B, ncfH2)
	simd.GELU(p.a2, p.y2)
	p.m2 = dropout(p.d2, p.a2, p.m2, rng)
	p.z = grow(p.z, B)
	for b := 0; b < B; b++ {
		s := n.b3[0]
		for k, x := range p.d2[b*ncfH2 : (b+1)*ncfH2] {
			s += x * n.w3[k]
		}
		p.z[b] = s
	}
}

// dropout writes a·mask/(1−p) into d and returns the scaled mask: without
// rng (no dropout) d is a copy of a and the mask all ones.
// An element is dropped when a 16-bit slice of a random word is below
// drop (0.1·2¹⁶, rounded up): four elements per draw.
func dropout(d, a, mask []float32, rng *rand.Rand) []float32 {
	mask = grow(mask, len(a))
	const drop = 6554 // ⌈0.1·2¹⁶⌉: P(drop) = 0.10001
	var bits uint64
	for k := range a {
		mask[k] = 1
		if rng != nil {
			if k%4 == 0 {
				bits = rng.Uint64()
			}
			mask[k] = 1 / (1 - ncfDropout)
			if bits&0xffff < drop {
				mask[k] = 0
			}
			bits >>= 16
		}
		d[k] = a[k] * mask[k]
	}
	return mask
}

// geluBack turns dA (the gradient at GELU's output a = gelu(y)) into the
// gradient at y: gelu'(y) = Φ(y) + y·φ(y), Φ(y) = a/y.
func geluBack(dA, y, a, buf []float32) {
	for k, v := range y {
		buf[k] = -v * v / 2
	}
	simd.Exp(buf, buf)
	const invSqrt2Pi = 0.3989422804014327
	for k, v := range y {
		phi := invSqrt2Pi * buf[k]
		Phi := float32(0.5) + v*invSqrt2Pi
		if v > 1e-3 || v < -1e-3 {
			Phi = a[k] / v
		}
		dA[k] *= Phi + v*phi
	}
}

// layerNormBack turns dY (at γ·n + β) into the gradient at the LayerNorm's
// input, in place, adding to dγ and dβ.
func layerNormBack(dY, n, r, g, dg, dbe []float32, rows, w int) {
	for b := 0; b < rows; b++ {
		dy, nr := dY[b*w:(b+1)*w], n[b*w:(b+1)*w]
		var s1, s2 float64
		for k := range dy {
			dg[k] += dy[k] * nr[k]
			dbe[k] += dy[k]
			dn := dy[k] * g[k]
			s1 += float64(dn)
			s2 += float64(dn) * float64(nr[k])
		}
		m1, m2 := float32(s1/float64(w)), float32(s2/float64(w))
		for k := range dy {
			dy[k] = r[b] * (dy[k]*g[k] - m1 - nr[k]*m2)
		}
	}
}

// backward adds to grad the gradient of Σ_b dz[b]·z[b] through the batch's
// pass; dA (N x 256) and dC (rows of the batch's items) receive the first
// layer's input gradients.
func (n *ncfNet) backward(p *ncfPass, grad *ncfNet, dz []float32, model_, item []int32, crow []int32, dA, dC []float32) {
	B := p.B
	dd2 := grow(p.tmp, B*ncfH2)
	for b := 0; b < B; b++ {
		grad.b3[0] += dz[b]
		for k := 0; k < ncfH2; k++ {
			grad.w3[k] += dz[b] * p.d2[b*ncfH2+k]
			dd2[b*ncfH2+k] = dz[b] * n.w3[k] * p.m2[b*ncfH2+k]
		}
	}
	p.tmp2 = grow(p.tmp2, B*ncfH1)
	geluBack(dd2, p.y2, p.a2, p.tmp2[:B*ncfH2])
	layerNormBack(dd2, p.n2, p.r2, n.g2, grad.g2, grad.be2, B, ncfH2)
	for b := 0; b < B; b++ {
		for k := 0; k < ncfH2; k++ {
			grad.b2[k] += dd2[b*ncfH2+k]
		}
	}
	simd.Sgemm(blas.Trans, blas.NoTrans, ncfH2, ncfH1, B, 1, dd2, ncfH2, p.d1, ncfH1, 1, grad.W2, ncfH1)
	dd1 := p.h1 // the pre-activations are no longer needed
	simd.Sgemm(blas.NoTrans, blas.NoTrans, B, ncfH1, ncfH2, 1, dd2, ncfH2, n.W2, ncfH1, 0, dd1, ncfH1)
	p.tmp = dd2
	for k := range dd1 {
		dd1[k] *= p.m1[k]
	}
	geluBack(dd1, p.y1, p.a1, p.tmp2)
	layerNormBack(dd1, p.n1, p.r1, n.g1, grad.g1, grad.be1, B, ncfH1)
	for b := 0; b < B; b++ {
		g := dd1[b*ncfH1 : (b+1)*ncfH1]
		simd.Axpy(dA[int(model_[b])*ncfH1:(int(model_[b])+1)*ncfH1], g, 1)
		row := int(crow[item[b]])
		simd.Axpy(dC[row*ncfH1:(row+1)*ncfH1], g, 1)
	}
}

// Fit trains on trainR (early stopping on valR) and predicts testR's cells;
// the three share their models and items.
func (nc NCF) Fit(ctx context.Context, trainR, valR, testR *model.Responses) (*NCFResult, error) {
	N, J, D := trainR.NumModels(), trainR.NumItems(), nc.FeatDim
	if len(nc.Features) != J*D {
		return nil, fmt.Errorf("ncf: %d feature values for %d items of width %d", len(nc.Features), J, D)
	}
	dm, maxEpochs, batchCells := nc.ModelDim, nc.MaxEpochs, nc.BatchCells
	if dm == 0 {
		dm = 32
	}
	if maxEpochs == 0 {
		maxEpochs = 10
	}
	if batchCells == 0 {
		batchCells = 512
	}
	rng := rand.New(rand.NewPCG(nc.Seed, 3))
	net := newNCFNet(N, J, D, dm)
	for k := range net.E {
		net.E[k] = float32(rng.NormFloat64())
	}
	uniform := func(w []float32, fanIn int) {
		bound := 1 / math.Sqrt(float64(fanIn))
		for k := range w {
			w[k] = float32(bound * (2*rng.Float64() - 1))
		}
	}
	uniform(net.We, dm+D) // one Linear over the concatenation
	uniform(net.Wx, dm+D)
	uniform(net.b1, dm+D)
	uniform(net.W2, ncfH1)
	uniform(net.b2, ncfH1)
	uniform(net.w3, ncfH2)
	uniform(net.b3, ncfH2)
	for k := range net.g1 {
		net.g1[k] = 1
	}
	for k := range net.g2 {
		net.g2[k] = 1
	}
	grad := net.like(nil)
	m1, m2 := make([]float32, len(net.theta)), make([]float32, len(net.theta))
	best := net.like(net.theta)
	bestLoss, bestEpoch, epochs, bad := math.Inf(1), 0, 0, 0
	byItem := trainR.ByItem()
	order := make([]int, J)
	for j := range order {
		order[j] = j
	}
	ty, tw := cellTargets(trainR)
	var p ncfPass
	A := make([]float32, N*ncfH1)
	dA := make([]float32, N*ncfH1)
	crow := make([]int32, J)
	step := 0
	for epochs < maxEpochs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		epochs++
		rng.Shuffle(J, func(a, b int) { order[a], order[b] = order[b], order[a] })
		for start := 0; start < J; {
			// A batch: whole questions until batchCells cells.
			var items []int
			var cells []int32
			for start < J && len(cells) < batchCells {
				j := order[start]
				start++
				if row := byItem.Row(j); len(row) > 0 {
					crow[j] = int32(len(items))
					items = append(items, j)
					cells = append(cells, row...)
				}
			}
			if len(cells) == 0 {
				continue
			}
			net.batchGrad(&p, grad, nc.Features, items, cells, trainR, crow, A, dA, rng, func(z []float32, dz []float32) {
				var wsum float64
				for _, c := range cells {
					wsum += tw[c]
				}
				for b, c := range cells {
					dz[b] = float32(tw[c] / wsum * (model.Sigmoid(float64(z[b])) - ty[c]))
				}
			})
			step++
			adamW(net.theta, grad.theta, m1, m2, step)
		}
		if valR.Len() == 0 {
			continue
		}
		l := ncfLoss(net, nc.Features, valR, &p)
		if l < bestLoss {
			bestLoss, bestEpoch, bad = l, epochs, 0
			copy(best.theta, net.theta)
		} else if bad++; bad >= 2 {
			break
		}
	}
	res := &NCFResult{Epochs: epochs, BestEpoch: bestEpoch, ValLoss: bestLoss}
	if valR.Len() == 0 {
		best, res.BestEpoch, res.ValLoss = net, epochs, math.NaN()
	}
	res.Pred = ncfPredict(best, nc.Features, testR, &p)
	return res, nil
}

// batchGrad writes into grad the gradient of Σ_b dz_b·z_b over the batch of
// r's cells (whose questions are items, question j at row crow[j]), dz set
// by dzOf from the logits z; A and dA are N x 256 scratch. With rng the
// pass has dropout.
func (n *ncfNet) batchGrad(p *ncfPass, grad *ncfNet, feat []float32, items []int, cells []int32, r *model.Responses, crow []int32, A, dA []float32, rng *rand.Rand, dzOf func(z, dz []float32)) {
	N, D, dm := n.N, n.D, n.dm
	B, k := len(cells), len(items)
	xk := make([]float32, k*D)
	for row, j := range items {
		copy(xk[row*D:(row+1)*D], feat[j*D:(j+1)*D])
	}
	C := make([]float32, k*ncfH1)
	simd.SgemmBias(blas.NoTrans, blas.Trans, k, ncfH1, D, 1, xk, D, n.Wx, D, 0, C, ncfH1, n.b1)
	simd.Sgemm(blas.NoTrans, blas.Trans, N, ncfH1, dm, 1, n.E, dm, n.We, dm, 0, A, ncfH1)
	mi, ii := make([]int32, B), make([]int32, B)
	for b, c := range cells {
		mi[b], ii[b] = r.Model[c], r.Item[c]
	}
	n.forward(p, mi, ii, A, C, crow, rng)
	dz := make([]float32, B)
	dzOf(p.z, dz)
	clear(grad.theta)
	clear(dA)
	dC := make([]float32, k*ncfH1)
	n.backward(p, grad, dz, mi, ii, crow, dA, dC)
	simd.Sgemm(blas.Trans, blas.NoTrans, ncfH1, D, k, 1, dC, ncfH1, xk, D, 0, grad.Wx, D)
	for row := 0; row < k; row++ {
		simd.Axpy(grad.b1, dC[row*ncfH1:(row+1)*ncfH1], 1)
	}
	simd.Sgemm(blas.Trans, blas.NoTrans, ncfH1, dm, N, 1, dA, ncfH1, n.E, dm, 0, grad.We, dm)
	simd.Sgemm(blas.NoTrans, blas.NoTrans, N, dm, ncfH1, 1, dA, ncfH1, n.We, dm, 0, grad.E, dm)
}

// adamW is PyTorch's AdamW step (decoupled decay, then Adam; β 0.9, 0.999,
// ε 1e-8) at torch_measure's lr and weight decay.
func adamW(theta, g, m, v []float32, step int) {
	const b1, b2, eps = 0.9, 0.999, 1e-8
	c1, c2 := 1-math.Pow(b1, float64(step)), 1-math.Pow(b2, float64(step))
	for k := range theta {
		theta[k] -= float32(ncfLR * ncfWD * float64(theta[k]))
		m[k] = b1*m[k] + (1-b1)*g[k]
		v[k] = b2*v[k] + (1-b2)*g[k]*g[k]
		theta[k] -= float32(ncfLR * (float64(m[k]) / c1) / (math.Sqrt(float64(v[k])/c2) + eps))
	}
}

// ncfPredict is P(correct) of r's cells, without dropout.
func ncfPredict(net *ncfNet, feat []float32, r *model.Responses, p *ncfPass) []float64 {
	N, J := net.N, net.J
	A := make([]float32, N*ncfH1)
	simd.Sgemm(blas.NoTrans, blas.Trans, N, ncfH1, net.dm, 1, net.E, net.dm, net.We, net.dm, 0, A, ncfH1)
	C := make([]float32, J*ncfH1)
	simd.SgemmBias(blas.NoTrans, blas.Trans, J, ncfH1, net.D, 1, feat, net.D, net.Wx, net.D, 0, C, ncfH1, net.b1)
	crow := make([]int32, J)
	for j := range crow {
		crow[j] = int32(j)
	}
	out := make([]float64, r.Len())
	const chunk = 4096
	for s := 0; s < r.Len(); s += chunk {
		e := min(s+chunk, r.Len())
		net.forward(p, r.Model[s:e], r.Item[s:e], A, C, crow, nil)
		for b := range p.z[:e-s] {
			out[s+b] = model.Sigmoid(float64(p.z[b]))
		}
	}
	return out
}

// ncfLoss is the weighted BCE of r's cells.
func ncfLoss(net *ncfNet, feat []float32, r *model.Responses, p *ncfPass) float64 {
	pred := ncfPredict(net, feat, r, p)
	y, w := cellTargets(r)
	var L float64
	for c, pc := range pred {
		pc = min(max(pc, 1e-15), 1-1e-15)
		L -= w[c] * (y[c]*math.Log(pc) + (1-y[c])*math.Log(1-pc))
	}
	return L
}
