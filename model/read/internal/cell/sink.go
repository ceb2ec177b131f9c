package cell

import (
	"fmt"
	"slices"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/limits"
	"github.com/jeirt/jeirt/model/machine"
)

// CompactMin is the fewest cells a sink holds before it resolves the
// duplicates read so far (see Sink); a variable so tests can lower it.
var CompactMin = 1 << 24

// Sink collects cells as read, in file order, and resolves duplicate
// (model, item) rows by sorting each model's cells by item (no map over
// cells). So that a file of repeated rows (a gzip of one row a billion times)
// does not keep every row until the end, the sink resolves what it holds
// whenever it has grown to twice the distinct cells of its last resolution
// (and at least CompactMin): the cells held are then never more than about
// twice the distinct cells read, plus CompactMin.
type Sink struct {
	// Blank counts the cells given as blank or NA: AddLabel counts those it
	// is given, a reader that skips one itself adds it.
	Blank int

	model, item []int32
	label       []uint8
	line        []int32 // file line of each cell, kept only to report duplicates as errors
	keepLines   bool
	// succ and trials are each cell's successes and trials, nil until the
	// first cell that is not one 0/1 trial (addCounts) arrives.
	succ   []float64
	trials []int32

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

// dupCount is how many rows a resolved cell stands for, how many of them
// are 1s (rounded outcomes), the sums of their successes and trials, and
// whether any of them was not one 0/1 trial.
type dupCount struct {
	rows, ones int32
	succ       float64
	trials     int64
	mixed      bool
}

// dupRows locates the first duplicate for the error policy.
type dupRows struct {
	found                 bool
	model, item           int32
	firstLine, secondLine int32
}

// NewSink returns an empty sink; keepLines keeps each cell's line, to name
// the lines of a duplicate under the error policy.
func NewSink(keepLines bool) *Sink { return &Sink{keepLines: keepLines} }

// Add adds a cell of one 0/1 answer y, read at line.
func (c *Sink) Add(m, i int32, y uint8, line int) {
	c.model = append(c.model, m)
	c.item = append(c.item, i)
	c.label = append(c.label, y)
	if c.succ != nil {
		c.succ = append(c.succ, float64(y))
		c.trials = append(c.trials, 1)
	}
	if c.keepLines {
		c.line = append(c.line, int32(line))
	}
	if len(c.label) >= c.nextCompact && len(c.label) >= CompactMin {
		c.compact(0)
	}
}

// AddCounts adds a cell of k successes in n trials (k may be a fraction: a
// graded score); the sink keeps successes and trials from the first such cell.
func (c *Sink) AddCounts(m, i int32, k float64, n int32, line int) {
	if n == 1 && (k == 0 || k == 1) {
		c.Add(m, i, uint8(k), line)
		return
	}
	c.weigh()
	c.succ = append(c.succ, k)
	c.trials = append(c.trials, n)
	c.add2(m, i, model.RoundedLabel(k, int(n)), line)
}

// AddLabel adds a parsed label (a code of Labels.Parse) as a cell: Missing
// is counted blank, Counts is lp's successes and trials.
func (c *Sink) AddLabel(m, i int32, y uint8, lp *Labels, line int) {
	switch y {
	case Missing:
		c.Blank++
	case Counts:
		c.AddCounts(m, i, lp.K, lp.N, line)
	default:
		c.Add(m, i, y, line)
	}
}

// weigh starts keeping successes and trials, for the cells held too.
func (c *Sink) weigh() {
	if c.succ != nil {
		return
	}
	c.succ = make([]float64, len(c.label), cap(c.label))
	c.trials = make([]int32, len(c.label), cap(c.label))
	for k, y := range c.label {
		c.succ[k], c.trials[k] = float64(y), 1
	}
}

// add2 is add for a cell whose successes and trials are already appended.
func (c *Sink) add2(m, i int32, y uint8, line int) {
	c.model = append(c.model, m)
	c.item = append(c.item, i)
	c.label = append(c.label, y)
	if c.keepLines {
		c.line = append(c.line, int32(line))
	}
	if len(c.label) >= c.nextCompact && len(c.label) >= CompactMin {
		c.compact(0)
	}
}

// Held is the number of cells the sink holds.
func (c *Sink) Held() int { return len(c.label) }

// Transpose swaps the roles of models and items.
func (c *Sink) Transpose() {
	c.model, c.item = c.item, c.model
	c.dup.model, c.dup.item = c.dup.item, c.dup.model
}

// compact resolves the cells held into one per (model, item), sorted by model
// then item, keeping each cell's first label and line and counting its rows
// and 1s in c.counts. nm is the number of models, or 0 to find it. Cells
// already grouped by model (a wide model-major file, or a long file sorted by
// model) are resolved in place, without a second copy of the cells.
func (c *Sink) compact(nm int) {
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
	var mod, item, line, trials []int32
	var label []uint8
	var succ []float64
	weighted := c.succ != nil
	if grouped {
		// Written in place: position w never passes the segment being read,
		// and the segment's items, labels, lines, successes and trials are
		// copied out first (keys, seg, segLine, segSucc, segTrials).
		mod, item, label, line = c.model[:0], c.item[:0], c.label[:0], c.line[:0]
		if weighted {
			succ, trials = c.succ[:0], c.trials[:0]
		}
	} else {
		perm = make([]int32, n)
		next := slices.Clone(start[:nm])
		for k, m := range c.model {
			perm[next[m]] = int32(k)
			next[m]++
		}
		// The resolved cells keep the room reserved (Reserve), so that the
		// cells read after them are not copied once more.
		room := max(n, cap(c.label))
		mod, item, label = make([]int32, 0, room), make([]int32, 0, room), make([]uint8, 0, room)
		if c.keepLines {
			line = make([]int32, 0, room)
		}
		if weighted {
			succ, trials = make([]float64, 0, room), make([]int32, 0, room)
		}
	}
	srcLabel, srcLine, merged, old := c.label, c.line, c.merged, c.counts
	srcSucc, srcTrials := c.succ, c.trials
	var segSucc []float64
	var segTrials []int32
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
		succOf := func(k int) float64 { return srcSucc[k] }
		trialsOf := func(k int) int32 { return srcTrials[k] }
		if perm == nil {
			seg = append(seg[:0], srcLabel[lo:hi]...)
			labelOf = func(k int) uint8 { return seg[k-lo] }
			if c.keepLines {
				segLine = append(segLine[:0], srcLine[lo:hi]...)
				lineOf = func(k int) int32 { return segLine[k-lo] }
			}
			if weighted {
				segSucc = append(segSucc[:0], srcSucc[lo:hi]...)
				segTrials = append(segTrials[:0], srcTrials[lo:hi]...)
				succOf = func(k int) float64 { return segSucc[k-lo] }
				trialsOf = func(k int) int32 { return segTrials[k-lo] }
			}
		}
		// rowsOf gives the rows, 1s, successes and trials cell k stands for.
		rowsOf := func(k int) dupCount {
			if k < merged && len(old) > 0 {
				if d, ok := old[int32(k)]; ok {
					return d
				}
			}
			y := labelOf(k)
			if !weighted {
				return dupCount{rows: 1, ones: int32(y), succ: float64(y), trials: 1}
			}
			sk, nk := succOf(k), trialsOf(k)
			return dupCount{rows: 1, ones: int32(y), succ: sk, trials: int64(nk), mixed: nk != 1 || sk != float64(y)}
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
			// Most cells are one row never merged before: rowsOf only for the others.
			repeated := b-a > 1
			if !repeated && first < merged && len(old) > 0 {
				_, repeated = old[int32(first)]
			}
			if repeated {
				d := rowsOf(first)
				for _, k := range keys[a+1 : b] {
					e := rowsOf(int(uint32(k)))
					d.rows += e.rows
					d.ones += e.ones
					d.succ += e.succ
					d.trials += e.trials
					d.mixed = d.mixed || e.mixed
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
			if weighted {
				succ = append(succ, succOf(first))
				trials = append(trials, trialsOf(first))
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
	c.succ, c.trials = succ, trials
	c.merged, c.counts = len(label), counts
	c.nextCompact = 2 * len(label)
}

// Tally is what a sink counted besides its cells (read.Report shows it).
type Tally struct {
	Blank          int // cells given as blank or NA: missing
	DuplicateCells int // (model, item) cells with more than one row
	DuplicateRows  int // rows beyond the first for those cells
	Conflicts      int // duplicate cells whose rows disagree
	TiesDropped    int // conflicts with as many 0s as 1s, left missing (majority policy)
}

// Finish resolves duplicate (model, item) rows by policy and stores the cells
// in r sorted by (model, item): majority (rows of one 0/1 trial each), first,
// error, or trials (the rows' successes and trials added up, so that k of n
// repeated 0/1 rows make one cell of k successes in n trials). It returns
// what it counted, so far as it got on an error, and empties the sink.
func (c *Sink) Finish(r *model.Responses, policy, file string) (Tally, error) {
	rep := Tally{Blank: c.Blank}
	if n := len(c.label); n > 1<<31-1 {
		return rep, fmt.Errorf("%s: %d cells is more than jeirt can hold", file, n)
	}
	c.compact(len(r.Models))
	if policy == "error" && c.dup.found {
		fe := model.FieldErrorf("Duplicates", "use {Duplicates} majority, first or trials to resolve")
		return rep, &ParseError{File: file, Line: int(c.dup.secondLine), Err: fe,
			Msg: fmt.Sprintf("duplicate row for model %q, item %q (first at line %d; %s)",
				limits.Clip(r.Models[c.dup.model]), limits.Clip(r.Items[c.dup.item]), c.dup.firstLine, fe)}
	}
	if policy == "trials" && len(c.counts) > 0 {
		c.weigh()
	}
	mod, item, label, succ, trials := c.model, c.item, c.label, c.succ, c.trials
	if len(c.counts) > 0 {
		w := 0
		for p := range label {
			if d, ok := c.counts[int32(p)]; ok {
				rep.DuplicateCells++
				rep.DuplicateRows += int(d.rows) - 1
				if d.mixed || d.ones != 0 && d.ones != d.rows {
					rep.Conflicts++
				}
				switch policy {
				case "majority":
					if d.mixed {
						return rep, &ParseError{File: file, Msg: fmt.Sprintf("%d rows for model %q, item %q hold trials or graded scores: --duplicates majority resolves 0/1 answers only (use --duplicates trials to add them up, or first)",
							d.rows, limits.Clip(r.Models[mod[p]]), limits.Clip(r.Items[item[p]]))}
					}
					switch {
					case 2*d.ones > d.rows:
						label[p] = 1
					case 2*d.ones < d.rows:
						label[p] = 0
					default:
						rep.TiesDropped++
						continue
					}
					if succ != nil {
						succ[p] = float64(label[p])
					}
				case "trials":
					if d.trials > 1<<31-1 {
						return rep, &ParseError{File: file, Msg: fmt.Sprintf("model %q, item %q: %d trials in all is more than jeirt can hold in one cell",
							limits.Clip(r.Models[mod[p]]), limits.Clip(r.Items[item[p]]), d.trials)}
					}
					succ[p], trials[p] = d.succ, int32(d.trials)
				}
			}
			mod[w], item[w], label[w] = mod[p], item[p], label[p]
			if succ != nil {
				succ[w], trials[w] = succ[p], trials[p]
			}
			w++
		}
		mod, item, label = mod[:w], item[:w], label[:w]
		if succ != nil {
			succ, trials = succ[:w], trials[:w]
		}
	}
	r.Model, r.Item, r.Label, r.Successes, r.Trials = mod, item, label, succ, trials
	r.Normalize()
	*c = Sink{}
	r.Invalidate()
	return rep, nil
}

// Reserve makes room for rows cells at once (a Parquet file says how many
// rows it has, a text reader estimates it from the bytes left), so that the
// cells are not copied as they grow: append's growth leaves each outgrown
// copy to the collector, and with the heap allowed to reach twice what is
// live, those copies set the peak of a large read. Room the sink holds
// already is kept; room never written is address space, not memory.
func (c *Sink) Reserve(rows int64) {
	if rows <= int64(cap(c.label)) || rows > 1<<31-1 {
		return
	}
	n := int(rows)
	c.model = append(machine.MakeLarge[int32](n)[:0], c.model...)
	c.item = append(machine.MakeLarge[int32](n)[:0], c.item...)
	c.label = append(machine.MakeLarge[uint8](n)[:0], c.label...)
	if c.keepLines {
		c.line = append(machine.MakeLarge[int32](n)[:0], c.line...)
	}
	if c.succ != nil {
		c.succ = append(machine.MakeLarge[float64](n)[:0], c.succ...)
		c.trials = append(machine.MakeLarge[int32](n)[:0], c.trials...)
	}
}

// Room is the number of cells the sink holds room for (Reserve).
func (c *Sink) Room() int { return cap(c.label) }

// AddRows adds the cells of rows row0+1... (model m[k], item it[k], label
// y[k], a 0/1 answer or Missing), counting the missing ones blank, a run of
// observed cells at a time.
func (c *Sink) AddRows(m, it []int32, y []uint8, row0 int) {
	if c.succ != nil { // the sink keeps successes and trials: one cell at a time
		for i, l := range y {
			if l == Missing {
				c.Blank++
				continue
			}
			c.Add(m[i], it[i], l, row0+i+1)
		}
		return
	}
	for i := 0; i < len(y); {
		if y[i] == Missing {
			c.Blank++
			i++
			continue
		}
		k := i
		for k < len(y) && y[k] != Missing {
			k++
		}
		c.model = append(c.model, m[i:k]...)
		c.item = append(c.item, it[i:k]...)
		c.label = append(c.label, y[i:k]...)
		if c.keepLines {
			for l := i; l < k; l++ {
				c.line = append(c.line, int32(row0+l+1))
			}
		}
		i = k
	}
}
