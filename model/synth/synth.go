// Package synth simulates item-level benchmark responses with known ground
// truth, for recovery tests and benchmarks.
//
// Three generators, each deterministic for a seed (math/rand/v2 PCG):
//
//   - 2pl: θ_i ~ N(0,1), a_j ~ U(0.3,2), b_j ~ N(0,1), σ = 1,
//     P(y_ij = 1) = sigmoid(θ_i a_j + b_j).
//   - mirt: rank r, θ_i ~ N(0, I_r), loadings A ≥ 0 with simple structure (each
//     item loads mainly on dimension j mod r), b_j ~ N(0,1),
//     P = sigmoid(θ_i·a_j + b_j).
//   - jeirt: item features x_j ∈ R^D drawn from a Gaussian mixture (clustered,
//     like sentence embeddings of topical questions), a fixed random map
//     x_j ↦ q_j ∈ R^d, model rows m_i ∈ R^d, and the JE-IRT link
//     P = sigmoid(q_j·m_i/‖q_j‖ − ‖q_j‖) (the direction of q says what an item
//     tests, its norm how hard it is).
//
// Cells are dropped completely at random (MCAR) with probability Missing.
//
// The generators also give what modern harnesses record: Guess > 0 adds a
// lower asymptote (2pl and mirt: the 3PL, P = c + (1 − c)·sigmoid(x));
// Trials > 1 samples each cell n ~ U{1, …, Trials} times (k of n correct,
// k ~ Binomial(n, P)); Levels > 1 grades each cell on Levels equally spaced
// scores from 0 to 1, score = Binomial(Levels − 1, P)/(Levels − 1), so the
// expected score is P (the fractional logit model) and scores of exactly 0
// and 1 occur.
package synth

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/jeirt/jeirt/model"
)

// KindTwoPL is the kind of the rank-1 2PL generator, named as its family.
const KindTwoPL = string(model.TwoPL)

// Options configures Generate. The zero value of each optional field picks a default.
type Options struct {
	Kind    string  // 2pl, mirt or jeirt
	Models  int     // N, number of models (respondents)
	Items   int     // J, number of items
	Rank    int     // r for mirt (default 2); 2pl is rank 1
	Missing float64 // probability that a cell is unobserved, in [0, 1)
	Seed    int64

	FeatureDim int // D, item feature dimension for jeirt (default 32)
	EmbedDim   int // d, embedding dimension of q and m for jeirt (default 8)

	// The lower asymptote c of every item (2pl and mirt), the most trials
	// per cell, the score levels of a graded benchmark (Trials and Levels
	// exclusive; 0 or 1 means off). See the package comment.
	Guess  float64
	Trials int
	Levels int
}

// Truth is the ground truth behind a simulated Responses.
type Truth struct {
	// 2pl and mirt: row-major as in model.IRT (Theta N x r, A J x r, B J), σ = 1.
	Rank     int
	Theta    []float64
	A        []float64
	B        []float64
	C        []float64   // with Guess: each item's lower asymptote c_j
	Features [][]float32 // jeirt: J x D item features
	Q        [][]float64 // jeirt: J x d item embeddings
	M        [][]float64 // jeirt: N x d model embeddings

	// OracleP is the true probability that model i answers item j correctly.
	OracleP func(i, j int) float64
}

// Generate simulates responses and returns them with their ground truth.
func Generate(opt Options) (*model.Responses, *Truth, error) {
	if opt.Models < 1 || opt.Items < 1 {
		return nil, nil, fmt.Errorf("synth: need at least one model and one item (got %d models, %d items)", opt.Models, opt.Items)
	}
	if opt.Models > math.MaxInt32 || opt.Items > math.MaxInt32 || float64(opt.Models)*float64(opt.Items) > math.MaxInt32 {
		return nil, nil, fmt.Errorf("synth: %d x %d cells is too many", opt.Models, opt.Items)
	}
	if !(opt.Missing >= 0 && opt.Missing < 1) {
		return nil, nil, fmt.Errorf("synth: missing rate %v is not in [0, 1)", opt.Missing)
	}
	if opt.Rank < 0 || opt.FeatureDim < 0 || opt.EmbedDim < 0 {
		return nil, nil, fmt.Errorf("synth: rank, feature and embedding dimensions must not be negative")
	}
	if !(opt.Guess >= 0 && opt.Guess < 1) || opt.Trials < 0 || opt.Levels < 0 || opt.Trials > 1 && opt.Levels > 1 || opt.Trials > 1<<20 || opt.Levels > 1<<20 {
		return nil, nil, fmt.Errorf("synth: guess %v must be in [0, 1), trials %d and levels %d at most 1048576 and not both above 1", opt.Guess, opt.Trials, opt.Levels)
	}
	if opt.Guess > 0 && opt.Kind == "jeirt" {
		return nil, nil, fmt.Errorf("synth: --guess applies to kinds 2pl and mirt")
	}
	// Two streams: parameters and labels/missingness, so that changing the
	// missing rate leaves the true parameters unchanged.
	params := rand.New(rand.NewPCG(uint64(opt.Seed), 0x9e3779b97f4a7c15))
	cells := rand.New(rand.NewPCG(uint64(opt.Seed), 0xbf58476d1ce4e5b9))

	var t *Truth
	var topic []int
	switch opt.Kind {
	case KindTwoPL:
		if opt.Rank > 1 {
			return nil, nil, model.FieldErrorf("Kind", "synth: kind 2pl has rank 1 (use {Kind} mirt for rank %d)", opt.Rank)
		}
		t = gen2PL(params, opt.Models, opt.Items)
	case "mirt":
		r := opt.Rank
		if r == 0 {
			r = 2
		}
		t = genMIRT(params, opt.Models, opt.Items, r)
	case "jeirt":
		D, d := opt.FeatureDim, opt.EmbedDim
		if D == 0 {
			D = 32
		}
		if d == 0 {
			d = 8
		}
		t, topic = genJEIRT(params, opt.Models, opt.Items, D, d)
	default:
		return nil, nil, fmt.Errorf("synth: unknown kind %q (want 2pl, mirt or jeirt)", opt.Kind)
	}

	if opt.Guess > 0 {
		t.C = make([]float64, opt.Items)
		p2 := t.OracleP
		for j := range t.C {
			t.C[j] = opt.Guess
		}
		t.OracleP = func(i, j int) float64 { return opt.Guess + (1-opt.Guess)*p2(i, j) }
	}
	r := &model.Responses{Models: names("model_", 3, opt.Models), Items: names("item_", 5, opt.Items)}
	if t.Features != nil {
		// Graded and trial cells have texts too: jeirt trains on them.
		r.ItemText, r.ItemGroup = itemTexts(t.Features, topic)
	}
	if opt.Trials > 1 || opt.Levels > 1 {
		sampled(r, t, opt, cells)
		return r, t, nil
	}
	n := int(float64(opt.Models) * float64(opt.Items) * (1 - opt.Missing) * 1.01)
	r.Model, r.Item, r.Label = make([]int32, 0, n), make([]int32, 0, n), make([]uint8, 0, n)
	for i := 0; i < opt.Models; i++ {
		for j := 0; j < opt.Items; j++ {
			// Draw both numbers for every cell so the labels do not depend on the missing rate.
			u, v := cells.Float64(), cells.Float64()
			if v < opt.Missing {
				continue
			}
			var y uint8
			if u < t.OracleP(i, j) {
				y = 1
			}
			r.Model = append(r.Model, int32(i))
			r.Item = append(r.Item, int32(j))
			r.Label = append(r.Label, y)
		}
	}
	return r, t, nil
}

// sampled draws cells of several trials (opt.Trials) or graded scores
// (opt.Levels) from their own stream, each cell's trials drawn whether it is
// missing or not so that the others do not depend on the missing rate.
func sampled(r *model.Responses, t *Truth, opt Options, cells *rand.Rand) {
	for i := 0; i < opt.Models; i++ {
		for j := 0; j < opt.Items; j++ {
			v := cells.Float64()
			n := opt.Levels - 1
			if opt.Trials > 1 {
				n = 1 + cells.IntN(opt.Trials)
			}
			p, k := t.OracleP(i, j), 0
			for s := 0; s < n; s++ {
				if cells.Float64() < p {
					k++
				}
			}
			if v < opt.Missing {
				continue
			}
			if opt.Levels > 1 {
				r.AppendCell(int32(i), int32(j), float64(k)/float64(n), 1)
			} else {
				r.AppendCell(int32(i), int32(j), float64(k), n)
			}
		}
	}
	r.Normalize()
}

func names(prefix string, width, n int) []string {
	if w := len(fmt.Sprint(n)); w > width {
		width = w
	}
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%0*d", prefix, width, i+1)
	}
	return out
}

func gen2PL(rng *rand.Rand, N, J int) *Truth {
	t := &Truth{Rank: 1, Theta: make([]float64, N), A: make([]float64, J), B: make([]float64, J)}
	for i := range t.Theta {
		t.Theta[i] = rng.NormFloat64()
	}
	for j := 0; j < J; j++ {
		t.A[j] = 0.3 + 1.7*rng.Float64()
		t.B[j] = rng.NormFloat64()
	}
	t.OracleP = irtOracle(t)
	return t
}

func genMIRT(rng *rand.Rand, N, J, r int) *Truth {
	t := &Truth{Rank: r, Theta: make([]float64, N*r), A: make([]float64, J*r), B: make([]float64, J)}
	for i := range t.Theta {
		t.Theta[i] = rng.NormFloat64()
	}
	// Simple structure: item j loads mainly on dimension j mod r, with small
	// cross-loadings on half of the others.
	for j := 0; j < J; j++ {
		for k := 0; k < r; k++ {
			switch {
			case k == j%r:
				t.A[j*r+k] = 0.5 + 1.0*rng.Float64()
			case rng.Float64() < 0.5:
				t.A[j*r+k] = 0.3 * rng.Float64()
			}
		}
		t.B[j] = rng.NormFloat64()
	}
	t.OracleP = irtOracle(t)
	return t
}

func irtOracle(t *Truth) func(i, j int) float64 {
	r := t.Rank
	return func(i, j int) float64 {
		x := t.B[j]
		for k := 0; k < r; k++ {
			x += t.Theta[i*r+k] * t.A[j*r+k]
		}
		return model.Sigmoid(x)
	}
}

// genJEIRT draws clustered features and maps them to q with a fixed random
// one-hidden-layer tanh network, split into a direction and a norm:
//
//	h_j = tanh(W1 x_j / √D),  dir_j = normalize(u + W2 h_j),  ‖q_j‖ = softplus(w3·h_j + c)
//
// u is a shared direction that model rows also lean towards (most models do
// better than chance on most items), and the spread of softplus(·) between about
// 0.2 and 3 gives easy and hard items. Models: m_i = γ_i u + 0.8 z_i with
// γ_i ~ N(1.8, 1), z_i ~ N(0, I_d), so abilities vary along u and models also
// differ in which directions (topics) they are good at.
func genJEIRT(rng *rand.Rand, N, J, D, d int) (*Truth, []int) {
	const H = 32
	K := min(max(J/50, 4), 16) // mixture components ("topics")
	centres := make([][]float64, K)
	for k := range centres {
		centres[k] = normals(rng, D, 1)
	}
	t := &Truth{Features: make([][]float32, J), Q: make([][]float64, J), M: make([][]float64, N)}
	topic := make([]int, J)
	for j := 0; j < J; j++ {
		k := rng.IntN(K)
		topic[j] = k
		x := make([]float32, D)
		for c := range x {
			x[c] = float32(centres[k][c] + 0.5*rng.NormFloat64())
		}
		t.Features[j] = x
	}
	W1 := make([][]float64, H)
	for h := range W1 {
		W1[h] = normals(rng, D, 1/math.Sqrt(float64(D)))
	}
	W2 := make([][]float64, d)
	for k := range W2 {
		W2[k] = normals(rng, H, 1/math.Sqrt(float64(H)))
	}
	w3 := normals(rng, H, 1.2/math.Sqrt(float64(H)))
	u := normals(rng, d, 1)
	scale(u, 1/norm(u))
	h := make([]float64, H)
	for j := 0; j < J; j++ {
		x := t.Features[j]
		for a := range h {
			s := 0.0
			for c, v := range x {
				s += W1[a][c] * float64(v)
			}
			h[a] = math.Tanh(s)
		}
		q := make([]float64, d)
		for k := range q {
			s := u[k]
			for a, v := range h {
				s += W2[k][a] * v
			}
			q[k] = s
		}
		s := 0.3
		for a, v := range h {
			s += w3[a] * v
		}
		scale(q, softplus(s)/norm(q))
		t.Q[j] = q
	}
	for i := 0; i < N; i++ {
		m := normals(rng, d, 0.8)
		g := 1.8 + 1.0*rng.NormFloat64()
		for k := range m {
			m[k] += g * u[k]
		}
		t.M[i] = m
	}
	t.OracleP = func(i, j int) float64 {
		q, m := t.Q[j], t.M[i]
		dot, qq := 0.0, 0.0
		for k := range q {
			dot += q[k] * m[k]
			qq += q[k] * q[k]
		}
		nq := math.Sqrt(qq)
		return model.Sigmoid(dot/nq - nq)
	}
	return t, topic
}

func normals(rng *rand.Rand, n int, sd float64) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = sd * rng.NormFloat64()
	}
	return v
}

func norm(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x * x
	}
	return math.Sqrt(s)
}

func scale(v []float64, c float64) {
	for i := range v {
		v[i] *= c
	}
}

func softplus(x float64) float64 {
	if x > 30 {
		return x
	}
	return math.Log1p(math.Exp(x))
}

// syllables build pronounceable pseudo-words, so item texts look like text to
// a tokenizer while still being a deterministic function of the features.
var syllables = []string{"ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "pa", "do", "gu", "be", "fi", "ho", "ja"}

func word(n int) string {
	var b strings.Builder
	for {
		b.WriteString(syllables[n%len(syllables)])
		n /= len(syllables)
		if n == 0 {
			return b.String()
		}
		n--
	}
}

// itemTexts derives a text for each item from its features, and a group from
// its mixture component: the words name the features with the largest
// magnitude and their signs, so a bag-of-words encoder of the text recovers
// much of the feature vector's structure.
func itemTexts(features [][]float32, topic []int) (text, group []string) {
	const words = 8
	text, group = make([]string, len(features)), make([]string, len(features))
	for j, x := range features {
		order := make([]int, len(x))
		for c := range order {
			order[c] = c
		}
		// partial selection sort for the top words; D is small
		n := min(words, len(x))
		for a := 0; a < n; a++ {
			best := a
			for b := a + 1; b < len(order); b++ {
				if abs32(x[order[b]]) > abs32(x[order[best]]) {
					best = b
				}
			}
			order[a], order[best] = order[best], order[a]
		}
		var b strings.Builder
		for a := 0; a < n; a++ {
			c := order[a]
			if a > 0 {
				b.WriteByte(' ')
			}
			id := 2 * c
			if x[c] < 0 {
				id++
			}
			b.WriteString(word(id + 16))
		}
		group[j] = fmt.Sprintf("topic_%02d", topic[j]+1)
		b.WriteString("?")
		text[j] = b.String()
	}
	return text, group
}

func abs32(v float32) float32 {
	if v < 0 {
		return -v
	}
	return v
}

// ParseGuess reads a lower asymptote c given as text ("" is none, 0): a
// number in [0, 1).
func ParseGuess(s string) (float64, error) {
	if s == "" {
		return 0, nil
	}
	c, err := strconv.ParseFloat(s, 64)
	if err != nil || !(c >= 0 && c < 1) {
		return 0, model.FieldErrorf("Guess", "synth: {Guess} %q: want the lower asymptote c, a number in [0, 1)", s)
	}
	return c, nil
}
