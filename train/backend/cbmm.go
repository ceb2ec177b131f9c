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
	Cells     []uint32 // per cell: model<<1 | y (y = 1 correct, 0 wrong)
}

// NewCBMMProblem lays out r for the hot loop: a counting sort of the cells by
// item (stable, so within an item cells keep r's order). When r's cells are
// sorted by (model, item), as the readers leave them, the sort is a
// transpose done in blocks of items, so that the write positions of a block
// stay in cache; otherwise it is one sequential read of r's cells with
// scattered writes. Both give the same layout.
func NewCBMMProblem(r *model.Responses) *CBMMProblem {
	J := r.NumItems()
	p := &CBMMProblem{N: r.NumModels(), J: J, ItemStart: make([]int32, J+1), Cells: make([]uint32, r.Len())}
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
					next[j]++
				}
				cursor[m] = c
			}
		}
		return p
	}
	for c, j := range r.Item {
		p.Cells[next[j]] = uint32(r.Model[c])<<1 | uint32(r.Label[c]&1)
		next[j]++
	}
	return p
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

// CBMM runs the hot loop of batched cBMM. The CPU backend is always
// registered as "cpu"; a GPU backend registers itself (as "cuda") from a file
// built only with its build tag.
type CBMMDevice interface {
	// Name is the device name the backend is registered under.
	Name() string
	// Load prepares a batch of problems of rank r and logistic scale σ and returns
	// its state; parameters start at zero until Set is called.
	Load(problems []*CBMMProblem, rank int, sigma float64, threads int) (CBMMBatch, error)
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
