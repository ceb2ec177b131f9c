package irtrun

import (
	"fmt"
	"io"
	"math"

	"github.com/jeirt/jeirt/train/estimate"
)

// writeRankTable prints, with --ranks, each candidate rank's p-IRT error on
// the validation models (mean over splits), how many splits chose it, and
// how many of its validation fits converged, failed or were refused.
func writeRankTable(w io.Writer, ranks []int, got []estimate.RankChoice) error {
	if len(ranks) < 2 || len(got) == 0 {
		return nil
	}
	type row struct {
		mae                  float64
		n, chosen, conv, bad int
		note                 string
	}
	rows := map[int]*row{}
	for _, rk := range ranks {
		rows[rk] = &row{}
	}
	// got holds len(ranks) choices per split, in the order of ranks.
	for s := 0; s+len(ranks) <= len(got); s += len(ranks) {
		best := -1
		for k, c := range got[s : s+len(ranks)] {
			x := rows[c.Rank]
			if c.Err != nil {
				x.bad++
				x.note = c.Err.Error()
				continue
			}
			x.mae += c.MAE
			x.n++
			if c.Converged {
				x.conv++
			} else if c.Note != "" {
				x.note = c.Note
			}
			if best < 0 || c.MAE < got[s+best].MAE {
				best = k
			}
		}
		if best >= 0 {
			rows[got[s+best].Rank].chosen++
		}
	}
	splits := len(got) / len(ranks)
	fmt.Fprintf(w, "\nrank of the fit, chosen in each split by p-IRT's error on validation models (every fifth training model; θ from the even items, error on the odd ones):\n\n")
	fmt.Fprintln(w, "| rank | validation MAE (mean over splits) | chosen | validation fits converged | failed |")
	fmt.Fprintln(w, "|---|---|---|---|---|")
	for _, rk := range ranks {
		x := rows[rk]
		m := math.NaN()
		if x.n > 0 {
			m = x.mae / float64(x.n)
		}
		fmt.Fprintf(w, "| %d | %.4f | %d of %d | %d of %d | %d |\n", rk, m, x.chosen, splits, x.conv, x.n, x.bad)
	}
	for _, rk := range ranks {
		if x := rows[rk]; x.note != "" {
			fmt.Fprintf(w, "rank %d: %s\n", rk, x.note)
		}
	}
	return nil
}
