package irtstat

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/train/irt"
)

// Laplace computes the standard errors and normal intervals of a maximum a
// posteriori fit (irt.CBMM with a Prior) from the curvature of the negative
// log posterior at the estimate: the Laplace approximation, the posterior
// taken as normal with covariance the inverse Hessian. The Hessian is the
// likelihood's (each cell's n trials; a graded score counts as one trial
// with a fractional success) plus the prior's precision on every parameter
// (θ: 1/Theta², a: 1/(σ²·A²), d: 1/(σ²·D²), as irt.NewPriorGrad applies it).
// The 3PL's lower asymptotes are held fixed, and so is the 1PL's common
// slope (its SEs are NaN).
//
// The parameters form two block-diagonal sides, an r x r block per model
// (θ_i) and an (r+1) x (r+1) block per item (a_j, d_j), coupled by the cells.
// The full joint inverse is computed by the Schur complement on the smaller
// side (dense, of size N·r or J·(r+1)); above MaxJoint, or when that would
// take too long, each block is inverted alone (the conditional, block-
// diagonal inverse, which leaves out the θ-item coupling and so
// understates the uncertainty). LaplaceResult.Joint says which was used.
//
// Without a prior (joint maximum likelihood) the Hessian is singular in the
// gauge's directions and the standard errors are not meaningful: use the
// bootstrap there.
//
// Coverage (scripts/coverage.sh: 2PL data simulated from the default
// prior's fits of shipped sets, 50 sets per shape): the joint intervals
// cover a and d 95–98% of the time in every shape but LSAT7's 5 items
// (a: 62%), and θ 95–98% with at least ~100 models; with few models and
// many items (ChemBench, 22 x 2,854) θ is covered only ~60% of the time:
// the prior fixes θ's location from thousands of items' small biases, which
// shift every θ alike (by about −0.2 there) by more than its se. The
// bootstrap's se covers there; jeirt writes the wider of the two.
type Laplace struct {
	Fitter irt.CBMM // its Prior, Sigma, Signed and Model (1pl, 2pl, 3pl)
	Level  float64  // interval level; 0 means 0.95
	// MaxJoint caps the size of the dense Schur complement; 0 means
	// DefaultMaxJoint, negative always uses the block-diagonal inverse.
	MaxJoint int
	// Expected uses the expected (Fisher) information of the cells instead
	// of the observed Hessian (which has the residuals' θ-slope cross
	// terms). The observed Hessian is the exact Laplace approximation; it
	// falls back to the expected one where it is not positive definite.
	Expected bool
}

// DefaultMaxJoint is Laplace.MaxJoint's default.
const DefaultMaxJoint = 3000

// maxJointWork caps the flops of the Schur complement's sums over pairs of
// cells that share a block of the larger side.
const maxJointWork = 4e9

// LaplaceResult holds the Laplace approximation's standard errors and
// intervals est ± z·se, indexed like the fit (θ N x r, A J x r, the
// intercept and the difficulty J), NaN where undefined (a parameter with
// a NaN estimate, a singular block, a zero slope's difficulty). A slope of
// a nonnegative fit has its interval clipped at 0: one at the bound a = 0
// gets the one-sided [0, z·se].
type LaplaceResult struct {
	Level float64
	// Joint is true when the covariances are the full joint inverse of the
	// Hessian, false when they are the block-diagonal (conditional) ones.
	Joint bool
	// Expected is true when the expected information was used (asked for,
	// or the observed Hessian was not positive definite).
	Expected bool
	// Method says the above in words, for fit.json.
	Method                    string
	ThetaSE, ThetaLo, ThetaHi []float64
	ASE, ALo, AHi             []float64
	BSE, BLo, BHi             []float64 // the intercept b (items.csv's d)
	// The difficulty −b/a (−b/‖a‖ at rank > 1, model.Difficulty) by the
	// delta method, NaN where ‖a‖ = 0.
	DiffSE, DiffLo, DiffHi []float64
}

// Run computes the standard errors of the fit f of r.
func (l Laplace) Run(r *model.Responses, f *model.IRT) (*LaplaceResult, error) {
	if l.Level == 0 {
		l.Level = 0.95
	}
	if !(l.Level > 0 && l.Level < 1) {
		return nil, fmt.Errorf("laplace: level %g is not in (0, 1)", l.Level)
	}
	if l.MaxJoint == 0 {
		l.MaxJoint = DefaultMaxJoint
	}
	c := l.Fitter
	c.Sigma, c.Rank, c.Signed = f.Sigma, f.Rank, f.Signed
	if c.Model == "" {
		c.Model = f.Family
	}
	if c.Sigma == 0 {
		c.Sigma = 1
	}
	cv, joint, expected := l.covariances(r, f, c, l.Expected)
	if !expected && cv == nil {
		cv, joint, expected = l.covariances(r, f, c, true)
	}
	res := &LaplaceResult{Level: l.Level, Joint: joint, Expected: expected}
	res.Method = "Laplace approximation (curvature of the negative log posterior at the estimate), "
	if joint {
		res.Method += "full joint inverse"
	} else {
		res.Method += "block-diagonal (conditional) inverse"
	}
	if expected {
		res.Method += ", expected information"
	}
	l.summarise(res, f, cv)
	return res, nil
}

// covs are the covariance blocks: per model r x r, per item p x p.
type covs struct {
	theta [][]float64
	item  [][]float64
	p     int // item block size: r+1, or 1 for the 1PL (its slope fixed)
}

// entry is one cell's coupling block between a block s of the small side and
// a block of the large side, oriented small x large.
type entry struct {
	s int
	m []float64
}

// covariances builds the Hessian blocks and inverts them, jointly when it
// can. It returns nil when the observed Hessian is not positive definite.
func (l Laplace) covariances(r *model.Responses, f *model.IRT, c irt.CBMM, expected bool) (*covs, bool, bool) {
	N, J, rk := len(f.Models), len(f.Items), f.Rank
	sig := c.Sigma
	onePL := c.Model.CommonSlope()
	p := rk + 1
	if onePL {
		p = 1
	}
	pg := irt.NewPriorGrad(c, f)
	var precT, precA, precB float64
	if pg.On() {
		precT, precA, precB = pg.Theta(1)-pg.Theta(0), pg.A(1)-pg.A(0), pg.B(1)-pg.B(0)
	}
	T := make([][]float64, N)
	for i := range T {
		T[i] = make([]float64, rk*rk)
		for d := 0; d < rk; d++ {
			T[i][d*rk+d] = precT
		}
	}
	I := make([][]float64, J)
	for j := range I {
		I[j] = make([]float64, p*p)
		if !onePL {
			for d := 0; d < rk; d++ {
				I[j][d*p+d] = precA
			}
		}
		I[j][p*p-1] = precB
	}
	// coupling writes a cell's coupling block, oriented θ x item (rk x p),
	// into m: h·a·[θ; 1]ᵀ plus g on the θ_k–a_k diagonal (the observed
	// Hessian's residual term); ok is false for a cell without a finite logit.
	coupling := func(cell int, m []float64) (h float64, ok bool) {
		i, j := int(r.Model[cell]), int(r.Item[cell])
		x := f.Logit(i, j)
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return 0, false
		}
		n, k := float64(r.TrialsAt(cell)), r.SuccessesAt(cell)
		cj := 0.0
		if f.C != nil {
			cj = f.C[j]
		}
		g, h := cellDerivs(x, sig, cj, n, k, expected)
		if m == nil {
			return h, true
		}
		a := f.A[j*rk : (j+1)*rk]
		for d := 0; d < rk; d++ {
			for e := 0; e < p; e++ {
				u := 1.0
				if !onePL && e < rk {
					u = f.Theta[i*rk+e]
				}
				m[d*p+e] = h * a[d] * u
			}
			if !onePL && !expected {
				m[d*p+d] += g
			}
		}
		return h, true
	}
	u := make([]float64, p)
	for cell := range r.Label {
		h, ok := coupling(cell, nil)
		if !ok {
			continue
		}
		i, j := int(r.Model[cell]), int(r.Item[cell])
		a := f.A[j*rk : (j+1)*rk]
		Ti := T[i]
		for d := 0; d < rk; d++ {
			for e := 0; e < rk; e++ {
				Ti[d*rk+e] += h * a[d] * a[e]
			}
		}
		if onePL {
			u[0] = 1
		} else {
			copy(u, f.Theta[i*rk:(i+1)*rk])
			u[rk] = 1
		}
		Ij := I[j]
		for d := 0; d < p; d++ {
			for e := 0; e < p; e++ {
				Ij[d*p+e] += h * u[d] * u[e]
			}
		}
	}
	// Invert every block; a singular one (no prior and no information) is
	// left out (nil): its parameters' SEs are NaN.
	Tinv := make([][]float64, N)
	for i := range T {
		Tinv[i] = invSPD(T[i], rk)
	}
	Iinv := make([][]float64, J)
	for j := range I {
		Iinv[j] = invSPD(I[j], p)
	}
	// The observed Hessian's blocks (no residual terms within a block) are
	// positive semidefinite; a failure there is the expected one's too.
	thetaSmall := N*rk <= J*p
	small := min(N*rk, J*p)
	// The work of the pairs' sums: Σ over the large side's blocks of the
	// square of their cells.
	var ix *model.Index
	if thetaSmall {
		ix = r.ByItem()
	} else {
		ix = r.ByModel()
	}
	work := 0.0
	for L := 0; L+1 < len(ix.Start); L++ {
		v := float64(ix.Start[L+1] - ix.Start[L])
		work += v * v * float64(rk*p*max(rk, p))
	}
	work += float64(small) * float64(small) * float64(small) / 3
	joint := l.MaxJoint > 0 && small <= l.MaxJoint && work <= maxJointWork
	if !joint {
		return &covs{theta: Tinv, item: Iinv, p: p}, false, expected
	}
	// Group the coupling blocks by their large-side block, oriented small x large.
	var ps, pl int
	var largeInv [][]float64
	var smallH [][]float64
	nLarge := J
	if thetaSmall {
		ps, pl, largeInv, smallH = rk, p, Iinv, T
	} else {
		ps, pl, largeInv, smallH, nLarge = p, rk, Tinv, I, N
	}
	// entries are the coupling blocks of large-side block L's cells,
	// oriented small x large, with live blocks on both sides.
	buf := make([]float64, rk*p)
	entries := func(L int, es []entry) []entry {
		es = es[:0]
		for _, c := range ix.Row(L) {
			cell := int(c)
			i, j := int(r.Model[cell]), int(r.Item[cell])
			if Tinv[i] == nil || Iinv[j] == nil {
				continue
			}
			m := make([]float64, rk*p)
			if _, ok := coupling(cell, m); !ok {
				continue
			}
			if thetaSmall {
				es = append(es, entry{i, m})
				continue
			}
			copy(buf, m) // transpose: p x rk
			for d := 0; d < rk; d++ {
				for e := 0; e < p; e++ {
					m[e*rk+d] = buf[d*p+e]
				}
			}
			es = append(es, entry{j, m})
		}
		return es
	}
	nSmall := len(smallH)
	// S = small blocks − Σ_L Σ_{e,e'} M_e L⁻¹ M_e'ᵀ. Singular small blocks
	// are kept out of S as an identity (their rows then say nothing).
	S := mat.NewSymDense(small, nil)
	dead := make([]bool, nSmall)
	for s := 0; s < nSmall; s++ {
		if (thetaSmall && Tinv[s] == nil) || (!thetaSmall && Iinv[s] == nil) {
			dead[s] = true
			for d := 0; d < ps; d++ {
				S.SetSym(s*ps+d, s*ps+d, 1)
			}
			continue
		}
		for d := 0; d < ps; d++ {
			for e := d; e < ps; e++ {
				S.SetSym(s*ps+d, s*ps+e, smallH[s][d*ps+e])
			}
		}
	}
	raw := S.RawSymmetric().Data
	stride := S.RawSymmetric().Stride
	W := make([]float64, 0)
	var es []entry
	for L := 0; L < nLarge; L++ {
		es = entries(L, es)
		if len(es) == 0 || largeInv[L] == nil {
			continue
		}
		Li := largeInv[L]
		// W_e = M_e L⁻¹ (ps x pl)
		W = W[:0]
		for _, e := range es {
			for d := 0; d < ps; d++ {
				for q := 0; q < pl; q++ {
					v := 0.0
					for t := 0; t < pl; t++ {
						v += e.m[d*pl+t] * Li[t*pl+q]
					}
					W = append(W, v)
				}
			}
		}
		for x, e := range es {
			we := W[x*ps*pl : (x+1)*ps*pl]
			for _, e2 := range es {
				// Fill the upper triangle of the symmetric S only.
				for d := 0; d < ps; d++ {
					row := e.s*ps + d
					for d2 := 0; d2 < ps; d2++ {
						col := e2.s*ps + d2
						if col < row {
							continue
						}
						v := 0.0
						for t := 0; t < pl; t++ {
							v += we[d*pl+t] * e2.m[d2*pl+t]
						}
						raw[row*stride+col] -= v
					}
				}
			}
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(S) {
		if expected {
			// The expected information plus the prior is positive
			// definite; a failure here is numerical: the blocks alone.
			return &covs{theta: Tinv, item: Iinv, p: p}, false, expected
		}
		return nil, false, false
	}
	var Sinv mat.SymDense
	if err := ch.InverseTo(&Sinv); err != nil {
		if expected {
			return &covs{theta: Tinv, item: Iinv, p: p}, false, expected
		}
		return nil, false, false
	}
	si := Sinv.RawSymmetric()
	sAt := func(a, b int) float64 {
		if a > b {
			a, b = b, a
		}
		return si.Data[a*si.Stride+b]
	}
	smallCov := make([][]float64, nSmall)
	for s := 0; s < nSmall; s++ {
		if dead[s] {
			continue
		}
		blk := make([]float64, ps*ps)
		for d := 0; d < ps; d++ {
			for e := 0; e < ps; e++ {
				blk[d*ps+e] = sAt(s*ps+d, s*ps+e)
			}
		}
		smallCov[s] = blk
	}
	// Each large block: L⁻¹ + L⁻¹ (Σ_{e,e'} M_eᵀ Σ_small[s_e, s_e'] M_e') L⁻¹.
	largeCov := make([][]float64, nLarge)
	Q := make([]float64, pl*pl)
	tmp := make([]float64, ps*pl)
	for L := 0; L < nLarge; L++ {
		Li := largeInv[L]
		if Li == nil {
			continue
		}
		for x := range Q {
			Q[x] = 0
		}
		es = entries(L, es)
		for _, e := range es {
			for _, e2 := range es {
				// tmp = Σ_small[s_e, s_e2] M_e2 (ps x pl)
				for d := 0; d < ps; d++ {
					for q := 0; q < pl; q++ {
						v := 0.0
						for d2 := 0; d2 < ps; d2++ {
							v += sAt(e.s*ps+d, e2.s*ps+d2) * e2.m[d2*pl+q]
						}
						tmp[d*pl+q] = v
					}
				}
				// Q += M_eᵀ tmp
				for q := 0; q < pl; q++ {
					for q2 := 0; q2 < pl; q2++ {
						v := 0.0
						for d := 0; d < ps; d++ {
							v += e.m[d*pl+q] * tmp[d*pl+q2]
						}
						Q[q*pl+q2] += v
					}
				}
			}
		}
		blk := make([]float64, pl*pl)
		copy(blk, Li)
		LQ := matMul(Li, Q, pl)
		LQL := matMul(LQ, Li, pl)
		for x := range blk {
			blk[x] += LQL[x]
		}
		largeCov[L] = blk
	}
	if thetaSmall {
		return &covs{theta: smallCov, item: largeCov, p: p}, true, expected
	}
	return &covs{theta: largeCov, item: smallCov, p: p}, true, expected
}

// cellDerivs are the first and second derivatives in the logit x of a
// cell's negative log likelihood −k·log P − (n−k)·log(1−P), P = c +
// (1−c)·sigmoid(x/σ); expected replaces the second by its expectation (n
// times the item information).
func cellDerivs(x, sig, c, n, k float64, expected bool) (g, h float64) {
	s := model.Sigmoid(x / sig)
	if c == 0 {
		return (n*s - k) / sig, n * s * (1 - s) / (sig * sig)
	}
	P := c + (1-c)*s
	if P <= 0 {
		return 0, 0
	}
	q := (1 - c) * s * (1 - s) // σ·∂P/∂x
	g = (-k/P*q + (n-k)*s) / sig
	if expected {
		return g, n * (1 - c) * s * s * (1 - s) / (P * sig * sig)
	}
	h = k*q*q/(P*P) - k*q*(1-2*s)/P + (n-k)*s*(1-s)
	return g, h / (sig * sig)
}

// summarise turns the covariance blocks into standard errors and intervals.
func (l Laplace) summarise(res *LaplaceResult, f *model.IRT, cv *covs) {
	N, J, rk := len(f.Models), len(f.Items), f.Rank
	p := cv.p
	z := math.Sqrt2 * math.Erfinv(l.Level)
	res.ThetaSE, res.ThetaLo, res.ThetaHi = nans(N*rk), nans(N*rk), nans(N*rk)
	res.ASE, res.ALo, res.AHi = nans(J*rk), nans(J*rk), nans(J*rk)
	res.BSE, res.BLo, res.BHi = nans(J), nans(J), nans(J)
	res.DiffSE, res.DiffLo, res.DiffHi = nans(J), nans(J), nans(J)
	sd := func(v float64) float64 {
		if !(v > 0) || math.IsInf(v, 0) {
			return math.NaN()
		}
		return math.Sqrt(v)
	}
	interval := func(est, se float64) (float64, float64) {
		if math.IsNaN(est) || math.IsNaN(se) {
			return math.NaN(), math.NaN()
		}
		return est - z*se, est + z*se
	}
	for i := 0; i < N; i++ {
		blk := cv.theta[i]
		if blk == nil {
			continue
		}
		for d := 0; d < rk; d++ {
			k := i*rk + d
			if math.IsNaN(f.Theta[k]) {
				continue
			}
			res.ThetaSE[k] = sd(blk[d*rk+d])
			res.ThetaLo[k], res.ThetaHi[k] = interval(f.Theta[k], res.ThetaSE[k])
		}
	}
	for j := 0; j < J; j++ {
		blk := cv.item[j]
		if blk == nil || math.IsNaN(f.B[j]) {
			continue
		}
		res.BSE[j] = sd(blk[p*p-1])
		res.BLo[j], res.BHi[j] = interval(f.B[j], res.BSE[j])
		a := f.A[j*rk : (j+1)*rk]
		norm := 0.0
		for _, v := range a {
			norm += v * v
		}
		norm = math.Sqrt(norm)
		if p > 1 {
			for d := 0; d < rk; d++ {
				k := j*rk + d
				res.ASE[k] = sd(blk[d*p+d])
				res.ALo[k], res.AHi[k] = interval(a[d], res.ASE[k])
				if !f.Signed && res.ALo[k] < 0 {
					res.ALo[k] = 0 // a ≥ 0: at the bound, the one-sided [0, a + z·se]
				}
			}
		}
		// The difficulty −b/‖a‖: its gradient in (a, b).
		if !(norm > 0) || math.IsNaN(norm) {
			continue
		}
		grad := make([]float64, p)
		grad[p-1] = -1 / norm
		if p > 1 {
			for d := 0; d < rk; d++ {
				grad[d] = f.B[j] * a[d] / (norm * norm * norm)
			}
		}
		v := 0.0
		for x := 0; x < p; x++ {
			for y := 0; y < p; y++ {
				v += grad[x] * blk[x*p+y] * grad[y]
			}
		}
		res.DiffSE[j] = sd(v)
		res.DiffLo[j], res.DiffHi[j] = interval(model.Difficulty(a, f.B[j]), res.DiffSE[j])
	}
}

// invSPD inverts the symmetric positive definite n x n matrix a (row-major)
// by Cholesky, or returns nil when it is not positive definite.
func invSPD(a []float64, n int) []float64 {
	L := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			s := a[i*n+j]
			for k := 0; k < j; k++ {
				s -= L[i*n+k] * L[j*n+k]
			}
			if i == j {
				if !(s > 0) {
					return nil
				}
				L[i*n+i] = math.Sqrt(s)
			} else {
				L[i*n+j] = s / L[j*n+j]
			}
		}
	}
	// Scale check: a pivot tiny against its diagonal means singular.
	for i := 0; i < n; i++ {
		if L[i*n+i]*L[i*n+i] <= 1e-14*a[i*n+i] {
			return nil
		}
	}
	inv := make([]float64, n*n)
	col := make([]float64, n)
	for c := 0; c < n; c++ {
		// Solve L y = e_c, then Lᵀ x = y.
		for i := 0; i < n; i++ {
			s := 0.0
			if i == c {
				s = 1
			}
			for k := 0; k < i; k++ {
				s -= L[i*n+k] * col[k]
			}
			col[i] = s / L[i*n+i]
		}
		for i := n - 1; i >= 0; i-- {
			s := col[i]
			for k := i + 1; k < n; k++ {
				s -= L[k*n+i] * col[k]
			}
			col[i] = s / L[i*n+i]
		}
		for i := 0; i < n; i++ {
			inv[i*n+c] = col[i]
		}
	}
	return inv
}

// matMul is the product of two n x n row-major matrices.
func matMul(a, b []float64, n int) []float64 {
	out := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for k := 0; k < n; k++ {
			v := a[i*n+k]
			for j := 0; j < n; j++ {
				out[i*n+j] += v * b[k*n+j]
			}
		}
	}
	return out
}
