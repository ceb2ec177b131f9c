package read

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/limits"
	"github.com/jeirt/jeirt/model/read/internal/cell"
)

// readWide reads a matrix: model-major (one row per model, one column per item)
// or, when itemMajor, item-major (one row per item, one column per model).
// The first column names the row; blank cells are missing.
func readWide(s *csvScanner, cells *cell.Sink, lp *cell.Labels, rep *Report, itemMajor bool) (*model.Responses, error) {
	h := s.header
	if len(h) < 2 {
		return nil, s.errorf(1, "", "a wide file needs a name column and at least one more column; header is %s", cell.ClipJoin(h))
	}
	rows, cols := cell.NewNames(), cell.NewNames()
	colID := make([]int32, len(h))
	first := map[int32]int{}
	for k := 1; k < len(h); k++ {
		if h[k] == "" {
			return nil, s.errorf(1, "", "column %d has no name", k+1)
		}
		colID[k] = cols.ID([]byte(h[k]))
		if prev, dup := first[colID[k]]; dup {
			return nil, s.errorf(1, h[k], "columns %d and %d have the same name: rename one (a repeated column is not merged)", prev+1, k+1)
		}
		first[colID[k]] = k
	}
	rowKind := "model name"
	if itemMajor {
		rowKind = "item id"
	}
	if err := s.eachRow(rep, func(f [][]byte) error {
		if len(f[0]) == 0 {
			return s.errorf(s.start, h[0], "empty %s", rowKind)
		}
		row := rows.ID(f[0])
		for k := 1; k < len(f); k++ {
			y, err := lp.Label(s.file, s.start, h[k], f[k])
			if err != nil {
				return s.guessedWrong(err, f, k, map[bool]string{false: "wide", true: "wide-items"}[itemMajor])
			}
			m, i := row, colID[k]
			if itemMajor {
				m, i = colID[k], row
			}
			cells.AddLabel(m, i, y, lp, s.start)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	if itemMajor {
		return &model.Responses{Models: cols.List, Items: rows.List}, nil
	}
	return &model.Responses{Models: rows.List, Items: cols.List}, nil
}

// readPatterns reads a response-pattern table (as in R's mirt and ltm data
// sets): one column per item, a freq column, and one row per distinct pattern
// that stands for freq respondents. Respondents are named r0001, r0002, ... in
// row order.
func readPatterns(s *csvScanner, cells *cell.Sink, rep *Report) (*model.Responses, error) {
	h := s.header
	fc := cell.FindColumn(h, cell.FreqNames)
	if fc < 0 {
		return nil, s.errorf(1, "", "no freq column (want one of %s); header is %s", strings.Join(cell.FreqNames, ", "), cell.ClipJoin(h))
	}
	items := cell.NewNames()
	colID := make([]int32, len(h))
	for k := range h {
		if k == fc {
			continue
		}
		if h[k] == "" {
			return nil, s.errorf(1, "", "column %d has no name", k+1)
		}
		colID[k] = items.ID([]byte(h[k]))
	}
	type pattern struct {
		freq   int
		labels []uint8
	}
	var patterns []pattern
	total, cellTotal := 0, 0
	var lp cell.Labels
	if err := s.eachRow(rep, func(f [][]byte) error {
		freq, err := strconv.Atoi(strings.TrimSpace(string(f[fc])))
		if err != nil || freq < 0 {
			return s.errorf(s.start, h[fc], "%q is not a non-negative integer count", limits.Clip(string(f[fc])))
		}
		if freq > limits.MaxPatternRespondents-total {
			return s.errorf(s.start, h[fc], "freq %d brings the respondents to more than %d, the most a pattern table may expand to", freq, limits.MaxPatternRespondents)
		}
		if nItems := len(h) - 1; nItems > 0 && freq > (limits.MaxPatternCells-cellTotal)/nItems {
			return s.errorf(s.start, h[fc], "freq %d brings the table to more than %d cells (respondents x %d items), the most a pattern table may expand to", freq, limits.MaxPatternCells, nItems)
		}
		p := pattern{freq: freq, labels: make([]uint8, len(f))}
		for k := range f {
			if k == fc {
				continue
			}
			if p.labels[k], err = lp.Label(s.file, s.start, h[k], f[k]); err != nil {
				return err
			}
			if p.labels[k] == cell.Counts {
				return s.errorf(s.start, h[k], "%q: a response-pattern table holds 0/1 answers", limits.Clip(string(f[k])))
			}
		}
		patterns = append(patterns, p)
		total += freq
		cellTotal += freq * (len(h) - 1)
		return nil
	}); err != nil {
		return nil, err
	}
	width := max(4, len(strconv.Itoa(total)))
	r := &model.Responses{Items: items.List, Models: make([]string, 0, total)}
	for _, p := range patterns {
		for n := 0; n < p.freq; n++ {
			m := int32(len(r.Models))
			r.Models = append(r.Models, fmt.Sprintf("r%0*d", width, m+1))
			for k, y := range p.labels {
				if k == fc {
					continue
				}
				if y == cell.Missing {
					cells.Blank++
					continue
				}
				cells.Add(m, colID[k], y, 0)
			}
		}
	}
	return r, nil
}
