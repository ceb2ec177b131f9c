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
// item (stable, so within an item cells keep r's order), in one sequential
// read of r's cells.
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
	for c, j := range r.Item {
		p.Cells[next[j]] = uint32(r.Model[c])<<1 | uint32(r.Label[c]&1)
		next[j]++
	}
	return p
}

// Len is the number of observed cells |Ω|.
func (p *CBMMProblem) Len() int { return len(p.Cells) }

// CBMM runs the hot loop of batched cBMM. The CPU backend is always
// registered as "cpu"; a GPU backend registers itself (as "cuda") from a file
// built only with its build tag.
type CBMM interface {
	// Name is the device name the backend is registered under.
	Name() string
	// Load prepares a batch of problems of rank r and logistic scale σ and returns
	// its state; parameters start at zero until Set is called.
	Load(problems []*CBMMProblem, rank int, sigma float64, threads int) (CBMMBatch, error)
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
