package model

import (
	"fmt"
	"slices"
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
// in r sorted by (model, item).
func (c *cellSink) finish(r *Responses, policy, file string, rep *ReadReport) error {
	n := len(c.label)
	if n > 1<<31-1 {
		return fmt.Errorf("%s: %d cells is more than jeirt can hold", file, n)
	}
	nm := len(r.Models)
	// Counting sort by model; cells of one model stay in file order.
	start := make([]int32, nm+1)
	for _, m := range c.model {
		start[m+1]++
	}
	for i := 0; i < nm; i++ {
		start[i+1] += start[i]
	}
	perm := make([]int32, n)
	next := slices.Clone(start[:nm])
	for k, m := range c.model {
		perm[next[m]] = int32(k)
		next[m]++
	}
	next = nil

	r.Model = make([]int32, 0, n)
	r.Item = make([]int32, 0, n)
	r.Label = make([]uint8, 0, n)
	var keys []uint64
	dupFirst, dupSecond := -1, -1 // the duplicate whose second row comes first in the file
	for m := 0; m < nm; m++ {
		row := perm[start[m]:start[m+1]]
		keys = keys[:0]
		for _, k := range row {
			keys = append(keys, uint64(c.item[k])<<32|uint64(k))
		}
		slices.Sort(keys)
		for a := 0; a < len(keys); {
			item := int32(keys[a] >> 32)
			b := a + 1
			for b < len(keys) && int32(keys[b]>>32) == item {
				b++
			}
			first := int(uint32(keys[a]))
			y := c.label[first]
			if b-a > 1 {
				rep.DuplicateCells++
				rep.DuplicateRows += b - a - 1
				ones := 0
				for _, k := range keys[a:b] {
					ones += int(c.label[uint32(k)])
				}
				if ones != 0 && ones != b-a {
					rep.Conflicts++
				}
				if second := int(uint32(keys[a+1])); dupSecond < 0 || second < dupSecond {
					dupFirst, dupSecond = first, second
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
			r.Model = append(r.Model, int32(m))
			r.Item = append(r.Item, item)
			r.Label = append(r.Label, y)
			a = b
		}
	}
	if policy == "error" && dupSecond >= 0 {
		return &ParseError{File: file, Line: int(c.line[dupSecond]),
			Msg: fmt.Sprintf("duplicate row for model %q, item %q (first at line %d; use --duplicates majority or first to resolve)",
				r.Models[c.model[dupSecond]], r.Items[c.item[dupSecond]], c.line[dupFirst])}
	}
	*c = cellSink{}
	r.Invalidate()
	return nil
}
