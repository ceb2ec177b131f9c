package cell

import (
	"testing"

	"github.com/jeirt/jeirt/model"
)

// A stream of repeated rows is resolved as it comes in: the cells held stay
// within twice the distinct cells (or CompactMin), not the rows read.
func TestCellSinkBound(t *testing.T) {
	defer func(v int) { CompactMin = v }(CompactMin)
	CompactMin = 1000
	c := NewSink(false)
	most := 0
	const distinct, rows = 300, 1_000_000
	for k := 0; k < rows; k++ {
		c.Add(int32(k%3), int32(k%distinct/3), uint8(k/7%2), k+2)
		most = max(most, c.Held())
	}
	if most > max(CompactMin, 2*distinct) {
		t.Errorf("held %d cells for %d distinct cells in %d rows", most, distinct, rows)
	}
	r := &model.Responses{Models: []string{"a", "b", "c"}, Items: make([]string, distinct/3)}
	rep, err := c.Finish(r, "first", "x")
	if err != nil {
		t.Fatal(err)
	}
	if r.Len() != distinct || rep.DuplicateCells != distinct || rep.DuplicateRows != rows-distinct {
		t.Errorf("%d cells, report %+v", r.Len(), rep)
	}
	t.Logf("%d rows, %d distinct cells: at most %d cells held", rows, distinct, most)
}
