package irtrun

import (
	"errors"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/train/estimate"
)

// TestWriteRankTable: two splits of ranks 1, 2 and 5: rank 2 lowest in
// the first, rank 1 in the second (rank 5 failed there and did not
// converge in the first), each rank's mean error over the splits it was
// scored in, its choices, converged fits and failures, and the notes.
func TestWriteRankTable(t *testing.T) {
	got := []estimate.RankChoice{
		{Rank: 1, MAE: 0.04, Converged: true}, {Rank: 2, MAE: 0.03, Converged: true}, {Rank: 5, MAE: 0.05, Note: "projected gradient 0.03"},
		{Rank: 1, MAE: 0.02, Converged: true}, {Rank: 2, MAE: 0.05, Converged: true}, {Rank: 5, Err: errors.New("slope 1023.78 beyond ±1000")},
	}
	var b strings.Builder
	if err := writeRankTable(&b, []int{1, 2, 5}, got); err != nil {
		t.Fatal(err)
	}
	want := `
rank of the fit, chosen in each split by p-IRT's error on validation models (every fifth training model; θ from the even items, error on the odd ones):

| rank | validation MAE (mean over splits) | chosen | validation fits converged | failed |
|---|---|---|---|---|
| 1 | 0.0300 | 1 of 2 | 2 of 2 | 0 |
| 2 | 0.0400 | 1 of 2 | 2 of 2 | 0 |
| 5 | 0.0500 | 0 of 2 | 0 of 1 | 1 |
rank 5: slope 1023.78 beyond ±1000
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	if err := writeRankTable(&b, []int{1}, got[:1]); err != nil || b.Len() != 0 {
		t.Errorf("one rank: %q, %v; want nothing", b.String(), err)
	}
}
