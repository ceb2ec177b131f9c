package eval

import (
	"context"
	"math"
	"sort"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"

	"github.com/jeirt/jeirt/model"
)

// The baselines predict P(correct) for the cells of a Responses from the
// training cells alone. Rates are shrunk towards a prior with the weight of
// one observation, (correct + prior)/(n + 1), so a cell is never predicted
// with certainty and log loss stays finite.

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
	rate := shrunkRates(trainR.ByModel(), trainR.Label, trainR.MeanCorrect())
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
	rate := shrunkRates(byItem, trainR.Label, trainR.MeanCorrect())
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

func shrunkRates(ix *model.Index, label []uint8, prior float64) []float64 {
	out := make([]float64, len(ix.Start)-1)
	for r := range out {
		var s float64
		row := ix.Row(r)
		for _, c := range row {
			s += float64(label[c])
		}
		out[r] = (s + prior) / (float64(len(row)) + 1)
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
var KNNCandidates = []int{1, 3, 5, 10, 20, 50, 100}

// KNN predicts model i on question j from model i's training answers on the k
// questions nearest to j by cosine similarity of their encoder vectors, as
// EmbedLLM's KNN baseline: P = (correct among the k + p_i)/(k + 1) with p_i the
// model's training accuracy. k is chosen among KNNCandidates by accuracy on the
// validation cells (ties: lower log loss).
type KNN struct {
	Features []float32 // J x Dim encoder vectors of every item
	Dim      int
}

// Fit returns predictions for the test cells and the k chosen on val.
func (kn KNN) Fit(ctx context.Context, trainR, valR, testR *model.Responses) (pred []float64, k int, err error) {
	kmax := KNNCandidates[len(KNNCandidates)-1]
	nb, err := kn.neighbours(ctx, trainR, []*model.Responses{valR, testR}, 4*kmax)
	if err != nil {
		return nil, 0, err
	}
	label := denseTrainLabels(trainR)
	modelRate := shrunkRates(trainR.ByModel(), trainR.Label, trainR.MeanCorrect())
	J := trainR.NumItems()
	// sums[c][ki] = (correct among the first KNNCandidates[ki] neighbours, how many found).
	predictAll := func(r *model.Responses) [][]float64 {
		out := make([][]float64, len(KNNCandidates))
		for ki := range out {
			out[ki] = make([]float64, r.Len())
		}
		for c := range r.Label {
			i, j := int(r.Model[c]), r.Item[c]
			var s, n float64
			ki := 0
			for _, j2 := range nb[j] {
				l := label[i*J+int(j2)]
				if l < 0 {
					continue
				}
				s += float64(l)
				n++
				for ki < len(KNNCandidates) && n == float64(KNNCandidates[ki]) {
					out[ki][c] = (s + modelRate[i]) / (n + 1)
					ki++
				}
				if ki == len(KNNCandidates) {
					break
				}
			}
			for ; ki < len(KNNCandidates); ki++ { // fewer neighbours answered than k
				out[ki][c] = (s + modelRate[i]) / (n + 1)
			}
		}
		return out
	}
	best := -1
	var bestM Metrics
	for ki, p := range predictAll(valR) {
		m := Score(p, valR.Label)
		if best < 0 || m.Accuracy > bestM.Accuracy || (m.Accuracy == bestM.Accuracy && m.LogLoss < bestM.LogLoss) {
			best, bestM = ki, m
		}
	}
	if valR.Len() == 0 {
		best = 3 // k = 10 without validation cells
	}
	return predictAll(testR)[best], KNNCandidates[best], nil
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

// neighbours lists, for each item asked about in queries, up to L items with
// training cells, most similar first (the item itself excluded).
func (kn KNN) neighbours(ctx context.Context, trainR *model.Responses, queries []*model.Responses, L int) ([][]int32, error) {
	J, D := trainR.NumItems(), kn.Dim
	unit := make([]float32, len(kn.Features))
	copy(unit, kn.Features)
	for j := 0; j < J; j++ {
		v := unit[j*D : (j+1)*D]
		if n := float32(math.Sqrt(sumSq32(v))); n > 0 {
			for k := range v {
				v[k] /= n
			}
		}
	}
	byItem := trainR.ByItem()
	var cand []int32 // items with training cells
	for j := 0; j < J; j++ {
		if len(byItem.Row(j)) > 0 {
			cand = append(cand, int32(j))
		}
	}
	candX := make([]float32, 0, len(cand)*D)
	for _, j := range cand {
		candX = append(candX, unit[int(j)*D:(int(j)+1)*D]...)
	}
	need := make([]bool, J)
	var asked []int32
	for _, q := range queries {
		for _, j := range q.Item {
			if !need[j] {
				need[j] = true
				asked = append(asked, j)
			}
		}
	}
	nb := make([][]int32, J)
	const block = 256
	sims := make([]float32, block*len(cand))
	order := make([]int32, len(cand))
	for s := 0; s < len(asked); s += block {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		rows := asked[s:min(s+block, len(asked))]
		qx := make([]float32, 0, len(rows)*D)
		for _, j := range rows {
			qx = append(qx, unit[int(j)*D:(int(j)+1)*D]...)
		}
		S := sims[:len(rows)*len(cand)]
		blas32.Gemm(blas.NoTrans, blas.Trans, 1, mat32(len(rows), D, qx), mat32(len(cand), D, candX), 0, mat32(len(rows), len(cand), S))
		for u, j := range rows {
			row := S[u*len(cand) : (u+1)*len(cand)]
			for k := range order {
				order[k] = int32(k)
			}
			sort.SliceStable(order, func(a, b int) bool { return row[order[a]] > row[order[b]] })
			list := make([]int32, 0, L)
			for _, k := range order {
				if cand[k] == j {
					continue
				}
				list = append(list, cand[k])
				if len(list) == L {
					break
				}
			}
			nb[j] = list
		}
	}
	return nb, nil
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
