package onboard

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/checkpoint"
	"github.com/jeirt/jeirt/model/progress"
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
		addQuestion(m, rng, topic, 0.15, 0.5, 2)
	}
	rows := make([][]float64, N)
	for i := range rows {
		rows[i] = make([]float64, d)
		for k := range rows[i] {
			rows[i][k] = 1 + 1.5*rng.NormFloat64()
		}
	}
	return m, putOnMap(m, rows)
}

// addQuestion adds to m a question along axis, with N(0, noise²) added to
// each coordinate, and a norm (difficulty) uniform on [lo, hi].
func addQuestion(m *model.JEIRT, rng *rand.Rand, axis int, noise, lo, hi float64) {
	q := make([]float32, m.Dim)
	for k := range q {
		q[k] = float32(noise * rng.NormFloat64())
	}
	q[axis] += 1
	scale := float32(lo+(hi-lo)*rng.Float64()) / float32(model.Norm(q))
	for k := range q {
		q[k] *= scale
	}
	m.Items = append(m.Items, "q")
	m.Q = append(m.Q, q...)
}

// putOnMap adds rows 20.. to m as its known models (rows 0..19 are the new
// models the tests place) and returns rows.
func putOnMap(m *model.JEIRT, rows [][]float64) [][]float64 {
	for _, row := range rows[20:] {
		m.Models = append(m.Models, "m")
		for _, v := range row {
			m.M = append(m.M, float32(v))
		}
	}
	return rows
}

// placing scores rows fitted for the new models of a constructed map: the
// expected log loss over all its questions under the true rows.
type placing struct {
	m     *model.JEIRT
	rows  [][]float32 // true rows; 0..19 are new
	q     [][]float32
	ob    Onboard
	prior Gaussian
}

func newPlacing(t *testing.T, m *model.JEIRT, rows [][]float64) *placing {
	p := &placing{m: m, q: make([][]float32, m.NumItems())}
	for _, row := range rows {
		p.rows = append(p.rows, float32Row(row))
	}
	for j := range p.q {
		p.q[j] = m.ItemEmbedding(j)
	}
	var err error
	if p.prior, err = p.ob.PriorFor(m); err != nil {
		t.Fatal(err)
	}
	return p
}

// truth is the true P that new model i answers question j right.
func (p *placing) truth(i, j int) float64 {
	return model.Sigmoid(model.Logit(p.q[j], p.rows[i]))
}

// answer draws model i's answer to question j.
func (p *placing) answer(rng *rand.Rand, i, j int) uint8 {
	if rng.Float64() < p.truth(i, j) {
		return 1
	}
	return 0
}

// loss is the expected log loss over all questions of the row fitted to
// model i's answers in data.
func (p *placing) loss(t *testing.T, i int, data *RowData) float64 {
	row, _, err := p.ob.FitRow(data, p.prior)
	if err != nil {
		t.Fatal(err)
	}
	row32 := float32Row(row)
	var l float64
	for j := range p.q {
		pj, pt := model.Sigmoid(model.Logit(p.q[j], row32)), p.truth(i, j)
		l -= (pt*math.Log(pj) + (1-pt)*math.Log(1-pj)) / float64(len(p.q))
	}
	return l
}

// With few questions, the V-optimal picks place a new model better than
// random questions on the topic-imbalanced map: the mean over 20 new models
// of the expected log loss over all 1,000 questions (oracle probabilities),
// against the mean of 10 seeded random draws per model.
func TestSuggestBeatsRandom(t *testing.T) {
	m, rows := topicCheckpoint()
	pl := newPlacing(t, m, rows)
	J := m.NumItems()
	rng := rand.New(rand.NewPCG(9, 9))
	loss := func(i int, items []int) float64 {
		data := &RowData{Dim: m.Dim}
		for _, j := range items {
			data.Add(pl.q[j], pl.answer(rng, i, j))
		}
		return pl.loss(t, i, data)
	}
	for _, K := range []int{8, 16} {
		for _, c := range []struct {
			name string
			pick func(context.Context, *model.JEIRT, [][]float32, int, Gaussian) ([]Suggested, error)
			want bool // must beat random by 0.003 (a deterministic, seeded comparison)
		}{{"d-optimal", SuggestItems, false}, {"v-optimal", SuggestItemsV, true}} {
			picks, err := c.pick(context.Background(), m, pl.q, K, pl.prior)
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

// difficultyCheckpoint is a map like a benchmark that mixes trivial and very
// hard questions: d = 4, 1,000 questions pointing near e1 with norms
// (difficulties) spread evenly over [0.2, 6], and models whose ability along
// e1 is N(3, 1.5²) (other coordinates N(0, 0.5²)). For any one model most
// questions are nearly certain, so random questions say little about it.
func difficultyCheckpoint() (*model.JEIRT, [][]float64) {
	const d, J, N = 4, 1000, 120
	rng := rand.New(rand.NewPCG(7, 8))
	m := &model.JEIRT{Dim: d}
	for j := 0; j < J; j++ {
		addQuestion(m, rng, 0, 0.3, 0.2, 6)
	}
	rows := make([][]float64, N)
	for i := range rows {
		rows[i] = make([]float64, d)
		for k := range rows[i] {
			rows[i][k] = 0.5 * rng.NormFloat64()
		}
		rows[i][0] = 3 + 1.5*rng.NormFloat64()
	}
	return m, putOnMap(m, rows)
}

// Asked in 4 rounds (a random quarter, then SuggestNext at the posterior of
// the answers so far), new models are placed better than with as many random
// questions: the mean over 20 new models and 10 seeded draws of the expected
// log loss over all 1,000 questions, on the map of wide difficulties.
func TestSuggestNextBeatsRandom(t *testing.T) {
	m, rows := difficultyCheckpoint()
	pl := newPlacing(t, m, rows)
	ob, prior, q := pl.ob, pl.prior, pl.q
	rng := rand.New(rand.NewPCG(3, 4))
	answer := func(i, j int) uint8 { return pl.answer(rng, i, j) }
	loss := func(i int, data *RowData) float64 { return pl.loss(t, i, data) }
	ctx := context.Background()
	for _, K := range []int{8, 16} {
		var adaptive, random float64
		const newModels, draws = 20, 10
		for i := 0; i < newModels; i++ {
			for s := uint64(0); s < draws; s++ {
				seed := uint64(100*i) + s
				// Random: K questions at once.
				picks, err := SuggestRandom(q, K, seed, nil, nil)
				if err != nil {
					t.Fatal(err)
				}
				data := &RowData{Dim: m.Dim}
				for _, p := range picks {
					data.Add(q[p.Index], answer(i, p.Index))
				}
				random += loss(i, data) / (newModels * draws)
				// Adaptive: the same first quarter, then three rounds of SuggestNext.
				asked, data, err := askInRounds(ctx, q, K, seed, ob, prior, func(j int) uint8 { return answer(i, j) })
				if err != nil {
					t.Fatal(err)
				}
				seen := map[int]bool{}
				for _, j := range asked {
					if seen[j] {
						t.Fatalf("asked question %d again", j)
					}
					seen[j] = true
				}
				if data.Len() != K || len(asked) != K {
					t.Fatalf("adaptive asked %d questions, want %d", len(asked), K)
				}
				adaptive += loss(i, data) / (newModels * draws)
			}
		}
		t.Logf("K=%d: expected log loss adaptive %.4f, random %.4f", K, adaptive, random)
		if adaptive > random-0.005 {
			t.Errorf("K=%d: adaptive log loss %.4f, random %.4f: want at least 0.005 lower", K, adaptive, random)
		}
	}
}

// askInRounds asks a new model K of the questions q as the README's
// workflow does: in 4 rounds (fewer when K < 4), seeded random questions
// first, then SuggestNext at the posterior of the answers so far. answer(j)
// is the model's answer to question j. It returns the questions in the order
// asked and the answers.
func askInRounds(ctx context.Context, q [][]float32, K int, seed uint64, ob Onboard, prior Gaussian, answer func(j int) uint8) ([]int, *RowData, error) {
	done := make([]bool, len(q))
	data := &RowData{Dim: len(prior.Mean)}
	var asked []int
	rounds := min(4, K)
	for rd := 0; rd < rounds; rd++ {
		nb := (K - len(asked) + rounds - rd - 1) / (rounds - rd)
		var picks []Suggested
		var err error
		if rd == 0 {
			picks, err = SuggestRandom(q, nb, seed, done, nil)
		} else {
			var post Gaussian
			if post, err = ob.Posterior(data, prior); err == nil {
				picks, err = SuggestNext(ctx, q, nb, post, done)
			}
		}
		if err != nil {
			return nil, nil, err
		}
		for _, p := range picks {
			done[p.Index] = true
			asked = append(asked, p.Index)
			data.Add(q[p.Index], answer(p.Index))
		}
	}
	return asked, data, nil
}

// Posterior is the prior without answers, and otherwise a Gaussian at the
// MAP row whose precision is the Hessian there.
func TestPosterior(t *testing.T) {
	ob := Onboard{}
	prior := Gaussian{Mean: []float64{0.5, -1}, Precision: []float64{2, 0.5, 0.5, 1}}
	post, err := ob.Posterior(&RowData{Dim: 2}, prior)
	if err != nil || &post.Mean[0] != &prior.Mean[0] {
		t.Fatalf("no answers: %v %+v", err, post)
	}
	data := &RowData{Dim: 2}
	data.Add([]float32{3, 4}, 1)   // u = (0.6, 0.8), ‖q‖ = 5
	data.Add([]float32{0, 0.5}, 0) // u = (0, 1), ‖q‖ = 0.5
	post, err = ob.Posterior(data, prior)
	if err != nil {
		t.Fatal(err)
	}
	row, _, err := ob.FitRow(data, prior)
	if err != nil {
		t.Fatal(err)
	}
	p1 := model.Sigmoid(0.6*row[0] + 0.8*row[1] - 5)
	p2 := model.Sigmoid(row[1] - 0.5)
	w1, w2 := p1*(1-p1), p2*(1-p2)
	want := []float64{2 + w1*0.36, 0.5 + w1*0.48, 0.5 + w1*0.48, 1 + w1*0.64 + w2}
	for k := range want {
		if math.Abs(post.Precision[k]-want[k]) > 1e-6 {
			t.Errorf("precision %v, want %v", post.Precision, want)
			break
		}
	}
	if post.Mean[0] != row[0] || post.Mean[1] != row[1] {
		t.Errorf("posterior mean %v, MAP row %v", post.Mean, row)
	}
	// The gradient at the mean vanishes: Λ(m−μ) + Σ (p−y) u = 0.
	g0 := 2*(row[0]-0.5) + 0.5*(row[1]+1) + (p1-1)*0.6
	g1 := 0.5*(row[0]-0.5) + 1*(row[1]+1) + (p1-1)*0.8 + p2
	if math.Abs(g0) > 1e-5 || math.Abs(g1) > 1e-5 {
		t.Errorf("gradient at the posterior mean (%v, %v)", g0, g1)
	}
}

// SuggestRandom and SuggestNext never pick an answered question, SuggestRandom
// is reproducible from its seed, and both say how many questions are left.
func TestSuggestRoundsSkipAnswered(t *testing.T) {
	m, _ := topicCheckpoint()
	prior, err := Onboard{}.PriorFor(m)
	if err != nil {
		t.Fatal(err)
	}
	q := make([][]float32, 50)
	for j := range q {
		q[j] = m.ItemEmbedding(j)
	}
	done := make([]bool, len(q))
	for j := 0; j < len(q); j += 2 {
		done[j] = true
	}
	a, err := SuggestRandom(q, 10, 7, done, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := SuggestRandom(q, 10, 7, done, nil)
	c, _ := SuggestRandom(q, 10, 8, done, nil)
	same, differ := true, false
	for k := range a {
		same = same && a[k].Index == b[k].Index
		differ = differ || a[k].Index != c[k].Index
		if done[a[k].Index] {
			t.Errorf("random pick %d was answered", a[k].Index)
		}
	}
	if !same || !differ {
		t.Errorf("seed 7 twice: same %v; seeds 7 and 8 differ %v", same, differ)
	}
	// With a row, P is its P(correct); without, NaN.
	at, _ := SuggestRandom(q, 10, 7, done, prior.Mean)
	for k, s := range at {
		want := model.Sigmoid(model.Logit(q[s.Index], float32Row(prior.Mean)))
		if s.Index != a[k].Index || math.Abs(s.P-want) > 1e-12 || !math.IsNaN(a[k].P) {
			t.Errorf("pick %d: %+v at the prior mean (P want %v), %+v without a row", k, s, want, a[k])
		}
	}
	next, err := SuggestNext(context.Background(), q, 25, prior, done)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, s := range next {
		if done[s.Index] || seen[s.Index] {
			t.Errorf("SuggestNext picked %d (answered %v, twice %v)", s.Index, done[s.Index], seen[s.Index])
		}
		seen[s.Index] = true
	}
	want := "suggest: K = 26 but only 25 of the pool's 50 questions are not answered yet"
	if _, err := SuggestNext(context.Background(), q, 26, prior, done); err == nil || err.Error() != want {
		t.Errorf("too many: %v", err)
	}
	if _, err := SuggestRandom(q, 26, 1, done, nil); err == nil || err.Error() != want {
		t.Errorf("too many, random: %v", err)
	}
}

// TestSuggestTextsFromCheckpoint: without a pool, the suggested questions
// carry the texts of the item file the checkpoint's training config names.
func TestSuggestTextsFromCheckpoint(t *testing.T) {
	m, _ := difficultyCheckpoint()
	m.Items = make([]string, len(m.Items))
	for j := range m.Items {
		m.Items[j] = fmt.Sprintf("q%d", j)
	}
	var b strings.Builder
	b.WriteString("item_id,text\n")
	for j, id := range m.Items {
		if j%2 == 0 { // every other item has a text
			fmt.Fprintf(&b, "%s,question number %d\n", id, j)
		}
	}
	items := filepath.Join(t.TempDir(), "items.csv")
	if err := os.WriteFile(items, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, _ := json.Marshal(map[string]any{"data": map[string]string{"items": items}})
	ck := &checkpoint.Checkpoint{Model: m, Manifest: checkpoint.Manifest{Config: cfg}}
	var log strings.Builder
	res, err := Round{K: 6, Design: "random", Seed: 3, Log: progress.LogTo(&log)}.Suggest(context.Background(), ck)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range res.Picks {
		want := ""
		if p.Index%2 == 0 {
			want = fmt.Sprintf("question number %d", p.Index)
		}
		if got := res.Texts[p.Index]; got != want {
			t.Errorf("item %s: text %q, want %q", m.Items[p.Index], got, want)
		}
	}
	if want := fmt.Sprintf("suggest: %d of the checkpoint's %d items have no text in %s\n", len(m.Items)/2, len(m.Items), items); log.String() != want {
		t.Errorf("log %q, want %q", log.String(), want)
	}
	var csv strings.Builder
	if err := res.WriteCSV(&csv); err != nil || !strings.Contains(csv.String(), ",question number ") {
		t.Errorf("CSV without texts: %v\n%s", err, csv.String())
	}
	// No config: the texts stay empty and the log says to give --pool.
	log.Reset()
	if _, err := (Round{K: 2, Design: "random", Log: progress.LogTo(&log)}).Suggest(context.Background(), &checkpoint.Checkpoint{Model: m}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "give --pool") {
		t.Errorf("log %q", log.String())
	}
}
