package onboard

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/checkpoint"
	"github.com/jeirt/jeirt/train/estimate"
)

// scoreDraws is the number of posterior draws of a new row behind its score.
const scoreDraws = 64

// Score estimates a new model's score on every item of the map m (whose
// rows are not used) from its fitted answers data (answered: the observed
// fraction correct by item index of m): the answered items count as they
// are and each other item its mean P(correct) over draws of the row's
// Laplace posterior (Posterior), with the interval of estimate.FromDraws.
func (o Onboard) Score(m *model.JEIRT, data *RowData, prior Gaussian, answered map[int]float64, level float64) (*checkpoint.ScoreEstimate, error) {
	post, err := o.WithDefaults().Posterior(data, prior)
	if err != nil {
		return nil, err
	}
	d, J := m.Dim, m.NumItems()
	var ch mat.Cholesky
	if !ch.Factorize(mat.NewSymDense(d, post.Precision)) {
		return nil, fmt.Errorf("onboard: the row's posterior precision is not positive definite")
	}
	var U mat.TriDense
	ch.UTo(&U)
	P := make([]float64, scoreDraws*J)
	row := make([]float32, d)
	x := mat.NewVecDense(d, nil)
	for s := 0; s < scoreDraws; s++ {
		z := mat.NewVecDense(d, nil)
		for k := 0; k < d; k++ {
			z.SetVec(k, fixedNormal(s, k))
		}
		// x ~ N(0, Precision⁻¹): solve U x = z with Precision = UᵀU.
		if err := x.SolveVec(&U, z); err != nil {
			return nil, err
		}
		for k := range row {
			row[k] = float32(post.Mean[k] + x.AtVec(k))
		}
		for j := 0; j < J; j++ {
			P[s*J+j] = model.Sigmoid(model.Logit(m.ItemEmbedding(j), row))
		}
	}
	score, lo, hi := estimate.FromDraws(P, J, answered, level)
	if !model.Finite(score) {
		return nil, fmt.Errorf("onboard: score %v", score)
	}
	return &checkpoint.ScoreEstimate{Items: J, Answered: len(answered), Score: score, Lo: lo, Hi: hi}, nil
}

// fixedNormal is a fixed standard normal number for draw s of coordinate k
// (Box-Muller on a Weyl sequence), so that scores are reproducible.
func fixedNormal(s, k int) float64 {
	u1 := math.Max(math.Mod(float64(s+1)*0.7548776662466927+float64(k)*0.3819660112501051, 1), 1e-12)
	u2 := math.Mod(float64(s+1)*0.5698402909980532+float64(k)*0.6180339887498949, 1)
	return math.Sqrt(-2*math.Log(u1)) * math.Cos(2*math.Pi*u2)
}
