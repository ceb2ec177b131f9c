package train

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/jeirt/jeirt/model"
)

// topicCheckpoint is a constructed map where design matters: d = 6 topics of
// very different sizes (40%, 30%, 15%, 9%, 4%, 2% of 1,000 questions), each
// question pointing along its topic's axis (plus noise), with norms of
// moderate difficulty, and models whose skills on the topics are independent.
// A handful of random questions often misses the small topics; a design
// that spreads over the topics does not.
func topicCheckpoint() (*model.JEIRT, [][]float64) {
	const d, J, N = 6, 1000, 120
	rng := rand.New(rand.NewPCG(5, 6))
	share := []float64{0.40, 0.30, 0.15, 0.09, 0.04, 0.02}
	m := &model.JEIRT{Dim: d}
	for j := 0; j < J; j++ {
		u, topic := rng.Float64(), 0
		for acc := share[0]; u > acc && topic < d-1; acc += share[topic] {
			topic++
		}
		q := make([]float32, d)
		for k := range q {
			q[k] = float32(0.15 * rng.NormFloat64())
		}
		q[topic] += 1
		nrm := float32(model.Norm(q))
		scale := float32(0.5+1.5*rng.Float64()) / nrm
		for k := range q {
			q[k] *= scale
		}
		m.Items = append(m.Items, "q")
		m.Q = append(m.Q, q...)
	}
	rows := make([][]float64, N)
	for i := range rows {
		rows[i] = make([]float64, d)
		for k := range rows[i] {
			rows[i][k] = 1 + 1.5*rng.NormFloat64()
		}
		if i >= 20 { // models 0..19 are new; the rest are on the map
			m.Models = append(m.Models, "m")
			for _, v := range rows[i] {
				m.M = append(m.M, float32(v))
			}
		}
	}
	return m, rows
}

// With few questions, the V-optimal picks place a new model better than
// random questions on the topic-imbalanced map: the mean over 20 new models
// of the expected log loss over all 1,000 questions (oracle probabilities),
// against the mean of 10 seeded random draws per model.
func TestSuggestBeatsRandom(t *testing.T) {
	m, rows := topicCheckpoint()
	ob := Onboard{}
	prior, err := ob.PriorFor(m)
	if err != nil {
		t.Fatal(err)
	}
	J := m.NumItems()
	q := make([][]float32, J)
	for j := range q {
		q[j] = m.ItemEmbedding(j)
	}
	rng := rand.New(rand.NewPCG(9, 9))
	oracle := func(i, j int) float64 {
		row := make([]float32, len(rows[i]))
		for k, v := range rows[i] {
			row[k] = float32(v)
		}
		return model.Sigmoid(model.Logit(q[j], row))
	}
	// Expected log loss of a fitted row against the true probabilities.
	loss := func(i int, items []int) float64 {
		data := &RowData{Dim: m.Dim}
		for _, j := range items {
			var y uint8
			if rng.Float64() < oracle(i, j) {
				y = 1
			}
			data.Add(q[j], y)
		}
		row, _, err := ob.FitRow(data, prior)
		if err != nil {
			t.Fatal(err)
		}
		row32 := make([]float32, len(row))
		for k, v := range row {
			row32[k] = float32(v)
		}
		var l float64
		for j := 0; j < J; j++ {
			p, pt := model.Sigmoid(model.Logit(q[j], row32)), oracle(i, j)
			l -= (pt*math.Log(p) + (1-pt)*math.Log(1-p)) / float64(J)
		}
		return l
	}
	for _, K := range []int{8, 16} {
		for _, c := range []struct {
			name string
			pick func(context.Context, *model.JEIRT, [][]float32, int, Gaussian) ([]Suggested, error)
			want bool // must beat random by 0.003 (a deterministic, seeded comparison)
		}{{"d-optimal", SuggestItems, false}, {"v-optimal", SuggestItemsV, true}} {
			picks, err := c.pick(context.Background(), m, q, K, prior)
			if err != nil {
				t.Fatal(err)
			}
			items := make([]int, K)
			for k, s := range picks {
				items[k] = s.Index
			}
			var sug, rnd float64
			const newModels, draws = 20, 10
			for i := 0; i < newModels; i++ {
				sug += loss(i, items) / newModels
				for d := 0; d < draws; d++ {
					rnd += loss(i, rng.Perm(J)[:K]) / (newModels * draws)
				}
			}
			t.Logf("K=%d %s: expected log loss %.4f, random questions %.4f", K, c.name, sug, rnd)
			if c.want && sug > rnd-0.003 {
				t.Errorf("K=%d %s: log loss %.4f, random %.4f: want at least 0.003 lower", K, c.name, sug, rnd)
			}
		}
	}
}

func TestSuggestItemsPicksDistinctInformativeQuestions(t *testing.T) {
	// Four questions: two identical directions, one orthogonal, one that the
	// mean model always gets right (huge norm along m̄... here tiny weight).
	m := &model.JEIRT{Dim: 2, Models: []string{"a"}, M: []float32{0, 0}}
	q := [][]float32{{0.5, 0}, {0.5, 0}, {0, 0.5}, {0, 8}}
	prior, err := Onboard{Prior: "l2", L2: 1}.PriorFor(m)
	if err != nil {
		t.Fatal(err)
	}
	picks, err := SuggestItems(context.Background(), m, q, 2, prior)
	if err != nil {
		t.Fatal(err)
	}
	// At m̄ = 0, p = σ(−‖q‖): w = 0.235 for the ‖q‖ = 0.5 questions and
	// 3.4e-4 for the last. D-optimal picks question 0 (first of the tie),
	// then the orthogonal one, not its duplicate.
	if picks[0].Index != 0 || picks[1].Index != 2 {
		t.Errorf("d-optimal picked %d, %d; want 0, 2", picks[0].Index, picks[1].Index)
	}
	// log det gain of the first pick: log(1 + w·‖u‖²/λ) with w = σ(−0.5)σ(0.5).
	if w := model.Sigmoid(-0.5) * model.Sigmoid(0.5); math.Abs(picks[0].Gain-math.Log1p(w)) > 1e-6 || math.Abs(picks[0].P-model.Sigmoid(-0.5)) > 1e-6 {
		t.Errorf("first pick: gain %v, P %v; want %v, %v", picks[0].Gain, picks[0].P, math.Log1p(w), model.Sigmoid(-0.5))
	}
	// V-optimal weighs directions by how many pool questions lie along them:
	// e1 holds two of the three informative questions, so it asks along e1
	// twice. First gain: w·u₀ᵀFu₀/(1+w) with F = 2w e1e1ᵀ + ..., i.e. 2w²/(1+w)
	// (at m̄ = 0 every model's weight is the mean model's).
	picks, err = SuggestItemsV(context.Background(), m, q, 2, prior)
	if w := model.Sigmoid(-0.5) * model.Sigmoid(0.5); err != nil || picks[0].Index != 0 || picks[1].Index != 1 || math.Abs(picks[0].Gain-2*w*w/(1+w)) > 1e-7 {
		t.Errorf("v-optimal picked %+v (%v); want 0 then 1, first gain %v", picks, err, 2*w*w/(1+w))
	}
	if _, err := SuggestItems(context.Background(), m, q, 5, prior); err == nil || err.Error() != "suggest: K = 5 but the pool has only 4 questions" {
		t.Errorf("K too large: %v", err)
	}
}
