package backend

import (
	"context"

	"github.com/jeirt/jeirt/model"
)

// CBMMProblem is one response matrix laid out for the cBMM hot loop: the
// observed cells Ω grouped by item (compressed columns), each cell packing the
// model index and the label as Model<<1 | label. A backend reads it and never
// changes it.
type CBMMProblem struct {
	N, J      int      // models, items
	ItemStart []int32  // J+1: the cells of item j are Cells[ItemStart[j]:ItemStart[j+1]]
	Cells     []uint32 // per cell: model<<1 | y (y = 1 correct, 0 wrong; the rounded outcome of a weighted cell)
	// Weight and Score, in the order of Cells, are nil for binary data. A
	// weighted problem (cells of several trials, graded scores) has per cell
	// its trials n (the weight of its binomial log-likelihood) and its
	// observed fraction ȳ = k/n in [0, 1]; see Weighted.
	Weight []float32 // trials n (whole numbers, exact in float32 up to 2^24)
	Score  []float64 // ȳ = k/n
}

// Weighted reports whether the cells carry trials and scores (see
// CBMMProblem): the loss is then Σ_Ω n_ij·[softplus(x_ij/σ) − ȳ_ij·x_ij/σ],
// the binomial negative log-likelihood up to a constant (for a graded score,
// the quasi-likelihood of the fractional logit model), whose quadratic
// majorizer has curvature n_ij/(4σ²) and minimiser Ỹ = X + 4σ(ȳ − sigmoid(X/σ)):
// a weighted least-squares problem in the same blocks.
func (p *CBMMProblem) Weighted() bool { return p.Weight != nil }

// NewCBMMProblem lays out r for the hot loop: a counting sort of the cells by
// item (stable, so within an item cells keep r's order). When r's cells are
// sorted by (model, item), as the readers leave them, the sort is a
// transpose done in blocks of items, so that the write positions of a block
// stay in cache; otherwise it is one sequential read of r's cells with
// scattered writes. Both give the same layout.
func NewCBMMProblem(r *model.Responses) *CBMMProblem {
	J := r.NumItems()
	p := &CBMMProblem{N: r.NumModels(), J: J, ItemStart: make([]int32, J+1), Cells: make([]uint32, r.Len())}
	weighted := r.Weighted()
	if weighted {
		p.Weight, p.Score = make([]float32, r.Len()), make([]float64, r.Len())
	}
	put := func(at int32, c int) {
		if weighted {
			p.Weight[at], p.Score[at] = CellWeight(r, c)
		}
	}
	for _, j := range r.Item {
		p.ItemStart[j+1]++
	}
	for j := 0; j < J; j++ {
		p.ItemStart[j+1] += p.ItemStart[j]
	}
	next := make([]int32, J)
	copy(next, p.ItemStart[:J])
	if rows := modelRows(r); rows != nil {
		const block = 2048 // items per block: their write positions fit in L2
		cursor := make([]int32, len(rows)-1)
		copy(cursor, rows)
		for j0 := 0; j0 < J; j0 += block {
			j1 := int32(min(j0+block, J))
			for m := range cursor {
				c, end := cursor[m], rows[m+1]
				cell := uint32(m) << 1
				for ; c < end && r.Item[c] < j1; c++ {
					j := r.Item[c]
					p.Cells[next[j]] = cell | uint32(r.Label[c]&1)
					put(next[j], int(c))
					next[j]++
				}
				cursor[m] = c
			}
		}
		return p
	}
	for c, j := range r.Item {
		p.Cells[next[j]] = uint32(r.Model[c])<<1 | uint32(r.Label[c]&1)
		put(next[j], c)
		next[j]++
	}
	return p
}

// CellWeight is cell c of r as a weighted problem holds it: its trials n
// and its fraction k/n.
func CellWeight(r *model.Responses, c int) (n float32, score float64) {
	t := r.TrialsAt(c)
	return float32(t), r.SuccessesAt(c) / float64(t)
}

// modelRows returns where each model's cells start (N+1 entries) when r's
// cells are sorted by (model, item), else nil.
func modelRows(r *model.Responses) []int32 {
	rows := make([]int32, r.NumModels()+1)
	for c, m := range r.Model {
		if c > 0 && (m < r.Model[c-1] || m == r.Model[c-1] && r.Item[c] <= r.Item[c-1]) {
			return nil
		}
		rows[m+1]++
	}
	for m := 0; m < r.NumModels(); m++ {
		rows[m+1] += rows[m]
	}
	return rows
}

// Len is the number of observed cells |Ω|.
func (p *CBMMProblem) Len() int { return len(p.Cells) }

// CBMMDevice runs the hot loop of batched cBMM. The CPU backend is always
// registered as "cpu"; a GPU backend registers itself (as "cuda") from a file
// built only with its build tag.
type CBMMDevice interface {
	// Name is the device name the backend is registered under.
	Name() string
	// Load prepares a batch of problems of rank r and logistic scale σ and returns
	// its state; parameters start at zero until Set is called.
	Load(problems []*CBMMProblem, rank int, sigma float64, threads int) (CBMMBatch, error)
}

// CBMMFamily is implemented by a CBMM backend that fits more than binary
// 2PL: weighted problems (CBMMProblem.Weighted), the 1PL and the 3PL.
// LoadFamily is Load for the member of the family f names. A backend
// without it is given binary 2PL problems only.
type CBMMFamily interface {
	LoadFamily(problems []*CBMMProblem, rank int, sigma float64, threads int, f CBMMModel) (CBMMBatch, error)
}

// CBMMModel says which member of the logistic family a batch fits, beyond
// the binary 2PL of Load.
type CBMMModel struct {
	// Signed lifts a ≥ 0 (CBMMSigned).
	Signed bool
	// FixedA (rank 1) keeps every a_j at the value Set gives it: the 1PL,
	// whose items share one discrimination (the start sets them equal).
	// Only the intercepts b_j move in the item block.
	FixedA bool
	// Guess is the 3PL: P = c_j + (1 − c_j)·sigmoid(x/σ), with c_j per item
	// (CBMMGuessing sets and reads them). FitGuess fits c_j by an EM step on
	// the latent "guessed" indicator, in [0, MaxGuess]; otherwise c_j stays
	// as set.
	Guess    bool
	FitGuess bool
	MaxGuess float64
	// GuessPrior (α, β ≥ 1) is a Beta(α, β) prior on each fitted c_j: the
	// loss gains −Σ_j [(α − 1)·log c_j + (β − 1)·log(1 − c_j)] and the EM
	// step becomes c_j = (G_j + α − 1)/(G_j + F_j + α + β − 2), still the
	// exact minimiser. {1, 1} (or zero) is no prior.
	GuessPrior [2]float64
	// Prior makes the fit maximum a posteriori (model.Prior): the loss is
	// the negative log posterior and every block a ridge solve. The zero
	// Prior is joint maximum likelihood.
	Prior model.Prior
}

// CBMMGuessing is implemented by a batch of 3PL problems: the lower
// asymptotes c_j of problem k (J values), out and in, as Get and Set do for
// θ, A and b.
type CBMMGuessing interface {
	GetC(k int, c []float64)
	SetC(k int, c []float64)
}

// CBMMSigned is implemented by a CBMM backend that can also fit loadings of
// either sign: LoadSigned is Load with the item block's a_j unconstrained
// (ordinary least squares on the normal equations instead of NNLS), so the
// step is still the exact minimiser of the surrogate over the block and ℓ
// still never increases.
type CBMMSigned interface {
	LoadSigned(problems []*CBMMProblem, rank int, sigma float64, threads int) (CBMMBatch, error)
}

// CBMMBatch is a loaded batch of cBMM problems, each with its own parameters
// θ (N x r), A (J x r) and b (J), row-major as in model.IRT.
type CBMMBatch interface {
	// Step performs one MM iteration on every problem k with active[k]: it writes
	// the loss ℓ(X) at the current parameters to loss[k], builds the surrogate
	// Ỹ = X + 4σ·Y⊙sigmoid(−Y⊙X/σ) on Ω, and minimises ‖θAᵀ + 1bᵀ − Ỹ‖²_Ω
	// exactly over the item block (a_j ≥ 0, b_j) and then over each θ_i.
	Step(ctx context.Context, active []bool, loss []float64) error
	// Loss writes ℓ(X) at the current parameters of every active problem.
	Loss(ctx context.Context, active []bool, loss []float64) error
	// Get copies problem k's parameters out; Set copies them in.
	Get(k int, theta, a, b []float64)
	Set(k int, theta, a, b []float64)
	// Close releases the batch's buffers.
	Close() error
}
