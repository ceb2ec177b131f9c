package irt

import (
	"math"

	"github.com/jeirt/jeirt/model/simd"
)

// DefaultMaxGuess is the largest lower asymptote c_j a fitted 3PL may take
// (CBMM.MaxGuess): above it an item's floor would leave its slope and
// intercept to a handful of cells.
const DefaultMaxGuess = 0.5

// passAFamily is passA for weighted cells (several trials, graded scores)
// and for the 3PL. A cell of n trials and observed fraction ȳ = k/n has
// the loss
//
//	n·[softplus(u) − ȳ·u],  u = x/σ
//
// (the binomial negative log-likelihood up to a constant; for a graded score
// the quasi-likelihood of the fractional logit model), whose second
// derivative in x is at most n/(4σ²). Its quadratic majorizer is therefore
// n/(8σ²)·(x − ỹ)² + const with
//
//	ỹ = x + 4σ·(ȳ − sigmoid(u)),
//
// so the item and θ blocks are weighted least squares with weights n: the
// same exact block minimisers as passA's, with weighted sums. With ȳ ∈ {0, 1}
// and n = 1 this is passA's surrogate.
//
// The 3PL, P = c + (1 − c)·sigmoid(u), is fitted by EM on the latent
// "knew the answer" indicator (Dempster, Laird and Rubin 1977; the
// guessing-model EM of Bock and Aitkin 1981): a success was known with
// posterior probability ρ = sigmoid(u)/P, so at the current point the
// expected complete-data negative log-likelihood is
//
//	n·[softplus(u) − ȳρ·u]                      (the 2PL part, target ȳρ)
//	− n·[ȳ(1 − ρ)·log c + (1 − ȳ)·log(1 − c)]   (the guessing part)
//
// which majorizes the 3PL loss (Jensen) and touches it there. The 2PL part
// is majorized as above with target ȳρ; the guessing part is minimised
// exactly, c_j = G_j / (G_j + F_j) with G_j = Σ nȳ(1 − ρ) and F_j = Σ n(1 − ȳ),
// clipped to [0, MaxGuess] (the objective is concave in c, so the clipped
// value is the constrained optimum); with a Beta(α, β) prior on c_j (MAP),
// c_j = (G_j + α − 1)/(G_j + F_j + α + β − 2) and the loss carries the
// prior's −log density. Every block lowers the surrogate, so the 3PL loss
// never increases either.
func (b *cpuBatch) passAFamily(pr *cpuProblem, c int, update bool) float64 {
	p := pr.p
	r := b.rank
	inv, four := 1/b.sigma, 4*b.sigma
	theta := pr.theta
	loss := 0.0
	ws := pr.ws[c]
	acc := pr.acc[c]
	if update {
		clear(acc)
	}
	guess := b.fam.Guess
	pa, pb := b.fam.GuessPrior[0]-1, b.fam.GuessPrior[1]-1 // the Beta prior's exponents
	if !b.fam.FitGuess || pa < 0 || pb < 0 {
		pa, pb = 0, 0
	}
	for j := pr.chunks[c]; j < pr.chunks[c+1]; j++ {
		lo, hi := p.ItemStart[j], p.ItemStart[j+1]
		cells := p.Cells[lo:hi]
		var wt []float32
		var sc []float64
		if p.Weighted() {
			wt, sc = p.Weight[lo:hi], p.Score[lo:hi]
		}
		yt := pr.yTilde[c][:hi-lo]
		var cj, log1mc, gj, fj float64
		if guess {
			cj = pr.guess[j]
			log1mc = math.Log1p(-cj)
			if pa > 0 || pb > 0 {
				prior := -pb * log1mc
				if pa > 0 {
					prior -= pa * math.Log(cj)
				}
				loss += prior
			}
		}
		aj := pr.a[j*r : (j+1)*r]
		if pr.rg.on {
			loss += pr.rg.itemLoss(aj, pr.b[j])
		}
		m := r + 1
		G, h := ws.G[:m*m], ws.H[:m]
		if update {
			clear(G)
			clear(h)
		}
		// Rank 1: the weighted sums of ItemSolve1.
		var sw, st, stt, sy, sty float64
		for k, cell := range cells {
			i := int(cell >> 1)
			x := pr.b[j]
			if r == 1 {
				x += theta[i] * aj[0]
			} else {
				for d, v := range theta[i*r : i*r+r] {
					x += v * aj[d]
				}
			}
			w, yb := 1.0, float64(cell&1)
			if wt != nil {
				w, yb = float64(wt[k]), sc[k]
			}
			u := x * inv
			e := ExpNeg(-math.Abs(u))
			lq := math.Log1p(e) // log(1 + e^−|u|)
			sg := 1 / (1 + e)   // sigmoid(|u|)
			pos := u >= 0
			if !pos {
				sg = e * sg
			}
			target := yb
			if !guess {
				// n·[max(u, 0) − ȳu + log(1 + e^−|u|)], never negative.
				if pos {
					loss += w * ((1-yb)*u + lq)
				} else {
					loss += w * (-yb*u + lq)
				}
			} else {
				// log P and 1 − ρ without cancellation on either side of u = 0.
				var logP, notKnown float64
				if pos {
					logP = math.Log1p(-(1 - cj) * e / (1 + e))
					notKnown = cj * e / (1 + cj*e)
				} else {
					logP = math.Log(cj+e) - lq
					notKnown = cj / (cj + e)
				}
				sp := lq
				if pos {
					sp += u
				}
				loss -= w * (yb*logP + (1-yb)*(log1mc-sp))
				target = yb * (1 - notKnown)
				if update {
					gj += w * yb * notKnown
					fj += w * (1 - yb)
				}
			}
			if !update {
				continue
			}
			v := x + four*(target-sg)
			yt[k] = v
			if r == 1 {
				th := theta[i]
				sw += w
				st += w * th
				stt += w * th * th
				sy += w * v
				sty += w * th * v
				continue
			}
			th := theta[i*r : i*r+r]
			for d1 := 0; d1 < r; d1++ {
				row := G[d1*m : d1*m+m]
				wt1 := w * th[d1]
				for d2 := 0; d2 <= d1; d2++ {
					row[d2] += wt1 * th[d2]
				}
				row[r] += wt1
				h[d1] += wt1 * v
			}
			G[r*m+r] += w
			h[r] += w * v
		}
		if !update || len(cells) == 0 {
			continue
		}
		if r == 1 {
			b.itemUpdate1(pr, c, j, sw, st, stt, sy, sty)
		} else {
			b.solveItem(pr, ws, G, m, aj, &pr.b[j])
		}
		if guess && b.fam.FitGuess && gj+fj+pa+pb > 0 {
			pr.guess[j] = math.Min((gj+pa)/(gj+fj+pa+pb), b.fam.MaxGuess)
		}
		b.addItemWeighted(pr, acc, j, cells, yt, wt)
	}
	return loss
}

// addItemWeighted is addItem with each cell's weight n (wt; nil: 1).
func (b *cpuBatch) addItemWeighted(pr *cpuProblem, acc []float64, j int, cells []uint32, yt []float64, wt []float32) {
	r := b.rank
	bj := pr.b[j]
	weight := func(k int) float64 {
		if wt == nil {
			return 1
		}
		return float64(wt[k])
	}
	if r == 1 {
		aj := pr.a[j]
		if pr.rg.commonA {
			aj = 1 // the common slope is solved after the items (solveCommonA)
		}
		if aj == 0 {
			return
		}
		aj2 := aj * aj
		for k, cell := range cells {
			w := weight(k)
			i := int(cell>>1) * 2
			acc[i] += w * aj2
			acc[i+1] += w * aj * (yt[k] - bj)
		}
		return
	}
	wd := r*r + r
	aj := pr.a[j*r : (j+1)*r]
	for k, cell := range cells {
		w := weight(k)
		m := acc[int(cell>>1)*wd : int(cell>>1)*wd+wd]
		res := w * (yt[k] - bj)
		for d1 := 0; d1 < r; d1++ {
			wa := w * aj[d1]
			for d2 := 0; d2 <= d1; d2++ {
				m[d1*r+d2] += wa * aj[d2]
			}
			m[r*r+d1] += aj[d1] * res
		}
	}
}

// maxProdWeight is the largest trial count whose cells share a product of
// log factors in passA1Weighted; cells with more trials take their own log.
const maxProdWeight = 64

// passA1Weighted is passAFamily at rank 1 without asymptotes, written for
// speed as passA's binary loop is (the exponential inlined, no call per
// cell): the weighted loss, targets and sums of ItemSolve1, and the θ
// block's terms.
//
// Σ n·log(1 + e^−|u|) is taken, as passA takes Σ log(1 + e^−|u|), from
// products rather than one log per cell: the cells of n trials (n ≤ 64)
// multiply their factors 1 + e^−|u| ∈ (1, 2] into prod[n], and every 512
// cells each product touched adds n·log(prod[n]) (a product of at most 512
// factors cannot overflow).
func (b *cpuBatch) passA1Weighted(pr *cpuProblem, c int, update bool) float64 {
	p := pr.p
	inv, four := 1/b.sigma, 4*b.sigma
	theta := pr.theta
	loss := 0.0
	acc := pr.acc[c]
	if update {
		clear(acc)
	}
	var prod [maxProdWeight + 1]float64
	// The vector path's products in 4 lanes per trial count: a set of one
	// trial count (graded scores: every cell n = 1) would otherwise be one
	// chain of dependent multiplies, a multiply's latency per cell.
	var lanes [maxProdWeight + 1][4]float64
	for n := range prod {
		prod[n] = 1
		lanes[n] = [4]float64{1, 1, 1, 1}
	}
	flush := func() {
		for n := 1; n <= maxProdWeight; n++ {
			if prod[n] != 1 {
				loss += float64(n) * math.Log(prod[n])
				prod[n] = 1
			}
			if l := &lanes[n]; *l != [4]float64{1, 1, 1, 1} {
				loss += float64(n) * math.Log((l[0]*l[1])*(l[2]*l[3]))
				*l = [4]float64{1, 1, 1, 1}
			}
		}
	}
	counted := 0
	vector := simd.Current() != simd.Go
	for j := pr.chunks[c]; j < pr.chunks[c+1]; j++ {
		lo, hi := p.ItemStart[j], p.ItemStart[j+1]
		cells := p.Cells[lo:hi]
		wt, sc := p.Weight[lo:hi], p.Score[lo:hi]
		wt, sc = wt[:len(cells)], sc[:len(cells)]
		yt := pr.yTilde[c][:hi-lo]
		aj, bj := pr.a[j], pr.b[j]
		if pr.rg.on {
			loss += pr.rg.itemLoss(pr.a[j:j+1], bj)
		}
		var sw, st, stt, sy, sty float64
		if vector {
			// The same pass on model/simd's vector kernel (the loop below
			// is its pure-Go level, kept as it was); the log part from its
			// factors q, as below.
			var ytv []float64
			if update {
				ytv = yt
			}
			q := pr.q[c][:len(cells)]
			s := simd.LogisticCells{A: aj, B: bj, Sigma: b.sigma}.Weighted(cells, wt, sc, theta, ytv, q)
			loss += s.Linear
			for k, qk := range q {
				if n := int(wt[k]); n <= maxProdWeight {
					lanes[n][counted&3] *= qk
				} else {
					loss += float64(wt[k]) * math.Log(qk)
				}
				counted++
				if counted&511 == 0 {
					flush()
				}
			}
			sw, st, stt, sy, sty = s.Trials, s.Theta, s.Theta2, s.Target, s.ThetaTarget
		}
		scalar := cells // the pure-Go level's loop; the vector pass did these cells
		if vector {
			scalar = nil
		}
		for k, cell := range scalar {
			th := theta[cell>>1]
			x := th*aj + bj
			w, yb := float64(wt[k]), sc[k]
			u := x * inv
			// e = e^−|u| as in passA.
			z := -math.Abs(u)
			if z < -708 {
				z = -708
			}
			kz := int64(z*expInvLn2x64 - 0.5)
			kf := float64(kz)
			rz := (z - kf*expLn2x64Hi) - kf*expLn2x64Lo
			e := expTable[kz&63] * (1 + rz*(1+rz*(1.0/2+rz*(1.0/6+rz*(1.0/24+rz*(1.0/120)))))) *
				math.Float64frombits(uint64(kz>>6+1023)<<52)
			q := 1 + e
			sg := 1 / q // sigmoid(|u|)
			neg := float64(math.Float64bits(u) >> 63)
			// n·[max(u, 0) − ȳu] here, n·log(1 + e^−|u|) through prod.
			loss += w * (u*(1-neg) - yb*u)
			if n := int(wt[k]); n <= maxProdWeight {
				prod[n] *= q
			} else {
				loss += w * math.Log(q)
			}
			counted++
			if counted&511 == 0 {
				flush()
			}
			sg += neg * (1 - 2*sg) // sigmoid(u)
			if update {
				v := x + four*(yb-sg)
				yt[k] = v
				wth, wv := w*th, w*v
				sw += w
				st += wth
				stt += wth * th
				sy += wv
				sty += th * wv
			}
		}
		if !update || len(cells) == 0 {
			continue
		}
		b.itemUpdate1(pr, c, j, sw, st, stt, sy, sty)
		if aj = pr.a[j]; pr.rg.commonA {
			aj = 1 // the common slope is solved after the items (solveCommonA)
		}
		if aj == 0 {
			continue
		}
		bj = pr.b[j]
		aj2 := aj * aj
		for k, cell := range cells {
			w := float64(wt[k])
			i := int(cell>>1) * 2
			acc[i] += w * aj2
			acc[i+1] += w * aj * (yt[k] - bj)
		}
	}
	flush()
	return loss
}
