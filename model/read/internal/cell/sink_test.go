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

// Reserve keeps every array of the cells held, the successes and trials of
// a weighted sink too, and the room it made outlasts a resolution.
func TestSinkReserveKeepsCells(t *testing.T) {
	defer func(v int) { CompactMin = v }(CompactMin)
	CompactMin = 4
	c := NewSink(true)
	c.Add(1, 0, 1, 2)
	c.AddCounts(0, 1, 2.5, 4, 3)
	c.Reserve(100)
	if c.Room() < 100 {
		t.Fatalf("room %d after Reserve(100)", c.Room())
	}
	c.Add(0, 0, 0, 4)
	c.AddCounts(1, 1, 3, 3, 5) // the fourth cell: resolved (out of model order)
	if c.Room() < 100 {
		t.Errorf("room %d after a resolution", c.Room())
	}
	r := &model.Responses{Models: []string{"a", "b"}, Items: []string{"x", "y"}}
	if _, err := c.Finish(r, "first", "f"); err != nil {
		t.Fatal(err)
	}
	want := [][3]float64{{0, 0, 0}, {0, 1, 2.5}, {1, 0, 1}, {1, 1, 3}}
	wantTrials := []int{1, 4, 1, 3}
	if r.Len() != len(want) {
		t.Fatalf("%d cells, want %d", r.Len(), len(want))
	}
	for k, w := range want {
		if got := [3]float64{float64(r.Model[k]), float64(r.Item[k]), r.SuccessesAt(k)}; got != w || r.TrialsAt(k) != wantTrials[k] {
			t.Errorf("cell %d: %v in %d trials, want %v in %d", k, got, r.TrialsAt(k), w, wantTrials[k])
		}
	}
}
