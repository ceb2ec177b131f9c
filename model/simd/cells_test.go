package simd

import (
	"math"
	"math/rand/v2"
	"testing"
)

// refCells is LogisticCells.Binary in float64 with math.Exp and math.Log1p,
// and the magnitudes the sums' bounds scale with.
func refCells(c LogisticCells, cells []uint32, theta []float64) (s, mag CellSums, yt []float64) {
	for _, cell := range cells {
		th := theta[cell>>1]
		x := c.A*th + c.B
		y := float64(cell&1)*2 - 1
		t := -y * x / c.Sigma
		s.Loss += math.Max(t, 0) + math.Log1p(math.Exp(-math.Abs(t)))
		mag.Loss += math.Abs(t) + 1
		v := x + 4*c.Sigma*y/(1+math.Exp(-t))
		yt = append(yt, v)
		s.Theta += th
		s.Theta2 += th * th
		s.Target += v
		s.ThetaTarget += th * v
		mag.Theta += math.Abs(th)
		mag.Theta2 += th * th
		mag.Target += math.Abs(v)
		mag.ThetaTarget += math.Abs(th * v)
	}
	return s, mag, yt
}

// TestLogisticCells checks the cell pass at every level against float64
// with math's functions: each target within 1e-15 of |x| + 4σ, the loss
// and the sums within the bound of two orders of summation; every length around
// the lanes, labels both ways, abilities from −40 to 40 (t past e's
// subnormals), and the loss alone (no targets).
func TestLogisticCells(t *testing.T) {
	forLevels(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(40, 41))
		theta := make([]float64, 300)
		for i := range theta {
			theta[i] = rng.NormFloat64() * 2
		}
		theta[0], theta[1], theta[2] = 40, -40, 0
		for _, n := range []int{0, 1, 3, 4, 7, 8, 9, 17, 112, 511, 512, 513, 1500} {
			cells := make([]uint32, n)
			for k := range cells {
				cells[k] = uint32(rng.IntN(len(theta)))<<1 | uint32(rng.IntN(2))
			}
			for _, c := range []LogisticCells{{A: 1.3, B: -0.4, Sigma: 1}, {A: 0, B: 2, Sigma: 0.5}, {A: 25, B: 3, Sigma: 1.7}} {
				want, mag, wantYt := refCells(c, cells, theta)
				yt := make([]float64, n)
				got := c.Binary(cells, theta, yt)
				for k, v := range yt {
					x := c.A*theta[cells[k]>>1] + c.B
					if math.Abs(v-wantYt[k]) > 1e-15*(math.Abs(x)+4*c.Sigma) {
						t.Fatalf("n=%d %+v: ỹ[%d] = %v, want %v", n, c, k, v, wantYt[k])
					}
				}
				for _, f := range []struct {
					name           string
					got, want, mag float64
				}{{"loss", got.Loss, want.Loss, mag.Loss}, {"Σθ", got.Theta, want.Theta, mag.Theta}, {"Σθ²", got.Theta2, want.Theta2, mag.Theta2},
					{"Σỹ", got.Target, want.Target, mag.Target}, {"Σθỹ", got.ThetaTarget, want.ThetaTarget, mag.ThetaTarget}} {
					// Two orders of summation: each within n·2⁻⁵³ of the terms'
					// magnitudes (Higham 2002, §4.2), and the loss's e^−|t|.
					if math.Abs(f.got-f.want) > (float64(n)+4)*0x1p-52*f.mag {
						t.Fatalf("n=%d %+v: %s = %v, want %v", n, c, f.name, f.got, f.want)
					}
				}
				if l := c.Binary(cells, theta, nil); l.Loss != got.Loss || l.Theta != 0 {
					t.Fatalf("n=%d: without targets loss %v (sums %v), with %v", n, l.Loss, l.Theta, got.Loss)
				}
			}
		}
		// NaN abilities give a NaN loss and NaN targets.
		th := []float64{math.NaN(), 1}
		cells := []uint32{0, 1, 2, 3, 0, 1, 2, 3, 0}
		yt := make([]float64, len(cells))
		if s := (LogisticCells{A: 1, B: 0, Sigma: 1}).Binary(cells, th, yt); !math.IsNaN(s.Loss) || !math.IsNaN(yt[0]) || math.IsNaN(yt[2]) {
			t.Fatalf("NaN θ: loss %v, targets %v", s.Loss, yt)
		}
	})
}

// TestLogisticCellsWeighted checks Weighted as TestLogisticCells checks
// Binary, against float64 with math's functions, trials from 1 to 20 and
// fractions k/n, q within 2 ulp.
func TestLogisticCellsWeighted(t *testing.T) {
	forLevels(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(42, 43))
		theta := make([]float64, 200)
		for i := range theta {
			theta[i] = rng.NormFloat64() * 2
		}
		for _, n := range []int{0, 1, 3, 5, 8, 13, 100, 1001} {
			cells := make([]uint32, n)
			w := make([]float32, n)
			yb := make([]float64, n)
			for k := range cells {
				cells[k] = uint32(rng.IntN(len(theta))) << 1
				w[k] = float32(1 + rng.IntN(20))
				yb[k] = float64(rng.IntN(int(w[k])+1)) / float64(w[k])
			}
			for _, c := range []LogisticCells{{A: 1.3, B: -0.4, Sigma: 1}, {A: 7, B: 3, Sigma: 1.7}} {
				var want, mag WeightedSums
				var wantQ, wantYt []float64
				for k, cell := range cells {
					th := theta[cell>>1]
					x := c.A*th + c.B
					u := x / c.Sigma
					m := float64(w[k])
					wantQ = append(wantQ, 1+math.Exp(-math.Abs(u)))
					want.Linear += m * (math.Max(u, 0) - yb[k]*u)
					mag.Linear += m * 2 * math.Abs(u)
					v := x + 4*c.Sigma*(yb[k]-1/(1+math.Exp(-u)))
					wantYt = append(wantYt, v)
					want.Trials += m
					want.Theta += m * th
					want.Theta2 += m * th * th
					want.Target += m * v
					want.ThetaTarget += m * th * v
					mag.Trials += m
					mag.Theta += m * math.Abs(th)
					mag.Theta2 += m * th * th
					mag.Target += m * math.Abs(v)
					mag.ThetaTarget += m * math.Abs(th*v)
				}
				q, yt := make([]float64, n), make([]float64, n)
				got := c.Weighted(cells, w, yb, theta, yt, q)
				q2 := make([]float64, n)
				if l := c.Weighted(cells, w, yb, theta, nil, q2); l.Linear != got.Linear || l.Trials != 0 || (n > 0 && q2[n-1] != q[n-1]) {
					t.Fatalf("n=%d: without targets %+v, with %+v", n, l, got)
				}
				for k := range cells {
					x := c.A*theta[cells[k]>>1] + c.B
					if ulps64(q[k], wantQ[k]) > 2 || math.Abs(yt[k]-wantYt[k]) > 1e-15*(math.Abs(x)+4*c.Sigma) {
						t.Fatalf("n=%d %+v: cell %d: q %v ỹ %v, want %v and %v", n, c, k, q[k], yt[k], wantQ[k], wantYt[k])
					}
				}
				for _, f := range []struct {
					name           string
					got, want, mag float64
				}{{"linear", got.Linear, want.Linear, mag.Linear}, {"Σn", got.Trials, want.Trials, mag.Trials},
					{"Σnθ", got.Theta, want.Theta, mag.Theta}, {"Σnθ²", got.Theta2, want.Theta2, mag.Theta2},
					{"Σnỹ", got.Target, want.Target, mag.Target}, {"Σnθỹ", got.ThetaTarget, want.ThetaTarget, mag.ThetaTarget}} {
					if math.Abs(f.got-f.want) > (float64(n)+4)*0x1p-52*f.mag {
						t.Fatalf("n=%d %+v: %s = %v, want %v", n, c, f.name, f.got, f.want)
					}
				}
			}
		}
	})
}
