package eval

import (
	"encoding/json"
	"math"
	"sort"

	"github.com/jeirt/jeirt/model"
)

// Metrics scores probabilistic predictions of binary labels.
type Metrics struct {
	N        int     `json:"n"`
	Accuracy float64 `json:"accuracy"` // fraction with (p ≥ 0.5) == label
	AUC      float64 `json:"auc"`      // area under the ROC curve, ties counted half; NaN with one class
	LogLoss  float64 `json:"log_loss"` // mean −log p(label), p clipped to [1e-15, 1−1e-15]
	Brier    float64 `json:"brier"`    // mean (p − label)²
	ECE      float64 `json:"ece"`      // expected calibration error over 10 equal-width bins
}

// Scores are m as jeirt's JSON files carry them (NaN as null).
func (m Metrics) Scores() model.Scores {
	return model.Scores{Accuracy: model.Float(m.Accuracy), AUC: model.Float(m.AUC), Brier: model.Float(m.Brier),
		ECE: model.Float(m.ECE), LogLoss: model.Float(m.LogLoss), N: m.N}
}

// FromScores gives the Metrics of s back in memory (NaN where s has null).
func FromScores(s model.Scores) Metrics {
	return Metrics{N: s.N, Accuracy: float64(s.Accuracy), AUC: float64(s.AUC), LogLoss: float64(s.LogLoss),
		Brier: float64(s.Brier), ECE: float64(s.ECE)}
}

// MarshalJSON writes m with NaN (undefined: no cells, one class) as null.
func (m Metrics) MarshalJSON() ([]byte, error) {
	f := func(x float64) model.Float { return model.Float(x) }
	return json.Marshal(struct {
		N        int         `json:"n"`
		Accuracy model.Float `json:"accuracy"`
		AUC      model.Float `json:"auc"`
		LogLoss  model.Float `json:"log_loss"`
		Brier    model.Float `json:"brier"`
		ECE      model.Float `json:"ece"`
	}{m.N, f(m.Accuracy), f(m.AUC), f(m.LogLoss), f(m.Brier), f(m.ECE)})
}

// Score computes Metrics for predicted probabilities p of labels y (0/1).
// Without cells every score is NaN (undefined), not 0.
func Score(p []float64, y []uint8) Metrics {
	frac := make([]float64, len(y))
	for i, v := range y {
		frac[i] = float64(v)
	}
	return ScoreFractions(p, frac, nil)
}

// ScoreResponses scores predictions p of r's cells: Score on 0/1 answers,
// ScoreFractions on cells of several trials or graded scores (fractions k/n
// weighted by trials n).
func ScoreResponses(p []float64, r *model.Responses) Metrics {
	if !r.Weighted() {
		return Score(p, r.Label)
	}
	frac, w := make([]float64, r.Len()), make([]float64, r.Len())
	for c := range frac {
		frac[c], w[c] = r.ScoreAt(c), float64(r.TrialsAt(c))
	}
	return ScoreFractions(p, frac, w)
}

// ScoreFractions computes Metrics for predictions p of cells whose outcome
// is a fraction (k successes of n trials, or a graded score: frac = k/n in
// [0, 1]) with weight n (nil: every cell one trial):
//
//   - LogLoss, Brier and ECE are on the fractions, weighted by trials: the
//     mean cross-entropy −[ȳ log p + (1 − ȳ) log(1 − p)] per trial (for k of
//     n, the binomial log loss per trial), the mean (p − ȳ)² and the
//     calibration gap per trial;
//   - Accuracy and AUC are per cell, of the rounded outcome: a cell counts as
//     correct when ȳ ≥ ½ (model.RoundedLabel), and the prediction when p ≥ ½.
//
// On 0/1 cells of one trial each it is Score.
func ScoreFractions(p, frac, weight []float64) Metrics {
	m := Metrics{N: len(p)}
	if len(p) == 0 {
		nan := math.NaN()
		m.Accuracy, m.AUC, m.LogLoss, m.Brier, m.ECE = nan, nan, nan, nan, nan
		return m
	}
	const bins = 10
	var binP, binY [bins]float64
	y := make([]uint8, len(p))
	total := 0.0
	for i, pi := range p {
		w := 1.0
		if weight != nil {
			w = weight[i]
		}
		f := frac[i]
		if 2*f >= 1 {
			y[i] = 1
		}
		if (pi >= 0.5) == (y[i] == 1) {
			m.Accuracy++
		}
		q := math.Min(math.Max(pi, 1e-15), 1-1e-15)
		// ȳ = 0 or 1 leave out the other term (0·log 0 = 0, no NaN).
		if f > 0 {
			m.LogLoss -= w * f * math.Log(q)
		}
		if f < 1 {
			m.LogLoss -= w * (1 - f) * math.Log(1-q)
		}
		m.Brier += w * (pi - f) * (pi - f)
		b := min(max(int(pi*bins), 0), bins-1)
		binP[b] += w * pi
		binY[b] += w * f
		total += w
	}
	m.Accuracy /= float64(len(p))
	m.LogLoss /= total
	m.Brier /= total
	for b := 0; b < bins; b++ {
		m.ECE += math.Abs(binP[b]-binY[b]) / total
	}
	m.AUC = AUC(p, y)
	return m
}

// AUC is the Mann-Whitney estimate of the area under the ROC curve, with tied
// scores counted as half. It is NaN when y holds only one class.
//
// It is NaN, too, when a score is NaN.
func AUC(p []float64, y []uint8) float64 {
	for _, v := range p {
		if math.IsNaN(v) {
			return math.NaN()
		}
	}
	idx := make([]int, len(p))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return p[idx[a]] < p[idx[b]] })
	var pos, neg, rankSum float64
	for i := 0; i < len(idx); {
		j := i + 1
		for j < len(idx) && p[idx[j]] == p[idx[i]] {
			j++
		}
		avgRank := float64(i+j+1) / 2 // ranks i+1..j
		for k := i; k < j; k++ {
			if y[idx[k]] == 1 {
				pos++
				rankSum += avgRank
			} else {
				neg++
			}
		}
		i = j
	}
	if pos == 0 || neg == 0 {
		return math.NaN()
	}
	return (rankSum - pos*(pos+1)/2) / (pos * neg)
}
