package simd

import "math"

// LogisticCells is the cell pass of an item of a rank-1 logistic (2PL)
// model over binary cells: cBMM's majorization step (Qu, Heng, Zeng and Liu,
// "An Interpretable and Scalable Framework for Evaluating Large Language
// Models", arXiv:2605.07046, 2026), the loss, the surrogate target of every
// cell and the sums of the item's least squares in one sweep. A cell is
// model<<1 | y (y = 1 correct, 0 wrong); with θ the model's ability,
//
//	x = A·θ + B,  t = −y±·x/σ (y± = 2y − 1),  loss = Σ softplus(t)
//	ỹ = x + 4σ·y±·sigmoid(t)
type LogisticCells struct {
	A, B  float64 // the item's slope and intercept
	Sigma float64 // σ, the scale of the logit: P(y = 1) = sigmoid(x/σ)
}

// CellSums is what LogisticCells returns: the loss, and with targets the
// sums of the item block's normal equations.
type CellSums struct {
	Loss                               float64 // Σ softplus(t)
	Theta, Theta2, Target, ThetaTarget float64 // Σ θ, Σ θ², Σ ỹ, Σ θ·ỹ (zero without targets)
}

// cellsChunk is the most cells one call of the vector kernel takes: the
// product of their factors 1 + e^−|t| ∈ (1, 2] stays below 2^512.
const cellsChunk = 512

// Binary runs the pass over cells, θ = theta[model] (an index past theta
// panics); with yt (len(cells)
// values) it writes the surrogate targets ỹ there and returns the sums too.
// The vector levels compute e^−|t| within 2 ulp (Exp64's method), Σ log(1 +
// e^−|t|) as the log of products of at most 512 factors and the sums in
// lanes; they differ from the pure-Go level (math.Exp and math.Log1p per
// cell, sums in cell order) by a few ulp in each target and by the order of
// the sums (TestLogisticCells).
func (c LogisticCells) Binary(cells []uint32, theta, yt []float64) CellSums {
	if yt != nil {
		yt = yt[:len(cells)]
	}
	o := use
	if o.level == Go || len(cells) == 0 {
		return c.binaryGo(cells, theta, yt)
	}
	lanes := o.lanes / 2
	n := vectorPart(len(cells), lanes)
	// The kernel gathers θ unchecked: every model index must be in theta.
	var most uint32
	for _, cell := range cells {
		most = max(most, cell)
	}
	if len(cells) > 0 && int(most>>1) >= len(theta) {
		panic("kernel: a cell's model index is past theta")
	}
	var s CellSums
	var k [32]float64 // a, b, 1/σ, 4σ, eight copies each
	for i := 0; i < 8; i++ {
		k[i], k[8+i], k[16+i], k[24+i] = c.A, c.B, 1/c.Sigma, 4*c.Sigma
	}
	var out [6]float64
	for lo := 0; lo < n; lo += cellsChunk {
		hi := min(n, lo+cellsChunk)
		var ytp *float64
		if yt != nil {
			ytp = &yt[lo]
		}
		cells1At(o.level, &cells[lo], hi-lo, &theta[0], &k[0], ytp, &out[0], nil)
		s.add(&out)
	}
	if n < len(cells) {
		// The last cells, padded with model 0 to a vector, the padding
		// masked out.
		var pad [8]uint32
		var mask [8]float64
		copy(pad[:], cells[n:])
		for i := range len(cells) - n {
			mask[i] = math.Float64frombits(^uint64(0))
		}
		var ytp *float64
		if yt != nil {
			ytp = &yt[n]
		}
		cells1At(o.level, &pad[0], lanes, &theta[0], &k[0], ytp, &out[0], &mask[0])
		s.add(&out)
	}
	return s
}

// add adds a kernel call's outputs: Σ max(t, 0), Π (1 + e^−|t|), the sums.
func (s *CellSums) add(out *[6]float64) {
	s.Loss += out[0] + math.Log(out[1])
	s.Theta += out[2]
	s.Theta2 += out[3]
	s.Target += out[4]
	s.ThetaTarget += out[5]
}

// binaryGo is Binary in Go, cell by cell.
func (c LogisticCells) binaryGo(cells []uint32, theta, yt []float64) CellSums {
	var s CellSums
	inv, four := 1/c.Sigma, 4*c.Sigma
	for k, cell := range cells {
		th := theta[cell>>1]
		x := c.A*th + c.B
		y := float64(cell&1)*2 - 1
		t := -y * x * inv
		e := math.Exp(-math.Abs(t))
		s.Loss += math.Max(t, 0) + math.Log1p(e)
		if yt == nil {
			continue
		}
		sg := 1 / (1 + e) // sigmoid(|t|)
		if t < 0 {
			sg = 1 - sg
		}
		v := x + four*y*sg
		yt[k] = v
		s.Theta += th
		s.Theta2 += th * th
		s.Target += v
		s.ThetaTarget += th * v
	}
	return s
}

// WeightedSums is what LogisticCells.Weighted returns.
type WeightedSums struct {
	Linear                                     float64 // Σ n·(max(u, 0) − ȳ·u): the loss but for Σ n·log q
	Trials, Theta, Theta2, Target, ThetaTarget float64 // Σ n, Σ n·θ, Σ n·θ², Σ n·ỹ, Σ n·θ·ỹ (zero without targets)
}

// Weighted is Binary for cells of n_k = w[k] trials with observed fraction
// ȳ_k = ybar[k] (a graded score alike: the fractional logit model): with
// u = x/σ the loss is Σ n·(softplus(u) − ȳ·u), returned as Linear =
// Σ n·(max(u, 0) − ȳ·u) with q[k] = 1 + e^−|u| (len(cells) values) for the
// caller to add Σ n·log q as it likes; the targets are ỹ = x +
// 4σ·(ȳ − sigmoid(u)). The bounds are Binary's.
func (c LogisticCells) Weighted(cells []uint32, w []float32, ybar []float64, theta, yt, q []float64) WeightedSums {
	w, ybar, q = w[:len(cells)], ybar[:len(cells)], q[:len(cells)]
	if yt != nil {
		yt = yt[:len(cells)]
	}
	o := use
	if o.level == Go || len(cells) == 0 {
		return c.weightedGo(cells, w, ybar, theta, yt, q)
	}
	var most uint32
	for _, cell := range cells {
		most = max(most, cell)
	}
	if int(most>>1) >= len(theta) {
		panic("kernel: a cell's model index is past theta")
	}
	lanes := o.lanes / 2
	n := vectorPart(len(cells), lanes)
	var k [32]float64
	for i := 0; i < 8; i++ {
		k[i], k[8+i], k[16+i], k[24+i] = c.A, c.B, 1/c.Sigma, 4*c.Sigma
	}
	var s WeightedSums
	var out [6]float64
	add := func() {
		s.Linear += out[0]
		s.Trials += out[1]
		s.Theta += out[2]
		s.Theta2 += out[3]
		s.Target += out[4]
		s.ThetaTarget += out[5]
	}
	if n > 0 {
		var ytp *float64
		if yt != nil {
			ytp = &yt[0]
		}
		cellsW1At(o.level, &cells[0], n, &theta[0], &k[0], ytp, &out[0], &w[0], &ybar[0], &q[0])
		add()
	}
	if r := len(cells) - n; r > 0 {
		// The last cells, padded to a vector with cells of no trials.
		var pc [8]uint32
		var pw [8]float32
		var py, pyt, pq [8]float64
		copy(pc[:], cells[n:])
		copy(pw[:], w[n:])
		copy(py[:], ybar[n:])
		var ytp *float64
		if yt != nil {
			ytp = &pyt[0]
		}
		cellsW1At(o.level, &pc[0], lanes, &theta[0], &k[0], ytp, &out[0], &pw[0], &py[0], &pq[0])
		add()
		copy(q[n:], pq[:r])
		if yt != nil {
			copy(yt[n:], pyt[:r])
		}
	}
	return s
}

// weightedGo is Weighted in Go, cell by cell.
func (c LogisticCells) weightedGo(cells []uint32, w []float32, ybar []float64, theta, yt, q []float64) WeightedSums {
	var s WeightedSums
	inv, four := 1/c.Sigma, 4*c.Sigma
	for k, cell := range cells {
		th := theta[cell>>1]
		x := c.A*th + c.B
		u := x * inv
		n, yb := float64(w[k]), ybar[k]
		e := math.Exp(-math.Abs(u))
		q[k] = 1 + e
		s.Linear += n * (math.Max(u, 0) - yb*u)
		if yt == nil {
			continue
		}
		sg := 1 / (1 + e)
		if u < 0 {
			sg = 1 - sg
		}
		v := x + four*(yb-sg)
		yt[k] = v
		s.Trials += n
		s.Theta += n * th
		s.Theta2 += n * th * th
		s.Target += n * v
		s.ThetaTarget += n * th * v
	}
	return s
}
