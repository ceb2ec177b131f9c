package irt

import (
	"sort"
	"sync"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/machine"
	"github.com/jeirt/jeirt/train/backend"
)

// layoutCells validates r and lays it out for the cBMM hot loop on up to
// threads goroutines. The result equals backend.NewCBMMProblem(r) (cells
// grouped by item, each item's cells in r's order); for cells sorted by
// (model, item), as the readers leave them, both the counting pass and the
// transpose are split over the goroutines (the transpose by ranges of items,
// each writing its own part of the layout), otherwise it falls back to
// backend.NewCBMMProblem.
func layoutCells(r *model.Responses, threads int) (*backend.CBMMProblem, error) {
	n, N, J := r.Len(), r.NumModels(), r.NumItems()
	if len(r.Model) != n || len(r.Item) != n || threads < 2 || n < 1<<16 {
		if err := r.Validate(); err != nil {
			return nil, err
		}
		return backend.NewCBMMProblem(r), nil
	}
	// Pass 1, over contiguous ranges of cells: ranges, sortedness and the
	// counts per item and per model.
	type part struct {
		itemCount, modelCount []int32
		sorted, bad           bool
	}
	parts := make([]part, threads)
	var wg sync.WaitGroup
	for t := range parts {
		wg.Add(1)
		go func(t int) {
			defer wg.Done()
			pt := &parts[t]
			pt.itemCount, pt.modelCount = make([]int32, J), make([]int32, N)
			pt.sorted = true
			lo, hi := n*t/threads, n*(t+1)/threads
			pm, pi := int32(-1), int32(-1)
			if lo > 0 {
				pm, pi = r.Model[lo-1], r.Item[lo-1]
			}
			for c := lo; c < hi; c++ {
				m, j := r.Model[c], r.Item[c]
				if uint32(m) >= uint32(N) || uint32(j) >= uint32(J) || r.Label[c] > 1 {
					pt.bad = true
					return
				}
				if m < pm || m == pm && j <= pi {
					pt.sorted = false
				}
				pm, pi = m, j
				pt.itemCount[j]++
				pt.modelCount[m]++
			}
		}(t)
	}
	wg.Wait()
	sorted := true
	for _, pt := range parts {
		if pt.bad {
			return nil, r.Validate()
		}
		sorted = sorted && pt.sorted
	}
	// The side tables (the cells were checked above), and the trials and
	// successes of weighted cells.
	side := &model.Responses{Models: r.Models, Items: r.Items, ItemText: r.ItemText, ItemGroup: r.ItemGroup}
	if r.Weighted() {
		side = r
	}
	if err := side.Validate(); err != nil {
		return nil, err
	}
	if !sorted {
		return backend.NewCBMMProblem(r), nil
	}
	p := &backend.CBMMProblem{N: N, J: J, ItemStart: make([]int32, J+1), Cells: machine.MakeLarge[uint32](n)}
	if r.Weighted() {
		p.Weight, p.Score = machine.MakeLarge[float32](n), machine.MakeLarge[float64](n)
	}
	rows := make([]int32, N+1)
	for _, pt := range parts {
		for j, k := range pt.itemCount {
			p.ItemStart[j+1] += k
		}
		for m, k := range pt.modelCount {
			rows[m+1] += k
		}
	}
	for j := 0; j < J; j++ {
		p.ItemStart[j+1] += p.ItemStart[j]
	}
	for m := 0; m < N; m++ {
		rows[m+1] += rows[m]
	}
	// Pass 2: the transpose, items split into ranges of about equal cells.
	cuts := BalanceChunks(p.ItemStart, threads)
	for t := 0; t+1 < len(cuts); t++ {
		wg.Add(1)
		go func(j0, j1 int) {
			defer wg.Done()
			transposeItems(r, p, rows, j0, j1)
		}(cuts[t], cuts[t+1])
	}
	wg.Wait()
	return p, nil
}

// transposeItems writes the layout of items j0:j1 from r's cells sorted by
// (model, item), in blocks of items whose write positions stay in cache.
func transposeItems(r *model.Responses, p *backend.CBMMProblem, rows []int32, j0, j1 int) {
	const block = 2048
	N := p.N
	next := make([]int32, j1-j0)
	copy(next, p.ItemStart[j0:j1])
	// Each model's first cell with item ≥ j0 (its cells are sorted by item).
	cursor := make([]int32, N)
	for m := 0; m < N; m++ {
		lo, hi := int(rows[m]), int(rows[m+1])
		cursor[m] = int32(lo + sort.Search(hi-lo, func(k int) bool { return int(r.Item[lo+k]) >= j0 }))
	}
	for b0 := j0; b0 < j1; b0 += block {
		b1 := int32(min(b0+block, j1))
		for m := range cursor {
			c, end := cursor[m], rows[m+1]
			cell := uint32(m) << 1
			for ; c < end && r.Item[c] < b1; c++ {
				k := r.Item[c] - int32(j0)
				p.Cells[next[k]] = cell | uint32(r.Label[c]&1)
				if p.Weight != nil {
					p.Weight[next[k]], p.Score[next[k]] = backend.CellWeight(r, int(c))
				}
				next[k]++
			}
			cursor[m] = c
		}
	}
}
