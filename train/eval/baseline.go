package eval

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/machine"
)

// The baselines predict P(correct) for the cells of a Responses from the
// training cells alone. Rates are shrunk towards a prior with the weight of
// one observation, (correct + prior)/(n + 1), so a cell is never predicted
// with certainty and log loss stays finite. With cells of several trials or
// graded scores, correct and n are the successes and the trials (a graded
// score counts its fraction of one trial); KNN counts a neighbour's rounded
// outcome (model.RoundedLabel).

// MajorityPredict predicts the training set's overall rate for every cell: its
// accuracy is that of always answering the majority label, its AUC 0.5.
func MajorityPredict(trainR, cells *model.Responses) []float64 {
	p := make([]float64, cells.Len())
	mean := trainR.MeanCorrect()
	for c := range p {
		p[c] = mean
	}
	return p
}

// ModelMeanPredict predicts each model's training accuracy.
func ModelMeanPredict(trainR, cells *model.Responses) []float64 {
	rate := shrunkRates(trainR.ByModel(), trainR, trainR.MeanCorrect())
	p := make([]float64, cells.Len())
	for c := range p {
		p[c] = rate[cells.Model[c]]
	}
	return p
}

// ItemMeanPredict predicts each item's training accuracy; an item without
// training cells (a by-item split) gets its model's training accuracy.
func ItemMeanPredict(trainR, cells *model.Responses) []float64 {
	byItem := trainR.ByItem()
	rate := shrunkRates(byItem, trainR, trainR.MeanCorrect())
	fallback := ModelMeanPredict(trainR, cells)
	p := make([]float64, cells.Len())
	for c := range p {
		if j := cells.Item[c]; len(byItem.Row(int(j))) > 0 {
			p[c] = rate[j]
		} else {
			p[c] = fallback[c]
		}
	}
	return p
}

func shrunkRates(ix *model.Index, r *model.Responses, prior float64) []float64 {
	out := make([]float64, len(ix.Start)-1)
	for k := range out {
		var s, n float64
		row := ix.Row(k)
		if r.Weighted() {
			for _, c := range row {
				s += r.SuccessesAt(int(c))
				n += float64(r.TrialsAt(int(c)))
			}
		} else {
			for _, c := range row {
				s += float64(r.Label[c])
			}
			n = float64(len(row))
		}
		out[k] = (s + prior) / (n + 1)
	}
	return out
}

// IRTPredict predicts with a fitted 2PL; cells of items without training cells
// get their model's training accuracy (the fit knows nothing of those items).
func IRTPredict(fit *model.IRT, trainR, cells *model.Responses) []float64 {
	byItem := trainR.ByItem()
	fallback := ModelMeanPredict(trainR, cells)
	p := make([]float64, cells.Len())
	for c := range p {
		i, j := int(cells.Model[c]), int(cells.Item[c])
		if len(byItem.Row(j)) > 0 {
			p[c] = fit.Prob(i, j)
		} else {
			p[c] = fallback[c]
		}
	}
	return p
}

// KNNCandidates are the neighbourhood sizes KNN tries on validation.
var KNNCandidates = knnCandidates[:]

// knnCandidates are KNNCandidates as an array: knnSums counts per entry, in
// bytes (the largest k must stay below 256).
var knnCandidates = [...]int{1, 3, 5, 10, 20, 50, 100}

// KNN predicts model i on question j from model i's training answers on the k
// questions nearest to j by cosine similarity of their encoder vectors, among
// the questions i answered in training, as EmbedLLM's KNN baseline:
// P = (correct among the k + p_i)/(k + 1) with p_i the model's training
// accuracy (fewer than k when i answered fewer). k is chosen among
// KNNCandidates by accuracy on the validation cells (ties: lower log loss).
// Equal similarities go to the lower item index.
//
// The similarities are computed only where a prediction needs them, in the
// cheaper of two ways: per model, its asked questions against the questions
// it answered (Σ_i asked_i × answered_i: the observed cells times the
// answers per model, not the item pairs; sparse data), each prediction then
// keeping the best 100 of its model's answers in a heap; or each asked
// question against every question with training cells (asked × answered
// items: dense data), each prediction then walking the 400 nearest in order
// (a model that answered fewer than 100 of them scans its answers). Both give
// exactly the neighbours of the definition. Neither sorts a whole row.
type KNN struct {
	Features []float32 // J x Dim encoder vectors of every item
	Dim      int
	// Threads is the number of goroutines; 0 means runtime.GOMAXPROCS(0).
	Threads int
	// MaxMemory is the memory, in bytes, the dense way's tables may take
	// (machine.CheckMemory); 0 means the machine's available memory.
	MaxMemory int64
}

// Fit returns predictions for the test cells and the k chosen on val. It
// stops with ctx's error when ctx is cancelled.
func (kn KNN) Fit(ctx context.Context, trainR, valR, testR *model.Responses) (pred []float64, k int, err error) {
	sums, _, err := kn.neighbourSums(ctx, trainR, []*model.Responses{valR, testR})
	if err != nil {
		return nil, 0, err
	}
	modelRate := shrunkRates(trainR.ByModel(), trainR, trainR.MeanCorrect())
	predictAll := func(r *model.Responses, ns []knnSums) [][]float64 {
		out := make([][]float64, len(KNNCandidates))
		for ki := range out {
			out[ki] = make([]float64, r.Len())
			for c := range out[ki] {
				rate := modelRate[r.Model[c]]
				out[ki][c] = (float64(ns[c].right[ki]) + rate) / (float64(ns[c].found[ki]) + 1)
			}
		}
		return out
	}
	best := -1
	var bestM Metrics
	for ki, p := range predictAll(valR, sums[0]) {
		m := ScoreResponses(p, valR)
		if best < 0 || m.Accuracy > bestM.Accuracy || (m.Accuracy == bestM.Accuracy && m.LogLoss < bestM.LogLoss) {
			best, bestM = ki, m
		}
	}
	if valR.Len() == 0 {
		best = 3 // k = 10 without validation cells
	}
	return predictAll(testR, sums[1])[best], KNNCandidates[best], nil
}

// knnSums are, for one predicted cell and each k of KNNCandidates, how many
// of its model's k nearest answered questions it got right and how many
// there were (fewer than k when the model answered fewer).
type knnSums struct {
	right, found [len(knnCandidates)]uint8
}

// knnNeighbour is a candidate question for one prediction.
type knnNeighbour struct {
	sim   float32
	item  int32
	label uint8
}

// nearer orders neighbours: higher similarity first, then the lower item.
func nearer(a, b knnNeighbour) bool { return a.sim > b.sim || a.sim == b.sim && a.item < b.item }

// knnTop keeps the kmax nearest neighbours seen, as a heap whose root is the
// farthest kept.
type knnTop struct{ h []knnNeighbour }

func (t *knnTop) reset() { t.h = t.h[:0] }

func (t *knnTop) add(n knnNeighbour, kmax int) {
	h := t.h
	if len(h) < kmax {
		h = append(h, n)
		for i := len(h) - 1; i > 0; { // sift up: parents are farther
			p := (i - 1) / 2
			if !nearer(h[p], h[i]) {
				break
			}
			h[p], h[i] = h[i], h[p]
			i = p
		}
		t.h = h
		return
	}
	if !nearer(n, h[0]) {
		return
	}
	h[0] = n
	for i := 0; ; { // sift down
		l, r, far := 2*i+1, 2*i+2, i
		if l < len(h) && nearer(h[far], h[l]) {
			far = l
		}
		if r < len(h) && nearer(h[far], h[r]) {
			far = r
		}
		if far == i {
			break
		}
		h[i], h[far] = h[far], h[i]
		i = far
	}
}

// sort puts the kept neighbours nearest first.
func (t *knnTop) sort() {
	slices.SortFunc(t.h, func(a, b knnNeighbour) int {
		if nearer(a, b) {
			return -1
		}
		return 1 // no two neighbours are equal: their items differ
	})
}

// counts counts the neighbours, nearest first, per k of KNNCandidates.
func (t *knnTop) counts() knnSums {
	var s knnSums
	right, ki := uint8(0), 0
	for n, nb := range t.h {
		right += nb.label
		for ki < len(KNNCandidates) && n+1 == KNNCandidates[ki] {
			s.right[ki], s.found[ki] = right, uint8(n+1)
			ki++
		}
	}
	for ; ki < len(KNNCandidates); ki++ {
		s.right[ki], s.found[ki] = right, uint8(len(t.h))
	}
	return s
}

// neighbourSums returns, for every cell of each query set (sharing trainR's
// models and items), its knnSums, and which way it took ("per model" or
// "per item").
func (kn KNN) neighbourSums(ctx context.Context, trainR *model.Responses, queries []*model.Responses) ([][]knnSums, string, error) {
	J, D := trainR.NumItems(), kn.Dim
	kmax := KNNCandidates[len(KNNCandidates)-1]
	threads := kn.Threads
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	unit := make([]float32, J*D)
	copy(unit, kn.Features)
	for j := 0; j < J; j++ {
		v := unit[j*D : (j+1)*D]
		if n := float32(math.Sqrt(sumSq32(v))); n > 0 {
			for k := range v {
				v[k] /= n
			}
		}
	}
	byModel := trainR.ByModel()
	out := make([][]knnSums, len(queries))
	// Every predicted cell, grouped by model and by item.
	type qcell struct{ set, cell int32 }
	byM := make([][]qcell, trainR.NumModels())
	byI := make([][]qcell, J)
	for s, q := range queries {
		out[s] = make([]knnSums, q.Len())
		for c := range q.Label {
			qc := qcell{int32(s), int32(c)}
			byM[q.Model[c]] = append(byM[q.Model[c]], qc)
			byI[q.Item[c]] = append(byI[q.Item[c]], qc)
		}
	}
	item := func(qc qcell) int32 { return queries[qc.set].Item[qc.cell] }
	// Work of the two ways, in similarities computed.
	var perModel int64
	askedItems, answeredItems := 0, 0
	for i, cells := range byM {
		seen := map[int32]bool{}
		for _, qc := range cells {
			seen[item(qc)] = true
		}
		perModel += int64(len(seen)) * int64(len(byModel.Row(i)))
	}
	colOf := make([]int32, J) // item → column among the items with training cells, or −1
	for j := range colOf {
		colOf[j] = -1
	}
	for _, j := range trainR.Item {
		colOf[j] = 0
	}
	var cand []int32
	for j := range colOf {
		if colOf[j] == 0 {
			colOf[j] = int32(len(cand))
			cand = append(cand, int32(j))
		}
		if len(byI[j]) > 0 {
			askedItems++
		}
	}
	answeredItems = len(cand)
	gather := func(items []int32, buf []float32) []float32 {
		buf = buf[:0]
		for _, j := range items {
			buf = append(buf, unit[int(j)*D:(int(j)+1)*D]...)
		}
		return buf
	}
	const block = 256
	if perModel <= int64(askedItems)*int64(answeredItems) {
		// Sparse: per model, its asked questions against its answered ones.
		return out, "per model", parallel(ctx, trainR.NumModels(), threads, func(i int) {
			cells, row := byM[i], byModel.Row(i)
			if len(cells) == 0 {
				return
			}
			items := make([]int32, len(row))
			for k, c := range row {
				items[k] = trainR.Item[c]
			}
			xt := gather(items, nil)
			rowOf := map[int32]int{}
			var asked []int32
			for _, qc := range cells {
				if _, ok := rowOf[item(qc)]; !ok {
					rowOf[item(qc)] = len(asked)
					asked = append(asked, item(qc))
				}
			}
			var top knnTop
			var xq, S []float32
			for s := 0; s < len(asked); s += block {
				if ctx.Err() != nil {
					return
				}
				rows := asked[s:min(s+block, len(asked))]
				xq = gather(rows, xq)
				S = slices.Grow(S[:0], len(rows)*len(items))[:len(rows)*len(items)]
				if len(items) > 0 {
					blas32.Gemm(blas.NoTrans, blas.Trans, 1, mat32(len(rows), D, xq), mat32(len(items), D, xt), 0, mat32(len(rows), len(items), S))
				}
				for _, qc := range cells {
					u := rowOf[item(qc)] - s
					if u < 0 || u >= len(rows) {
						continue
					}
					sim := S[u*len(items) : (u+1)*len(items)]
					top.reset()
					for k, c := range row {
						top.add(knnNeighbour{sim[k], items[k], trainR.Label[c]}, kmax)
					}
					top.sort()
					out[qc.set][qc.cell] = top.counts()
				}
			}
		})
	}
	// Dense: each asked question against every question with training cells.
	if err := kn.checkDenseMemory(trainR.NumModels(), J, len(cand), block); err != nil {
		return nil, "", err
	}
	const walk = 4 * 100
	label := denseTrainLabels(trainR)
	candX := gather(cand, nil)
	var asked []int32
	for j := range byI {
		if len(byI[j]) > 0 {
			asked = append(asked, int32(j))
		}
	}
	S := make([]float32, block*len(cand))
	var xq []float32
	for s := 0; s < len(asked); s += block {
		if err := ctx.Err(); err != nil {
			return nil, "", err
		}
		rows := asked[s:min(s+block, len(asked))]
		xq = gather(rows, xq)
		blas32.Gemm(blas.NoTrans, blas.Trans, 1, mat32(len(rows), D, xq), mat32(len(cand), D, candX), 0, mat32(len(rows), len(cand), S[:len(rows)*len(cand)]))
		err := parallel(ctx, len(rows), threads, func(u int) {
			sim := S[u*len(cand) : (u+1)*len(cand)]
			// The nearest walk questions in order; a model that answered
			// kmax of them has its neighbours there (dense rows: nearly
			// always), any other scans what it answered.
			var near, top knnTop
			for k, j := range cand {
				near.add(knnNeighbour{sim[k], j, 0}, walk)
			}
			near.sort()
			for _, qc := range byI[rows[u]] {
				i := int(queries[qc.set].Model[qc.cell])
				top.reset()
				for _, nb := range near.h {
					if l := label[i*J+int(nb.item)]; l >= 0 {
						nb.label = uint8(l)
						top.h = append(top.h, nb)
						if len(top.h) == kmax {
							break
						}
					}
				}
				if len(top.h) < kmax && len(near.h) < len(cand) {
					top.reset()
					for _, c := range byModel.Row(i) {
						j := trainR.Item[c]
						top.add(knnNeighbour{sim[colOf[j]], j, trainR.Label[c]}, kmax)
					}
					top.sort()
				}
				out[qc.set][qc.cell] = top.counts()
			}
		})
		if err != nil {
			return nil, "", err
		}
	}
	return out, "per item", nil
}

// checkDenseMemory refuses, with the estimate, the dense way's tables when
// they would take more than MaxMemory: the N x J table of training labels,
// a block of similarities of block asked questions against the cand
// questions with training cells, and their vectors.
func (kn KNN) checkDenseMemory(N, J, cand, block int) error {
	need := int64(N)*int64(J) + 4*int64(block)*int64(cand) + 4*int64(cand+block)*int64(kn.Dim)
	what := fmt.Sprintf("the kNN baseline (a table of the training labels of %d models x %d items, and similarities of %d questions at a time against %d)", N, J, block, cand)
	return machine.CheckMemory(what, need, kn.MaxMemory)
}

// denseTrainLabels is an N x J table of training labels, −1 where unobserved.
func denseTrainLabels(r *model.Responses) []int8 {
	out := make([]int8, r.NumModels()*r.NumItems())
	for k := range out {
		out[k] = -1
	}
	for c := range r.Label {
		out[int(r.Model[c])*r.NumItems()+int(r.Item[c])] = int8(r.Label[c])
	}
	return out
}

// parallel runs f(0..n-1) on up to threads goroutines and returns ctx's
// error if it was cancelled (f checks ctx itself where its work is long).
func parallel(ctx context.Context, n, threads int, f func(int)) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < min(threads, n); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				k := int(next.Add(1) - 1)
				if k >= n {
					return
				}
				f(k)
			}
		}()
	}
	wg.Wait()
	return ctx.Err()
}

func mat32(rows, cols int, data []float32) blas32.General {
	return blas32.General{Rows: rows, Cols: cols, Stride: cols, Data: data}
}

func sumSq32(x []float32) float64 {
	var s float64
	for _, v := range x {
		s += float64(v) * float64(v)
	}
	return s
}
