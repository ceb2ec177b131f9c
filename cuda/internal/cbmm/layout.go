package cbmm

import (
	"fmt"
	"math"

	"github.com/jeirt/jeirt/cuda/internal/gpu"
	"github.com/jeirt/jeirt/cuda/kernels"
	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/train/backend"
)

// checkBatchSize fails when a batch is too large for the kernels: cells and
// items are 32-bit indices, and the passes launch one block per item and per
// model (gridDim.x is at most 2³¹ − 1).
func checkBatchSize(cells, items, models int64) error {
	if cells > math.MaxUint32 || items > gpu.MaxGridX || models > gpu.MaxGridX {
		return fmt.Errorf("cuda: batch of %d cells, %d items and %d models is too large for the kernels (32-bit cell indices, at most %d items or models: one block each); fit it in several batches", cells, items, models, gpu.MaxGridX)
	}
	return nil
}

// layout is a batch of K cBMM problems concatenated for the kernels. The
// items of all problems form one global item list and the models one global
// model list; θ, A and b of problem k are the rows ModelBase[k]: and
// ItemBase[k]: of the concatenated θ (Nt x r), A (Jt x r) and b (Jt).
type layout struct {
	K, Rank int
	Nt, Jt  int

	ItemBase  []int64 // K+1: problem k's global items are ItemBase[k]:ItemBase[k+1]
	ModelBase []int64 // K+1: likewise its global models

	// Item-major (pass A): the cells of global item g are Cells[ItemStart[g]:ItemStart[g+1]],
	// in the problem's own order, each global model<<1 | y.
	Cells     []uint32
	ItemStart []int64 // Jt+1
	ItemProb  []int32 // Jt: the problem of each global item

	// Model-major (pass B): the cells of global model i are entries
	// ModelStart[i]:ModelStart[i+1], each the index of the cell in Cells and its
	// global item, in increasing item order.
	ModelStart []int64 // Nt+1
	ModelCell  []uint32
	ModelItem  []uint32
	ModelProb  []int32 // Nt
}

// newLayout concatenates problems; it fails when the batch is too large
// for the kernels' 32-bit cell and item indices.
func newLayout(problems []*backend.CBMMProblem, rank int) (*layout, error) {
	if rank < 1 || rank > kernels.MaxRank {
		return nil, model.FieldErrorf("Device", "cuda: rank %d: the GPU kernels handle ranks 1 to %d (use {Device} cpu)", rank, kernels.MaxRank)
	}
	K := len(problems)
	l := &layout{K: K, Rank: rank, ItemBase: make([]int64, K+1), ModelBase: make([]int64, K+1)}
	var cells int64
	for k, p := range problems {
		if len(p.ItemStart) != p.J+1 || int(p.ItemStart[p.J]) != len(p.Cells) {
			return nil, fmt.Errorf("cuda: problem %d: item offsets do not match its %d cells", k, len(p.Cells))
		}
		l.ItemBase[k+1] = l.ItemBase[k] + int64(p.J)
		l.ModelBase[k+1] = l.ModelBase[k] + int64(p.N)
		cells += int64(len(p.Cells))
	}
	l.Nt, l.Jt = int(l.ModelBase[K]), int(l.ItemBase[K])
	if err := checkBatchSize(cells, int64(l.Jt), int64(l.Nt)); err != nil {
		return nil, err
	}
	l.Cells = make([]uint32, 0, cells)
	l.ItemStart = make([]int64, 0, l.Jt+1)
	l.ItemProb = make([]int32, 0, l.Jt)
	l.ModelProb = make([]int32, l.Nt)
	counts := make([]int64, l.Nt+1)
	for k, p := range problems {
		mb := uint32(l.ModelBase[k])
		for j := 0; j < p.J; j++ {
			l.ItemStart = append(l.ItemStart, int64(len(l.Cells)))
			l.ItemProb = append(l.ItemProb, int32(k))
			for _, c := range p.Cells[p.ItemStart[j]:p.ItemStart[j+1]] {
				i := c >> 1
				if int(i) >= p.N {
					return nil, fmt.Errorf("cuda: problem %d: item %d has a cell of model %d, but there are %d models", k, j, i, p.N)
				}
				l.Cells = append(l.Cells, (mb+i)<<1|c&1)
				counts[mb+i+1]++
			}
		}
		for i := l.ModelBase[k]; i < l.ModelBase[k+1]; i++ {
			l.ModelProb[i] = int32(k)
		}
	}
	l.ItemStart = append(l.ItemStart, int64(len(l.Cells)))
	// Counting sort of the cells by global model; scanning items in order
	// keeps each model's cells in increasing item order.
	for i := 1; i <= l.Nt; i++ {
		counts[i] += counts[i-1]
	}
	l.ModelStart = append([]int64(nil), counts...)
	l.ModelCell = make([]uint32, cells)
	l.ModelItem = make([]uint32, cells)
	for g := 0; g < l.Jt; g++ {
		for c := l.ItemStart[g]; c < l.ItemStart[g+1]; c++ {
			i := l.Cells[c] >> 1
			e := counts[i]
			counts[i]++
			l.ModelCell[e] = uint32(c)
			l.ModelItem[e] = uint32(g)
		}
	}
	return l, nil
}

// ctlWords is the number of doubles of a problem's control state on the
// device (backend.CBMMControl: the last kept loss, β, the β of the last
// extrapolation, the kept steps, extrapolated); CTL in kernels/cbmm.cu.
const ctlWords = 5

// itemEntries is the length of an item's packed normal equations at rank r:
// the lower triangle of G ((r+1) x (r+1), for u = (θ_i, 1)), then h (r+1).
func itemEntries(r int) int { m := r + 1; return m*(m+1)/2 + m }

// modelEntries is the length of a model's packed normal equations: the lower
// triangle of Σ a_j a_jᵀ (r x r), then Σ a_j (ỹ_ij − b_j) (r).
func modelEntries(r int) int { return r*(r+1)/2 + r }

// blockThreads picks the threads per block for a segmented pass from the mean
// segment length: a multiple of 32 (the kernels' reductions need whole warps)
// that keeps most threads busy on short segments.
func blockThreads(cells int64, segments int) int {
	if segments == 0 {
		return 32
	}
	mean := cells / int64(segments)
	switch {
	case mean <= 48:
		return 32
	case mean <= 96:
		return 64
	case mean <= 192:
		return 128
	default:
		return 256
	}
}

// deviceBytes is the device memory a loaded batch takes.
func (l *layout) deviceBytes() int64 {
	return batchBytes(int64(len(l.Cells)), int64(l.Nt), int64(l.Jt), int64(l.K), int64(l.Rank))
}

// batchBytes is the device memory of a batch of k problems with cells
// cells, n models and j items in all, at rank r.
func batchBytes(cells, n, j, k, r int64) int64 {
	b := cells * (4 + 8 + 4 + 4) // Cells, yTilde, ModelCell, ModelItem
	b += (j+1)*8 + j*4 + (n+1)*8 + n*4 + (k+1)*8 + k
	b += (3*(n*r+j*r+j) + j) * 8 // θ, A, b (current, kept MM point, step start), item losses
	b += k*(8+1) + k*ctlWords*8  // losses and outcomes, control states
	return b
}

// unpackLower fills the symmetric n x n matrix G from its packed lower
// triangle p (row by row) and returns the rest of p.
func unpackLower(G, p []float64, n int) []float64 {
	e := 0
	for d1 := 0; d1 < n; d1++ {
		for d2 := 0; d2 <= d1; d2++ {
			G[d1*n+d2] = p[e]
			G[d2*n+d1] = p[e]
			e++
		}
	}
	return p[e:]
}
