package read

import (
	"fmt"
	"slices"

	"github.com/jeirt/jeirt/model"
)

// cellSink collects cells as read, in file order, and resolves duplicates at
// the end by sorting each model's cells by item (no map over cells).
type cellSink struct {
	model, item []int32
	label       []uint8
	line        []int32 // file line of each cell, kept only to report duplicates as errors
	keepLines   bool
}

func newCellSink(keepLines bool) *cellSink { return &cellSink{keepLines: keepLines} }

func (c *cellSink) add(m, i int32, y uint8, line int) {
	c.model = append(c.model, m)
	c.item = append(c.item, i)
	c.label = append(c.label, y)
	if c.keepLines {
		c.line = append(c.line, int32(line))
	}
}

// finish resolves duplicate (model, item) rows by policy and stores the cells
// in r sorted by (model, item). Cells already grouped by model (a wide
// model-major file, or a long file sorted by model) are resolved in place,
// without a second copy of the cells.
func (c *cellSink) finish(r *model.Responses, policy, file string, rep *Report) error {
	n := len(c.label)
	if n > 1<<31-1 {
		return fmt.Errorf("%s: %d cells is more than jeirt can hold", file, n)
	}
	nm := len(r.Models)
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
	var mod, item []int32
	var label []uint8
	if grouped {
		// Written in place: position w never passes the segment being read,
		// and the segment's items and labels are copied out first (keys, seg).
		mod, item, label = c.model[:0], c.item[:0], c.label[:0]
	} else {
		perm = make([]int32, n)
		next := slices.Clone(start[:nm])
		for k, m := range c.model {
			perm[next[m]] = int32(k)
			next[m]++
		}
		mod, item, label = make([]int32, 0, n), make([]int32, 0, n), make([]uint8, 0, n)
	}
	srcLabel := c.label
	var keys []uint64
	var seg []uint8
	dupSecond := -1 // the duplicate whose second row comes first in the file
	var dupFirstLine, dupSecondLine int32
	var dupModel, dupItem int32
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
		if perm == nil {
			seg = append(seg[:0], srcLabel[lo:hi]...)
			labelOf = func(k int) uint8 { return seg[k-lo] }
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
			y := labelOf(first)
			if b-a > 1 {
				rep.DuplicateCells++
				rep.DuplicateRows += b - a - 1
				ones := 0
				for _, k := range keys[a:b] {
					ones += int(labelOf(int(uint32(k))))
				}
				if ones != 0 && ones != b-a {
					rep.Conflicts++
				}
				if second := int(uint32(keys[a+1])); dupSecond < 0 || second < dupSecond {
					dupSecond = second
					if c.keepLines {
						dupFirstLine, dupSecondLine = c.line[first], c.line[second]
					}
					dupModel, dupItem = int32(m), it
				}
				if policy == "majority" {
					switch {
					case 2*ones > b-a:
						y = 1
					case 2*ones < b-a:
						y = 0
					default:
						rep.TiesDropped++
						a = b
						continue
					}
				}
			}
			mod = append(mod, int32(m))
			item = append(item, it)
			label = append(label, y)
			a = b
		}
	}
	if policy == "error" && dupSecond >= 0 {
		return &ParseError{File: file, Line: int(dupSecondLine),
			Msg: fmt.Sprintf("duplicate row for model %q, item %q (first at line %d; use --duplicates majority or first to resolve)",
				model.Clip(r.Models[dupModel]), model.Clip(r.Items[dupItem]), dupFirstLine)}
	}
	r.Model, r.Item, r.Label = mod, item, label
	*c = cellSink{}
	r.Invalidate()
	return nil
}
