package fitstat

import (
	"fmt"
	"math"

	"github.com/jeirt/jeirt/model"
)

// NestedZ is the |z| beyond which a nested comparison calls a difference:
// the two-sided 5% point of N(0, 1).
const NestedZ = 1.96

// Verdicts of a NestedComparison.
const (
	VerdictLarger  = "the larger model predicts better"
	VerdictSmaller = "the smaller model predicts better"
	VerdictTie     = "no difference: prefer the smaller model"
)

// NestedComparison compares two fits on the same held-out cells where one
// model nests the other (1PL ⊂ 2PL ⊂ 3PL at one rank, rank r − 1 ⊂ rank r
// of one family): the larger one's held-out log loss per answer minus the
// smaller one's (Diff, negative when the larger predicts better), its
// standard error clustered by model (SE: the cells of one model are not
// independent), z = Diff/SE and the verdict at |z| > NestedZ.
type NestedComparison struct {
	Smaller string      `json:"smaller"`
	Larger  string      `json:"larger"`
	Diff    float64     `json:"log_loss_diff"`
	SE      model.Float `json:"se"`
	Z       model.Float `json:"z"`
	Verdict string      `json:"verdict"`
}

// HeldOut is what a nested comparison needs of the held-out cells, in one
// order: each cell's observed fraction y (k/n), its trials w (its weight)
// and its model (the cluster).
type HeldOut struct {
	Y, W  []float64
	Model []int32
}

// Nests reports whether the model (family, rank) larger nests smaller: the
// same rank and the next family (1PL ⊂ 2PL ⊂ 3PL), or the same family and
// one more dimension.
func Nests(smaller model.Family, smallerRank int, larger model.Family, largerRank int) bool {
	if n, ok := larger.Nested(); ok && n == smaller && smallerRank == largerRank {
		return true
	}
	return smaller == larger && largerRank == smallerRank+1
}

// Compare is the nested comparison of the held-out predictions small and
// large (P(correct) of each cell of h) of the fits named smaller and larger:
// Diff = Σ w·(ℓ_large − ℓ_small)/Σ w with ℓ = −[y log p + (1 − y) log(1 − p)]
// (p clipped to [1e-15, 1 − 1e-15], as eval's log loss), and the
// cluster-robust (sandwich) variance Var = G/(G − 1)·Σ_i S_i²/(Σ w)², S_i
// the sum of w·(d − Diff) over model i's cells, G the models (Cameron and
// Miller 2015, "A practitioner's guide to cluster-robust inference", J.
// Human Resources 50, eq. 11). SE, Z are NaN (verdict tie) with fewer than
// two models or no spread.
func Compare(smaller, larger string, small, large []float64, h HeldOut) NestedComparison {
	loss := func(p, y float64) float64 {
		q := math.Min(math.Max(p, 1e-15), 1-1e-15)
		return -(y*math.Log(q) + (1-y)*math.Log1p(-q))
	}
	d := make([]float64, len(small))
	var sum, wsum float64
	for c := range small {
		d[c] = loss(large[c], h.Y[c]) - loss(small[c], h.Y[c])
		sum += h.W[c] * d[c]
		wsum += h.W[c]
	}
	out := NestedComparison{Smaller: smaller, Larger: larger, Diff: sum / wsum, SE: model.Float(math.NaN()), Z: model.Float(math.NaN()), Verdict: VerdictTie}
	S := map[int32]float64{}
	for c, i := range h.Model {
		S[i] += h.W[c] * (d[c] - out.Diff)
	}
	G := float64(len(S))
	if G < 2 {
		return out
	}
	v := 0.0
	for _, s := range S {
		v += s * s
	}
	se := math.Sqrt(G / (G - 1) * v / (wsum * wsum))
	if !(se > 0) {
		return out
	}
	out.SE, out.Z = model.Float(se), model.Float(out.Diff/se)
	switch {
	case float64(out.Z) < -NestedZ:
		out.Verdict = VerdictLarger
	case float64(out.Z) > NestedZ:
		out.Verdict = VerdictSmaller
	}
	return out
}

// String is the comparison as irt cv prints it: "2pl vs 1pl: held-out log
// loss −0.01234 per answer (se 0.00210, z −5.88): the larger model predicts
// better".
func (n NestedComparison) String() string {
	return fmt.Sprintf("%s vs %s: held-out log loss %+.5f per answer (se %.5f, z %.2f): %s", n.Larger, n.Smaller, n.Diff, n.SE, n.Z, n.Verdict)
}
