package model

import (
	"fmt"
	"math"

	"github.com/jeirt/jeirt/model/simd"
)

// JEIRT is a joint-embedding IRT model (JE-IRT; Yao et al., "JE-IRT: A
// Geometric Lens on LLM Abilities through Joint Embedding Item Response
// Theory", arXiv:2509.22888, 2025): each question j has an
// embedding q_j = W2·relu(W1·x_j + c1) + c2 (+ r_j when the per-question
// residual is on), computed by an MLP adapter from its frozen encoder vector
// x_j, and each model i has a free embedding m_i. The probability that model i
// answers question j correctly is
//
//	P(correct) = σ(q·m/(‖q‖+1e-8) − ‖q‖)
//
// so the direction of q says what the question is about and its norm how hard
// it is. All matrices are row-major float32, laid out as PyTorch's nn.Linear
// stores them (out x in).
type JEIRT struct {
	InputDim int // D, the encoder width
	Hidden   int // adapter hidden width
	Dim      int // d, the embedding width

	W1 []float32 // Hidden x InputDim
	C1 []float32 // Hidden
	W2 []float32 // Dim x Hidden
	C2 []float32 // Dim
	M  []float32 // len(Models) x Dim: model embeddings m_i

	Models []string // model names, row order of M
	Items  []string // known item ids, row order of Q and R
	Q      []float32
	// Q is len(Items) x Dim: the question embeddings of the known items
	// (adapter output plus residual), used for those items instead of
	// recomputing them.

	// R is nil, or len(Items) x Dim: the free per-question residual r_j learned
	// for items seen in training (zero rows for the others). It is already
	// included in Q; a new item gets none.
	R []float32
}

// NumModels is the number of model rows.
func (m *JEIRT) NumModels() int { return len(m.Models) }

// NumItems is the number of known items.
func (m *JEIRT) NumItems() int { return len(m.Items) }

// ModelEmbedding returns m_i (a view, not a copy).
func (m *JEIRT) ModelEmbedding(i int) []float32 { return m.M[i*m.Dim : (i+1)*m.Dim] }

// ItemEmbedding returns q_j of known item j (a view, not a copy).
func (m *JEIRT) ItemEmbedding(j int) []float32 { return m.Q[j*m.Dim : (j+1)*m.Dim] }

// Check reports inconsistent sizes.
func (m *JEIRT) Check() error {
	want := []struct {
		name string
		got  int
		want int
	}{
		{"W1", len(m.W1), m.Hidden * m.InputDim}, {"c1", len(m.C1), m.Hidden},
		{"W2", len(m.W2), m.Dim * m.Hidden}, {"c2", len(m.C2), m.Dim},
		{"M", len(m.M), len(m.Models) * m.Dim}, {"Q", len(m.Q), len(m.Items) * m.Dim},
	}
	if m.R != nil {
		want = append(want, struct {
			name string
			got  int
			want int
		}{"R", len(m.R), len(m.Items) * m.Dim})
	}
	for _, w := range want {
		if w.got != w.want {
			return fmt.Errorf("jeirt model: %s has %d values, want %d (D=%d, hidden=%d, d=%d, %d models, %d items)",
				w.name, w.got, w.want, m.InputDim, m.Hidden, m.Dim, len(m.Models), len(m.Items))
		}
	}
	return nil
}

// QuestionEmbedding runs the adapter (no dropout, no residual) on one encoder
// vector x of length InputDim.
func (m *JEIRT) QuestionEmbedding(x []float32) []float32 {
	return m.QuestionEmbeddings(x, 1)
}

// QuestionEmbeddings runs the adapter on n encoder vectors stored row-major in
// x (n x InputDim) and returns n x Dim embeddings, using blocked matrix
// products on every core.
func (m *JEIRT) QuestionEmbeddings(x []float32, n int) []float32 {
	h := make([]float32, n*m.Hidden)
	q := make([]float32, n*m.Dim)
	m.AdapterForward(x, n, nil, h, h, q)
	return q
}

// AdapterForward is the JE-IRT question adapter (Yao et al. 2025,
// arXiv:2509.22888: q = MLP(x), here one hidden layer) on n encoder vectors
// x (n x InputDim, row-major), with inverted-dropout multipliers mask
// (n x Hidden; nil: none):
//
//	a = x·W1ᵀ + c1,  h = relu(a) ⊙ mask,  q = h·W2ᵀ + c2
//
// into a and h (n x Hidden each; a may be h when the pre-activation is not
// needed) and q (n x Dim). It is the one forward pass in Go: inference
// (QuestionEmbeddings) and the fused CPU training step both run it, and
// cuda/kernels/jeirt.cu is its GPU copy. The residual r_j, when a model has
// one, is added by the caller.
func (m *JEIRT) AdapterForward(x []float32, n int, mask, a, h, q []float32) {
	H, d := m.Hidden, m.Dim
	simd.Linear(a[:n*H], x[:n*m.InputDim], m.W1, m.C1, n, m.InputDim, H)
	for k, v := range a[:n*H] {
		if v < 0 {
			v = 0
		}
		if mask != nil {
			v *= mask[k]
		}
		h[k] = v
	}
	simd.Linear(q[:n*d], h[:n*H], m.W2, m.C2, n, H, d)
}

// QuestionEmbeddingsChecked is QuestionEmbeddings that checks each output
// vector (once per question and per layer, not per operation): finite weights
// can still overflow float32 in use (a c1 of 3e38 gives h near the top of the
// range and q = W2·h infinite, and then every P is NaN), and such a question
// is a *NonFiniteError naming the layer and the tensor to blame instead of a
// silently wrong answer.
func (m *JEIRT) QuestionEmbeddingsChecked(x []float32, n int) ([]float32, error) {
	q := m.QuestionEmbeddings(x, n)
	for r := 0; r < n; r++ {
		if finite32(q[r*m.Dim : (r+1)*m.Dim]) {
			continue
		}
		xr := x[r*m.InputDim : (r+1)*m.InputDim]
		e := &NonFiniteError{Row: r, Layer: "W2·relu(W1·x + c1) + c2"}
		h := m.QuestionHidden(xr)
		cand := []namedMax{{"W1", maxAbs32(m.W1)}, {"c1", maxAbs32(m.C1)}, {"the question's encoder vector", maxAbs32(xr)}}
		if finite32(h) {
			cand = append(cand, namedMax{"W2", maxAbs32(m.W2)}, namedMax{"c2", maxAbs32(m.C2)})
		} else {
			e.Layer = "relu(W1·x + c1)"
		}
		best := cand[0]
		for _, c := range cand[1:] {
			if !(c.max <= best.max) {
				best = c
			}
		}
		e.Tensor, e.Max = best.name, best.max
		return nil, e
	}
	return q, nil
}

// QuestionHidden is the adapter's hidden layer relu(W1·x + c1) for one
// encoder vector x.
func (m *JEIRT) QuestionHidden(x []float32) []float32 {
	h := make([]float32, m.Hidden)
	for k := range h {
		s := m.C1[k]
		for t, v := range m.W1[k*m.InputDim : (k+1)*m.InputDim] {
			s += v * x[t]
		}
		h[k] = max(s, 0)
	}
	return h
}

// NonFiniteError is an output of the model that is not finite although
// every weight is: the weights overflow float32 in use.
type NonFiniteError struct {
	Row    int     // the question (row of the input) it happened for
	Layer  string  // the layer whose output is not finite
	Tensor string  // the input of that layer with the largest magnitude: the one to blame
	Max    float64 // that magnitude
}

func (e *NonFiniteError) Error() string {
	return fmt.Sprintf("the question embedding is not finite: %s overflows float32 (tensor %s holds values up to %.3g); the weights are finite but unusable",
		e.Layer, e.Tensor, e.Max)
}

type namedMax struct {
	name string
	max  float64
}

func finite32(v []float32) bool {
	for _, x := range v {
		if x-x != 0 {
			return false
		}
	}
	return true
}

func maxAbs32(v []float32) float64 {
	m := 0.0
	for _, x := range v {
		m = math.Max(m, math.Abs(float64(x)))
	}
	return m
}

// Logit is the JE-IRT link (see Link) for model i and question embedding q.
func (m *JEIRT) Logit(i int, q []float32) float64 {
	return Logit(q, m.ModelEmbedding(i))
}

// Prob is the probability that model i answers the question with embedding q correctly.
func (m *JEIRT) Prob(i int, q []float32) float64 { return Sigmoid(m.Logit(i, q)) }

// Projection is q·m_i/‖q‖, the model's ability along the question's direction
// (0 for a zero q).
func (m *JEIRT) Projection(i int, q []float32) float64 {
	_, dot, nrm := Link(q, m.ModelEmbedding(i))
	if nrm == 0 {
		return 0
	}
	return dot / nrm
}

// LinkEps is ε of the JE-IRT link, which keeps q·m/(‖q‖+ε) finite at q = 0.
const LinkEps = 1e-8

// Link is the JE-IRT link (Yao et al. 2025, arXiv:2509.22888), the logit of
// the probability that the model with embedding m answers the question with
// embedding q correctly:
//
//	P(correct) = σ(z),  z = q·m/(‖q‖+ε) − ‖q‖,  ε = LinkEps
//
// (the direction of q says what the question asks, its norm how hard it
// is). It returns z with its parts q·m and ‖q‖, accumulated in float64 in
// index order. This is the link's one copy in Go: prediction, routing,
// onboarding and the fused training step all call it; the GPU's copy is
// cuda/kernels/jeirt.cu, which the CPU harness checks against this one.
func Link(q, m []float32) (z, dot, norm float64) {
	var ss float64
	for k, v := range q {
		dot += float64(v) * float64(m[k])
		ss += float64(v) * float64(v)
	}
	norm = math.Sqrt(ss)
	return dot/(norm+LinkEps) - norm, dot, norm
}

// Logit is Link's z alone.
func Logit(q, m []float32) float64 {
	z, _, _ := Link(q, m)
	return z
}

// Norm is ‖q‖.
func Norm(q []float32) float64 {
	var s float64
	for _, v := range q {
		s += float64(v) * float64(v)
	}
	return math.Sqrt(s)
}

// BCE is the binary cross-entropy −log P(y) of a label y (1 correct, 0
// wrong) under P(correct) = σ(z), the loss JE-IRT trains on, computed
// stably as max(z, 0) − y·z + log(1 + e^−|z|) (= softplus(z) − y·z).
func BCE(z, y float64) float64 {
	return math.Max(z, 0) - y*z + math.Log1p(math.Exp(-math.Abs(z)))
}

// Softplus is log(1 + eˣ), stable for large |x|: −log σ(−x), the negative
// log-likelihood of a right answer at logit −x.
func Softplus(x float64) float64 {
	if x > 0 {
		return x + math.Log1p(math.Exp(-x))
	}
	return math.Log1p(math.Exp(x))
}
