package analyze

import (
	"fmt"
	"math"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/train/eval"
)

// ProbeResult is a difference-of-means probe: the axis from question group
// B's mean direction to group A's, and where each model lies along it.
type ProbeResult struct {
	A, B   string
	NA, NB int       // items in each group
	Axis   []float64 // unit vector, dim values
	// ItemAUC: how well the axis separates the groups' items (the AUC of
	// q̂·axis for A against B; 1 = perfectly).
	ItemAUC float64
	Models  []ProbeModel
	// AccuracyGapSpearman: Spearman's ρ between the models' projections and
	// their accuracy on A minus their accuracy on B (NaN without responses).
	AccuracyGapSpearman float64
	// GapNote says why AccuracyGapSpearman is undefined; "" when it is not.
	GapNote string
}

// ProbeModel is one model's projection m_i·axis and, with responses, its
// accuracy on each group's items (NaN where it has none).
type ProbeModel struct {
	Name       string
	Projection float64
	AccA, AccB float64
}

// Probe builds the difference-of-means axis (the linear probe of JE-IRT's
// analysis; Marks and Tegmark 2023 use the same construction) between the
// items of groups a and b: axis = mean q̂(a) − mean q̂(b), normalised, with
// q̂ = q/|q| the question directions of ck. Each model's projection m_i·axis
// says how far its ability lies towards a's questions. r, when not nil (its
// items matched to ck's by id), adds each model's accuracy on both groups.
func Probe(ck *model.JEIRT, category []string, a, b string, r *model.Responses) (*ProbeResult, error) {
	dim, J := ck.Dim, ck.NumItems()
	if len(category) != J {
		return nil, fmt.Errorf("probe: %d categories for %d items", len(category), J)
	}
	if a == b {
		return nil, model.FieldErrorf("Axis", "probe: {Axis} %s,%s names one group twice", a, b)
	}
	var ia, ib []int
	for j, g := range category {
		switch g {
		case a:
			ia = append(ia, j)
		case b:
			ib = append(ib, j)
		}
	}
	if len(ia) == 0 || len(ib) == 0 {
		return nil, fmt.Errorf("probe: group %q has %d items and %q has %d (have %v)", a, len(ia), b, len(ib), categories(category))
	}
	ma, mb := eval.MeanDirection(ck.Q, dim, ia), eval.MeanDirection(ck.Q, dim, ib)
	axis := make([]float64, dim)
	n := 0.0
	for d := range axis {
		axis[d] = ma[d] - mb[d]
		n += axis[d] * axis[d]
	}
	if n == 0 {
		return nil, fmt.Errorf("probe: groups %q and %q have the same mean direction", a, b)
	}
	n = math.Sqrt(n)
	for d := range axis {
		axis[d] /= n
	}
	res := &ProbeResult{A: a, B: b, NA: len(ia), NB: len(ib), Axis: axis, AccuracyGapSpearman: math.NaN()}
	proj := func(v []float32, unit bool) float64 {
		s, nn := 0.0, 0.0
		for d, x := range v {
			s += float64(x) * axis[d]
			nn += float64(x) * float64(x)
		}
		if unit && nn > 0 {
			s /= math.Sqrt(nn)
		}
		return s
	}
	var scores []float64
	var labels []uint8
	for _, j := range ia {
		scores, labels = append(scores, proj(ck.ItemEmbedding(j), true)), append(labels, 1)
	}
	for _, j := range ib {
		scores, labels = append(scores, proj(ck.ItemEmbedding(j), true)), append(labels, 0)
	}
	res.ItemAUC = eval.Score(scores, labels).AUC
	accA, accB := groupAccuracy(r, ck, category, a), groupAccuracy(r, ck, category, b)
	var p, gap []float64
	for i, name := range ck.Models {
		pm := ProbeModel{Name: name, Projection: proj(ck.ModelEmbedding(i), false), AccA: math.NaN(), AccB: math.NaN()}
		if accA != nil {
			pm.AccA, pm.AccB = accA[name], accB[name]
			if !math.IsNaN(pm.AccA) && !math.IsNaN(pm.AccB) {
				p, gap = append(p, pm.Projection), append(gap, pm.AccA-pm.AccB)
			}
		}
		res.Models = append(res.Models, pm)
	}
	switch {
	case accA == nil:
		res.GapNote = "no responses (--data) to measure the accuracy gap"
	case len(p) < 3:
		res.GapNote = fmt.Sprintf("%d model(s) answered items of both %s and %s; the correlation needs 3", len(p), a, b)
	default:
		res.AccuracyGapSpearman = eval.Spearman(p, gap)
		res.GapNote = eval.CorrelationNote("the projection", p, "the accuracy gap", gap)
	}
	return res, nil
}

// groupAccuracy is each model's accuracy over r's cells on items of group g
// (by ck's categories, items matched by id); nil without r.
func groupAccuracy(r *model.Responses, ck *model.JEIRT, category []string, g string) map[string]float64 {
	if r == nil {
		return nil
	}
	in := map[string]bool{}
	for j, c := range category {
		if c == g {
			in[ck.Items[j]] = true
		}
	}
	right, seen := map[string]int{}, map[string]int{}
	for c := range r.Label {
		if in[r.Items[r.Item[c]]] {
			m := r.Models[r.Model[c]]
			seen[m]++
			right[m] += int(r.Label[c])
		}
	}
	out := map[string]float64{}
	for _, m := range ck.Models {
		out[m] = math.NaN()
		if seen[m] > 0 {
			out[m] = float64(right[m]) / float64(seen[m])
		}
	}
	return out
}
