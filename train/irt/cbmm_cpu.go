package irt

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/jeirt/jeirt/model/simd"
	"github.com/jeirt/jeirt/train/backend"
)

func init() { backend.Register(backend.CPU, cpuBackend{}) }

// cpuBackend runs batched cBMM (Qu, Heng, Zeng and Liu 2026,
// arXiv:2605.07046) on the CPU: goroutines over (problem, item chunk) tasks,
// two passes over the observed cells per iteration.
type cpuBackend struct{}

func (cpuBackend) Name() string { return "cpu" }

func (c cpuBackend) Load(problems []*backend.CBMMProblem, rank int, sigma float64, threads int) (backend.CBMMBatch, error) {
	return c.load(problems, rank, sigma, threads, rank)
}

// LoadSigned is Load with loadings of either sign (backend.CBMMSigned).
func (c cpuBackend) LoadSigned(problems []*backend.CBMMProblem, rank int, sigma float64, threads int) (backend.CBMMBatch, error) {
	return c.load(problems, rank, sigma, threads, 0)
}

// LoadFamily is Load for weighted problems, the 1PL and the 3PL
// (backend.CBMMFamily).
func (c cpuBackend) LoadFamily(problems []*backend.CBMMProblem, rank int, sigma float64, threads int, f backend.CBMMModel) (backend.CBMMBatch, error) {
	nonneg := rank
	if f.Signed {
		nonneg = 0
	}
	if f.FixedA && rank != 1 {
		return nil, fmt.Errorf("the 1PL is unidimensional: rank %d", rank)
	}
	if f.Guess && !(f.MaxGuess > 0 && f.MaxGuess < 1) {
		f.MaxGuess = DefaultMaxGuess
	}
	b, err := c.load(problems, rank, sigma, threads, nonneg)
	if err != nil {
		return nil, err
	}
	cb := b.(*cpuBatch)
	cb.fam = f
	cb.rg = newRidge(f.Prior, sigma, rank, f.Signed, f.FixedA)
	for _, pr := range cb.probs {
		pr.rg = cb.rg
	}
	if f.Guess {
		for _, pr := range cb.probs {
			pr.guess = make([]float64, pr.p.J)
		}
	}
	return cb, nil
}

// load prepares a batch whose first nonneg loadings of each item are kept ≥ 0.
func (cpuBackend) load(problems []*backend.CBMMProblem, rank int, sigma float64, threads, nonneg int) (backend.CBMMBatch, error) {
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	b := &cpuBatch{rank: rank, nonneg: nonneg, sigma: sigma, threads: threads, probs: make([]*cpuProblem, len(problems))}
	for k, p := range problems {
		b.probs[k] = newCPUProblem(p, rank, threads)
	}
	return b, nil
}

type cpuBatch struct {
	rank    int
	nonneg  int // loadings a_j[:nonneg] are constrained ≥ 0 (rank, or 0 for a signed fit)
	sigma   float64
	threads int
	probs   []*cpuProblem
	fam     backend.CBMMModel // the 1PL, the 3PL (zero: the 2PL)
	rg      ridge             // the prior (zero: joint maximum likelihood); each problem fits its own means from it
}

// cpuProblem holds one problem's parameters and the buffers reused across
// iterations: per chunk, Ỹ on one item's cells at a time and partial sums.
// Ỹ is never held for all of Ω: an item's targets are used for the θ block's
// normal equations as soon as the item's (a_j, b_j) are updated, while they
// are still in cache (8 bytes per cell less memory, and no second pass).
type cpuProblem struct {
	p              *backend.CBMMProblem
	theta, a, b    []float64
	yTilde         [][]float64 // per chunk: Ỹ on the cells of the item being updated
	chunks         []int       // item boundaries: chunk c is items chunks[c]:chunks[c+1]
	acc            [][]float64 // per chunk: per model Σ a_j a_jᵀ (r x r) then Σ a_j (ỹ_ij − b_j) (r)
	chunkLoss      []float64
	ws             []*backend.SmallNNLS // per chunk, rank > 1
	modelG, modelH []float64
	guess          []float64   // the 3PL's c_j (nil otherwise)
	aNum, aDen     []float64   // per chunk, the 1PL's common slope block (ridge.commonA): Σ θ(ỹ − b_j), Σ θ²
	rg             ridge       // the batch's prior, with this problem's fitted means
	q              [][]float64 // per chunk, weighted cells on the vector kernel: each cell's 1 + e^−|u|
}

func newCPUProblem(p *backend.CBMMProblem, r, threads int) *cpuProblem {
	pr := &cpuProblem{p: p, theta: make([]float64, p.N*r), a: make([]float64, p.J*r), b: make([]float64, p.J)}
	pr.chunks = BalanceChunks(p.ItemStart, NumChunks)
	nc := len(pr.chunks) - 1
	pr.acc = make([][]float64, nc)
	pr.ws = make([]*backend.SmallNNLS, nc)
	pr.yTilde = make([][]float64, nc)
	if p.Weighted() {
		pr.q = make([][]float64, nc)
	}
	for c := range pr.acc {
		pr.acc[c] = make([]float64, p.N*(r*r+r))
		pr.ws[c] = backend.NewSmallNNLS(r + 1)
		most := int32(0)
		for j := pr.chunks[c]; j < pr.chunks[c+1]; j++ {
			most = max(most, p.ItemStart[j+1]-p.ItemStart[j])
		}
		pr.yTilde[c] = make([]float64, most)
		if pr.q != nil {
			pr.q[c] = make([]float64, most)
		}
	}
	pr.chunkLoss = make([]float64, nc)
	pr.aNum, pr.aDen = make([]float64, nc), make([]float64, nc)
	pr.modelG = make([]float64, r*r)
	pr.modelH = make([]float64, r)
	return pr
}

// NumChunks is the number of item chunks per problem. It is fixed, not tied to
// the thread count, so that sums are added in the same order and results are
// bit-for-bit the same whatever Threads is and whether a problem is fitted
// alone or in a batch (train/irtlbfgs's gradient adds its sums the same way).
const NumChunks = 32

// BalanceChunks splits items into at most n contiguous ranges of about equal cell counts.
func BalanceChunks(start []int32, n int) []int {
	j := len(start) - 1
	if n > j {
		n = j
	}
	if n < 1 {
		n = 1
	}
	total := int(start[j])
	out := []int{0}
	next := 1
	for it := 0; it < j && next < n; it++ {
		if int(start[it+1])*n >= total*next {
			out = append(out, it+1)
			next++
		}
	}
	if out[len(out)-1] != j {
		out = append(out, j)
	}
	return out
}

func (b *cpuBatch) Get(k int, theta, a, bb []float64) {
	pr := b.probs[k]
	copy(theta, pr.theta)
	copy(a, pr.a)
	copy(bb, pr.b)
}

func (b *cpuBatch) Set(k int, theta, a, bb []float64) {
	pr := b.probs[k]
	copy(pr.theta, theta)
	copy(pr.a, a)
	copy(pr.b, bb)
}

func (b *cpuBatch) Close() error { b.probs = nil; return nil }

// GetC and SetC copy a 3PL problem's lower asymptotes (backend.CBMMGuessing).
func (b *cpuBatch) GetC(k int, c []float64) { copy(c, b.probs[k].guess) }
func (b *cpuBatch) SetC(k int, c []float64) { copy(b.probs[k].guess, c) }

type task struct{ k, c int }

func (b *cpuBatch) tasks(active []bool) []task {
	var ts []task
	for k, pr := range b.probs {
		if active[k] {
			for c := 0; c < len(pr.chunks)-1; c++ {
				ts = append(ts, task{k, c})
			}
		}
	}
	return ts
}

func (b *cpuBatch) Loss(ctx context.Context, active []bool, loss []float64) error {
	ts := b.tasks(active)
	if err := parallel(ctx, len(ts), b.threads, func(t int) {
		pr := b.probs[ts[t].k]
		pr.chunkLoss[ts[t].c] = b.passA(pr, ts[t].c, false)
	}); err != nil {
		return err
	}
	b.sumLoss(active, loss)
	return nil
}

func (b *cpuBatch) sumLoss(active []bool, loss []float64) {
	for k, pr := range b.probs {
		if active[k] {
			s := 0.0
			for _, l := range pr.chunkLoss {
				s += l
			}
			if pr.rg.on {
				s += pr.rg.thetaLoss(pr.theta)
			}
			loss[k] = s
		}
	}
}

func (b *cpuBatch) Step(ctx context.Context, active []bool, loss []float64) error {
	ts := b.tasks(active)
	// One pass over the cells: loss, surrogate, the item block (a_j, b_j) and
	// the per-model normal equations of the θ block; then the θ solves.
	if err := parallel(ctx, len(ts), b.threads, func(t int) {
		pr := b.probs[ts[t].k]
		pr.chunkLoss[ts[t].c] = b.passA(pr, ts[t].c, true)
	}); err != nil {
		return err
	}
	b.sumLoss(active, loss)
	var ks []int
	for k := range b.probs {
		if active[k] {
			ks = append(ks, k)
		}
	}
	return parallel(ctx, len(ks), b.threads, func(t int) {
		pr := b.probs[ks[t]]
		pr.rg.fitMeans(pr.a, pr.b)
		if pr.rg.commonA {
			b.solveCommonA(pr)
		}
		b.solveTheta(pr)
	})
}

// passA evaluates ℓ over the chunk's cells at the current parameters. With
// update it also stores cBMM's surrogate target (Qu, Heng, Zeng and Liu
// 2026, arXiv:2605.07046: the majorization step, Ỹ = X + 4σ·Y ⊙ σ(−Y ⊙ X/σ)
// on Ω; the reference code's Ytilde)
//
//	ỹ_ij = x_ij + 4σ·y_ij·sigmoid(−y_ij·x_ij/σ)
//
// (the minimiser of the quadratic majorizer of softplus(−y x/σ), whose
// curvature is 1/(4σ²)) and replaces each item's (a_j, b_j) by the exact
// minimiser of Σ_i (θ_iᵀa_j + b_j − ỹ_ij)² subject to a_j ≥ 0 (a_j free
// in a signed batch); then it adds the item's terms to the chunk's θ-block
// normal equations (addItem) with the new (a_j, b_j).
func (b *cpuBatch) passA(pr *cpuProblem, c int, update bool) float64 {
	p := pr.p
	if p.Weighted() && b.rank == 1 && !b.fam.Guess {
		return b.passA1Weighted(pr, c, update)
	}
	if p.Weighted() || b.fam.Guess {
		return b.passAFamily(pr, c, update)
	}
	r := b.rank
	inv, four := 1/b.sigma, 4*b.sigma
	theta := pr.theta
	vectorCells := simd.Current() != simd.Go
	loss := 0.0
	ws := pr.ws[c]
	acc := pr.acc[c]
	if update {
		clear(acc)
	}
	for j := pr.chunks[c]; j < pr.chunks[c+1]; j++ {
		lo, hi := p.ItemStart[j], p.ItemStart[j+1]
		cells := p.Cells[lo:hi]
		yt := pr.yTilde[c][:hi-lo]
		if r == 1 && vectorCells {
			// The same pass on model/simd's vector kernel (the loop
			// below is its pure-Go level, kept as it was).
			var ytv []float64
			if update {
				ytv = yt
			}
			s := simd.LogisticCells{A: pr.a[j], B: pr.b[j], Sigma: b.sigma}.Binary(cells, theta, ytv)
			loss += s.Loss
			if pr.rg.on {
				loss += pr.rg.itemLoss(pr.a[j:j+1], pr.b[j])
			}
			if update && len(cells) > 0 {
				b.itemUpdate1(pr, c, j, float64(len(cells)), s.Theta, s.Theta2, s.Target, s.ThetaTarget)
				b.addItem(pr, acc, j, cells, yt)
			}
			continue
		}
		if r == 1 {
			aj, bj := pr.a[j], pr.b[j]
			if pr.rg.on {
				loss += pr.rg.itemLoss(pr.a[j:j+1], bj)
			}
			var st, stt, sy, sty float64
			// Σ log(1 + e) is taken as log Π(1 + e), one log per 512 cells
			// (each factor is in (1, 2], so the product cannot overflow).
			prod := 1.0
			for k, cell := range cells {
				th := theta[cell>>1]
				x := th*aj + bj
				y := float64(cell&1)*2 - 1
				t := -y * x * inv // −y x/σ
				// softplus(t) = max(t, 0) + log(1 + e^−|t|) and sigmoid(t),
				// without branches: neg is 1 when t < 0.
				// e = e^−|t| by expNeg's method, inlined by hand (the
				// compiler will not), clamped at e^−708.
				z := -math.Abs(t)
				if z < -708 {
					z = -708
				}
				kz := int64(z*expInvLn2x64 - 0.5)
				kf := float64(kz)
				rz := (z - kf*expLn2x64Hi) - kf*expLn2x64Lo
				e := expTable[kz&63] * (1 + rz*(1+rz*(1.0/2+rz*(1.0/6+rz*(1.0/24+rz*(1.0/120)))))) *
					math.Float64frombits(uint64(kz>>6+1023)<<52)
				q := 1 + e
				sg := 1 / q // sigmoid(|t|)
				neg := float64(math.Float64bits(t) >> 63)
				loss += t * (1 - neg)
				sg += neg * (1 - 2*sg)
				prod *= q
				if k&511 == 511 {
					loss += math.Log(prod)
					prod = 1
				}
				if update {
					v := x + four*y*sg // ỹ_ij = x_ij + 4σ·y_ij·sigmoid(−y_ij·x_ij/σ): cBMM's Ỹ
					yt[k] = v
					st += th
					stt += th * th
					sy += v
					sty += th * v
				}
			}
			loss += math.Log(prod)
			if update && len(cells) > 0 {
				b.itemUpdate1(pr, c, j, float64(len(cells)), st, stt, sy, sty)
				b.addItem(pr, acc, j, cells, yt)
			}
			continue
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
		for k, cell := range cells {
			th := theta[int(cell>>1)*r : int(cell>>1)*r+r]
			x := pr.b[j]
			for d, v := range th {
				x += v * aj[d]
			}
			y := float64(cell&1)*2 - 1
			t := -y * x * inv
			sp, sg := SoftplusSigmoid(t)
			loss += sp
			if update {
				v := x + four*y*sg // ỹ_ij, cBMM's Ỹ (as above)
				yt[k] = v
				// Normal equations of u_i = (θ_i, 1): G += u uᵀ, h += u ỹ.
				for d1 := 0; d1 < r; d1++ {
					row := G[d1*m : d1*m+m]
					for d2 := 0; d2 <= d1; d2++ {
						row[d2] += th[d1] * th[d2]
					}
					row[r] += th[d1]
					h[d1] += th[d1] * v
				}
				G[r*m+r]++
				h[r] += v
			}
		}
		if update && len(cells) > 0 {
			b.solveItem(pr, ws, G, m, aj, &pr.b[j])
			b.addItem(pr, acc, j, cells, yt)
		}
	}
	return loss
}

// solveItem solves item j's normal equations G (lower triangle filled, m =
// rank+1: the loadings aj then the intercept *bj) for (aj, *bj), from their
// current values, nonnegative loadings when the batch asks for them.
func (b *cpuBatch) solveItem(pr *cpuProblem, ws *backend.SmallNNLS, G []float64, m int, aj []float64, bj *float64) {
	r := m - 1
	for d1 := 0; d1 < r; d1++ {
		for d2 := 0; d2 < d1; d2++ {
			G[d2*m+d1] = G[d1*m+d2]
		}
	}
	for d := 0; d < r; d++ {
		G[r*m+d] = G[d*m+r]
	}
	if pr.rg.on {
		pr.rg.addItem(G, ws.H[:m], m)
	}
	copy(ws.X[:r], aj)
	ws.X[r] = *bj
	ws.SolveInPlace(m, b.nonneg)
	copy(aj, ws.X[:r])
	*bj = ws.X[r]
}

// addItem adds item j's terms to the per-model θ-block normal equations acc:
// Σ_j a_j a_jᵀ and Σ_j a_j (ỹ_ij − b_j) over the item's cells, with its new
// (a_j, b_j) and its surrogate targets yt.
func (b *cpuBatch) addItem(pr *cpuProblem, acc []float64, j int, cells []uint32, yt []float64) {
	r := b.rank
	bj := pr.b[j]
	if r == 1 {
		aj := pr.a[j]
		if pr.rg.commonA {
			aj = 1 // the common slope is solved after the items (solveCommonA)
		}
		if aj == 0 {
			return
		}
		aj2 := aj * aj
		yt = yt[:len(cells)]
		for k, cell := range cells {
			i := int(cell>>1) * 2
			acc[i] += aj2
			acc[i+1] += aj * (yt[k] - bj)
		}
		return
	}
	w := r*r + r
	aj := pr.a[j*r : (j+1)*r]
	for k, cell := range cells {
		m := acc[int(cell>>1)*w : int(cell>>1)*w+w]
		res := yt[k] - bj
		for d1 := 0; d1 < r; d1++ {
			for d2 := 0; d2 <= d1; d2++ {
				m[d1*r+d2] += aj[d1] * aj[d2]
			}
			m[r*r+d1] += aj[d1] * res
		}
	}
}

// solveTheta is the θ block: θ_i = argmin Σ_{j∈Ω_i} (θ_iᵀa_j + b_j − ỹ_ij)²,
// an r x r solve per model. A model whose system is singular keeps θ_i (rank
// 1) or takes the minimiser of the surrogate plus a tiny proximal term
// ε‖θ_i − θ_i^old‖² (rank > 1), so the surrogate never increases.
func (b *cpuBatch) solveTheta(pr *cpuProblem) {
	r := b.rank
	w := r*r + r
	if r == 1 {
		a := 1.0
		if pr.rg.commonA {
			a = pr.a[0]
		}
		for i := 0; i < pr.p.N; i++ {
			var den, num float64
			for _, acc := range pr.acc {
				den += acc[2*i]
				num += acc[2*i+1]
			}
			if den = a*a*den + pr.rg.theta; den > 0 {
				pr.theta[i] = a * num / den
			}
		}
		return
	}
	G, h := pr.modelG, pr.modelH
	for i := 0; i < pr.p.N; i++ {
		clear(G)
		clear(h)
		for _, acc := range pr.acc {
			m := acc[i*w : i*w+w]
			for d1 := 0; d1 < r; d1++ {
				for d2 := 0; d2 <= d1; d2++ {
					G[d1*r+d2] += m[d1*r+d2]
				}
				h[d1] += m[r*r+d1]
			}
		}
		for d1 := 0; d1 < r; d1++ {
			for d2 := 0; d2 < d1; d2++ {
				G[d2*r+d1] = G[d1*r+d2]
			}
			G[d1*r+d1] += pr.rg.theta
		}
		backend.SolveTheta(G, h, pr.theta[i*r:i*r+r])
	}
}

// itemUpdate1 is the rank-1 item block of item j in chunk c from the sums
// of its n cells (st = Σθ, stt = Σθ², sy = Σỹ, sty = Σθỹ, weighted where the
// cells are): (a_j, b_j) by backend.ItemSolve1 with the prior's ridge, or,
// for the 1PL, b_j alone (and, with a prior, the common slope's sums).
func (b *cpuBatch) itemUpdate1(pr *cpuProblem, c, j int, n, st, stt, sy, sty float64) {
	aj := pr.a[j]
	if !b.fam.FixedA {
		n, stt, sy, sty = pr.rg.sums1(n, stt, sy, sty)
		pr.a[j], pr.b[j] = backend.ItemSolve1(n, st, stt, sy, sty, aj)
		return
	}
	pr.b[j] = (sy + pr.rg.b*pr.rg.bT - aj*st) / (n + pr.rg.b)
	if pr.rg.commonA {
		pr.aNum[c] += sty - pr.b[j]*st
		pr.aDen[c] += stt
	}
}

// solveCommonA is the 1PL's common slope block under a prior, between the
// items' intercepts and the abilities: the minimiser over a ≥ 0 of
// Σ_Ω (θ_i a + b_j − ỹ_ij)² + J·λ_a(a − a_T)² (every item's slope prior), from
// the chunks' sums (added in the chunks' order, so the same whatever the
// goroutines).
func (b *cpuBatch) solveCommonA(pr *cpuProblem) {
	var num, den float64
	for c := range pr.aNum {
		num += pr.aNum[c]
		den += pr.aDen[c]
		pr.aNum[c], pr.aDen[c] = 0, 0
	}
	J := float64(pr.p.J)
	num += J * pr.rg.a * pr.rg.aT
	den += J * pr.rg.a
	if !(den > 0) {
		return
	}
	a := math.Max(num/den, 0)
	for j := range pr.a {
		pr.a[j] = a
	}
}

// Parallel runs fn(0..n-1) on up to threads goroutines, checking ctx
// between tasks (irtmml's EM runs on it too).
func Parallel(ctx context.Context, n, threads int, fn func(int)) error {
	return parallel(ctx, n, threads, fn)
}

// parallel runs fn(0..n-1) on up to threads goroutines, checking ctx between tasks.
func parallel(ctx context.Context, n, threads int, fn func(int)) error {
	if threads > n {
		threads = n
	}
	if threads <= 1 {
		for t := 0; t < n; t++ {
			if err := ctx.Err(); err != nil {
				return err
			}
			fn(t)
		}
		return ctx.Err()
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < threads; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				t := int(next.Add(1) - 1)
				if t >= n || ctx.Err() != nil {
					return
				}
				fn(t)
			}
		}()
	}
	wg.Wait()
	return ctx.Err()
}
