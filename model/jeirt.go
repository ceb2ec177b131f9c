package model

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
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
	for r := 0; r < n; r++ {
		copy(h[r*m.Hidden:(r+1)*m.Hidden], m.C1)
	}
	// h = relu(x·W1ᵀ + c1)
	blas32.Gemm(blas.NoTrans, blas.Trans, 1,
		blas32.General{Rows: n, Cols: m.InputDim, Stride: m.InputDim, Data: x},
		blas32.General{Rows: m.Hidden, Cols: m.InputDim, Stride: m.InputDim, Data: m.W1},
		1, blas32.General{Rows: n, Cols: m.Hidden, Stride: m.Hidden, Data: h})
	for k, v := range h {
		if v < 0 {
			h[k] = 0
		}
	}
	q := make([]float32, n*m.Dim)
	for r := 0; r < n; r++ {
		copy(q[r*m.Dim:(r+1)*m.Dim], m.C2)
	}
	// q = h·W2ᵀ + c2
	blas32.Gemm(blas.NoTrans, blas.Trans, 1,
		blas32.General{Rows: n, Cols: m.Hidden, Stride: m.Hidden, Data: h},
		blas32.General{Rows: m.Dim, Cols: m.Hidden, Stride: m.Hidden, Data: m.W2},
		1, blas32.General{Rows: n, Cols: m.Dim, Stride: m.Dim, Data: q})
	return q
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

// Logit is q·m_i/(‖q‖+1e-8) − ‖q‖ for model i and question embedding q.
func (m *JEIRT) Logit(i int, q []float32) float64 {
	return Logit(q, m.ModelEmbedding(i))
}

// Prob is the probability that model i answers the question with embedding q correctly.
func (m *JEIRT) Prob(i int, q []float32) float64 { return Sigmoid(m.Logit(i, q)) }

// Projection is q·m_i/‖q‖, the model's ability along the question's direction
// (0 for a zero q).
func (m *JEIRT) Projection(i int, q []float32) float64 {
	dot, nrm := dotNorm(q, m.ModelEmbedding(i))
	if nrm == 0 {
		return 0
	}
	return dot / nrm
}

// Logit is the JE-IRT link q·m/(‖q‖+1e-8) − ‖q‖, accumulated in float64.
func Logit(q, m []float32) float64 {
	dot, nrm := dotNorm(q, m)
	return dot/(nrm+1e-8) - nrm
}

// Norm is ‖q‖.
func Norm(q []float32) float64 {
	var s float64
	for _, v := range q {
		s += float64(v) * float64(v)
	}
	return math.Sqrt(s)
}

func dotNorm(q, m []float32) (dot, nrm float64) {
	var ss float64
	for k, v := range q {
		dot += float64(v) * float64(m[k])
		ss += float64(v) * float64(v)
	}
	return dot, math.Sqrt(ss)
}
