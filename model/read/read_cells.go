package read

import (
	"fmt"
	"slices"

	"github.com/jeirt/jeirt/model"
)

// compactMin is the fewest cells a sink holds before it resolves the
// duplicates read so far (see cellSink); a variable so tests can lower it.
var compactMin = 1 << 24

// cellSink collects cells as read, in file order, and resolves duplicate
// (model, item) rows by sorting each model's cells by item (no map over
// cells). So that a file of repeated rows (a gzip of one row a billion times)
// does not keep every row until the end, the sink resolves what it holds
// whenever it has grown to twice the distinct cells of its last resolution
// (and at least compactMin): the cells held are then never more than about
// twice the distinct cells read, plus compactMin.
type cellSink struct {
	model, item []int32
	label       []uint8
	line        []int32 // file line of each cell, kept only to report duplicates as errors
	keepLines   bool

	// Cells [0, merged) were resolved: one per (model, item), each
	// standing for rows that all come before the cells after merged in the
	// file. label is the first row's label and line its line; counts has
	// the rows and 1-labels of those standing for more than one row.
	merged      int
	counts      map[int32]dupCount
	nextCompact int
	// The duplicate whose second row comes first in the file, found by the
	// first resolution that found any.
	dup dupRows
}

// dupCount is how many rows a resolved cell stands for, and how many of them
// are 1s.
type dupCount struct{ rows, ones int32 }

// dupRows locates the first duplicate for the error policy.
type dupRows struct {
	found                 bool
	model, item           int32
	firstLine, secondLine int32
}

func newCellSink(keepLines bool) *cellSink { return &cellSink{keepLines: keepLines} }

func (c *cellSink) add(m, i int32, y uint8, line int) {
	c.model = append(c.model, m)
	c.item = append(c.item, i)
	c.label = append(c.label, y)
	if c.keepLines {
		c.line = append(c.line, int32(line))
	}
	if len(c.label) >= c.nextCompact && len(c.label) >= compactMin {
		c.compact(0)
	}
}

// held is the number of cells the sink holds.
func (c *cellSink) held() int { return len(c.label) }

// transpose swaps the roles of models and items.
func (c *cellSink) transpose() {
	c.model, c.item = c.item, c.model
	c.dup.model, c.dup.item = c.dup.item, c.dup.model
}

// compact resolves the cells held into one per (model, item), sorted by model
// then item, keeping each cell's first label and line and counting its rows
// and 1s in c.counts. nm is the number of models, or 0 to find it. Cells
// already grouped by model (a wide model-major file, or a long file sorted by
// model) are resolved in place, without a second copy of the cells.
func (c *cellSink) compact(nm int) {
	n := len(c.label)
	if nm == 0 {
		for _, m := range c.model {
			nm = max(nm, int(m)+1)
		}
	}
	grouped := true
	for k := 1; k < n; k++ {
		if c.model[k] < c.model[k-1] {
			grouped = false
			break
		}
	}
	// start[m]:start[m+1] are model m's cells in perm order; perm is the
	// identity (nil) when the cells are grouped already.
	start := make([]int32, nm+1)
	for _, m := range c.model {
		start[m+1]++
	}
	for i := 0; i < nm; i++ {
		start[i+1] += start[i]
	}
	var perm []int32
	var mod, item, line []int32
	var label []uint8
	if grouped {
		// Written in place: position w never passes the segment being read,
		// and the segment's items, labels and lines are copied out first
		// (keys, seg, segLine).
		mod, item, label, line = c.model[:0], c.item[:0], c.label[:0], c.line[:0]
	} else {
		perm = make([]int32, n)
		next := slices.Clone(start[:nm])
		for k, m := range c.model {
			perm[next[m]] = int32(k)
			next[m]++
		}
		mod, item, label = make([]int32, 0, n), make([]int32, 0, n), make([]uint8, 0, n)
		if c.keepLines {
			line = make([]int32, 0, n)
		}
	}
	srcLabel, srcLine, merged, old := c.label, c.line, c.merged, c.counts
	counts := map[int32]dupCount{}
	var keys []uint64
	var seg []uint8
	var segLine []int32
	dupSecond := -1 // this pass's duplicate whose second row comes first in the file
	var dup dupRows
	for m := 0; m < nm; m++ {
		lo, hi := int(start[m]), int(start[m+1])
		keys = keys[:0]
		for p := lo; p < hi; p++ {
			k := p
			if perm != nil {
				k = int(perm[p])
			}
			keys = append(keys, uint64(c.item[k])<<32|uint64(k))
		}
		labelOf := func(k int) uint8 { return srcLabel[k] }
		lineOf := func(k int) int32 { return srcLine[k] }
		if perm == nil {
			seg = append(seg[:0], srcLabel[lo:hi]...)
			labelOf = func(k int) uint8 { return seg[k-lo] }
			if c.keepLines {
				segLine = append(segLine[:0], srcLine[lo:hi]...)
				lineOf = func(k int) int32 { return segLine[k-lo] }
			}
		}
		// rowsOf gives the rows and 1s cell k stands for.
		rowsOf := func(k int) dupCount {
			if k < merged && len(old) > 0 {
				if d, ok := old[int32(k)]; ok {
					return d
				}
			}
			return dupCount{1, int32(labelOf(k))}
		}
		if !slices.IsSorted(keys) { // a file sorted by model and item needs no sort
			slices.Sort(keys)
		}
		for a := 0; a < len(keys); {
			it := int32(keys[a] >> 32)
			b := a + 1
			for b < len(keys) && int32(keys[b]>>32) == it {
				b++
			}
			first := int(uint32(keys[a]))
			d := rowsOf(first)
			if b-a > 1 || d.rows > 1 {
				for _, k := range keys[a+1 : b] {
					e := rowsOf(int(uint32(k)))
					d.rows += e.rows
					d.ones += e.ones
				}
				counts[int32(len(label))] = d
			}
			if b-a > 1 {
				if second := int(uint32(keys[a+1])); dupSecond < 0 || second < dupSecond {
					dupSecond = second
					dup = dupRows{found: true, model: int32(m), item: it}
					if c.keepLines {
						dup.firstLine, dup.secondLine = lineOf(first), lineOf(second)
					}
				}
			}
			mod = append(mod, int32(m))
			item = append(item, it)
			label = append(label, labelOf(first))
			if c.keepLines {
				line = append(line, lineOf(first))
			}
			a = b
		}
	}
	// A duplicate found by an earlier pass has its second row before any
	// found now.
	if !c.dup.found {
		c.dup = dup
	}
	c.model, c.item, c.label, c.line = mod, item, label, line
	c.merged, c.counts = len(label), counts
	c.nextCompact = 2 * len(label)
}

// finish resolves duplicate (model, item) rows by policy and stores the cells
// in r sorted by (model, item).
func (c *cellSink) finish(r *model.Responses, policy, file string, rep *Report) error {
	if n := len(c.label); n > 1<<31-1 {
		return fmt.Errorf("%s: %d cells is more than jeirt can hold", file, n)
	}
	c.compact(len(r.Models))
	if policy == "error" && c.dup.found {
		fe := model.FieldErrorf("Duplicates", "use {Duplicates} majority or first to resolve")
		return &ParseError{File: file, Line: int(c.dup.secondLine), Err: fe,
			Msg: fmt.Sprintf("duplicate row for model %q, item %q (first at line %d; %s)",
				model.Clip(r.Models[c.dup.model]), model.Clip(r.Items[c.dup.item]), c.dup.firstLine, fe)}
	}
	mod, item, label := c.model, c.item, c.label
	if len(c.counts) > 0 {
		w := 0
		for p := range label {
			if d, ok := c.counts[int32(p)]; ok {
				rep.DuplicateCells++
				rep.DuplicateRows += int(d.rows) - 1
				if d.ones != 0 && d.ones != d.rows {
					rep.Conflicts++
				}
				if policy == "majority" {
					switch {
					case 2*d.ones > d.rows:
						label[p] = 1
					case 2*d.ones < d.rows:
						label[p] = 0
					default:
						rep.TiesDropped++
						continue
					}
				}
			}
			mod[w], item[w], label[w] = mod[p], item[p], label[p]
			w++
		}
		mod, item, label = mod[:w], item[:w], label[:w]
	}
	r.Model, r.Item, r.Label = mod, item, label
	*c = cellSink{}
	r.Invalidate()
	return nil
}
