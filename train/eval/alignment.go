package eval

import (
	"math"
	"sort"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/checkpoint"
)

// MeanDirection is the mean of the unit vectors q_j/|q_j| over items (rows of
// the J x dim matrix q), not normalised; zero rows are skipped.
func MeanDirection(q []float32, dim int, items []int) []float64 {
	mu := make([]float64, dim)
	for _, j := range items {
		row := q[j*dim : (j+1)*dim]
		n := 0.0
		for _, v := range row {
			n += float64(v) * float64(v)
		}
		if n == 0 {
			continue
		}
		n = math.Sqrt(n)
		for d, v := range row {
			mu[d] += float64(v) / n
		}
	}
	for d := range mu {
		mu[d] /= float64(max(len(items), 1))
	}
	return mu
}

// Cosine is x·y/(|x||y|), 0 when either is zero.
func Cosine(x, y []float64) float64 {
	var xy, xx, yy float64
	for k := range x {
		xy += x[k] * y[k]
		xx += x[k] * x[k]
		yy += y[k] * y[k]
	}
	if xx == 0 || yy == 0 {
		return 0
	}
	return xy / math.Sqrt(xx*yy)
}

// BenchmarkAlignment computes the Alignment of the held-out benchmarks held
// for question embeddings q (J x dim, row j item j) grouped by group (one
// entry per item; "" items are left out).
func BenchmarkAlignment(q []float32, dim int, group []string, held []string) *checkpoint.Alignment {
	isHeld := map[string]bool{}
	for _, h := range held {
		isHeld[h] = true
	}
	var heldItems, trainItems []int
	byGroup := map[string][]int{}
	for j, g := range group {
		switch {
		case g == "":
		case isHeld[g]:
			heldItems = append(heldItems, j)
		default:
			trainItems = append(trainItems, j)
			byGroup[g] = append(byGroup[g], j)
		}
	}
	a := &checkpoint.Alignment{HeldOut: append([]string(nil), held...), PerBenchmark: map[string]float64{}}
	h := MeanDirection(q, dim, heldItems)
	a.Cosine = Cosine(h, MeanDirection(q, dim, trainItems))
	names := make([]string, 0, len(byGroup))
	for g := range byGroup {
		names = append(names, g)
	}
	sort.Strings(names)
	best := math.Inf(-1)
	for _, g := range names {
		c := Cosine(h, MeanDirection(q, dim, byGroup[g]))
		a.PerBenchmark[g] = c
		if c > best {
			best, a.Nearest = c, g
		}
	}
	return a
}

// AddPerModel fills a.PerModel and a.AccuracySpearman from the training and
// test cells (indexed like q's rows and the same models) and the test
// predictions p (one per testR cell).
func AddPerModel(a *checkpoint.Alignment, q []float32, dim int, trainR, testR *model.Responses, p []float64) {
	N := len(testR.Models)
	trainItems, testItems := make([][]int, N), make([][]int, N)
	for c, i := range trainR.Model {
		trainItems[i] = append(trainItems[i], int(trainR.Item[c]))
	}
	right, seen := make([]float64, N), make([]float64, N)
	for c, i := range testR.Model {
		testItems[i] = append(testItems[i], int(testR.Item[c]))
		if (p[c] >= 0.5) == (testR.Label[c] == 1) {
			right[i]++
		}
		seen[i]++
	}
	a.PerModel = map[string]float64{}
	var cos, acc []float64
	for i, name := range testR.Models {
		if seen[i] == 0 || len(trainItems[i]) == 0 {
			continue
		}
		c := Cosine(MeanDirection(q, dim, testItems[i]), MeanDirection(q, dim, trainItems[i]))
		a.PerModel[name] = c
		cos, acc = append(cos, c), append(acc, right[i]/seen[i])
	}
	a.AccuracySpearman = model.Float(math.NaN())
	if len(cos) >= 3 {
		a.AccuracySpearman = model.Float(Spearman(cos, acc))
	}
}
