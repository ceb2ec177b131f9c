package read

import (
	"fmt"
	"math"
	"strings"

	"github.com/jeirt/jeirt/model/csvtable"
	"github.com/jeirt/jeirt/model/limits"
)

// ItemGuess reads the 3PL's lower asymptotes of items from column of the
// item file path (a CSV with an item id column, as Items reads): a value of
// at least 2 is a number of answer options, c = 1/value (a multiple-choice
// item's guessing floor); a value in [0, 1) is c itself. Every item needs a
// value; the file may list other items too.
func ItemGuess(path, column string, items []string) ([]float64, error) {
	want := make(map[string]int, len(items))
	for j, id := range items {
		want[id] = j
	}
	out := make([]float64, len(items))
	for j := range out {
		out[j] = math.NaN()
	}
	idCol := ""
	err := csvtable.Read(path, func(get csvtable.Row) error {
		if idCol == "" {
			for _, n := range itemTextIDNames {
				if get.Has(n) {
					idCol = n
					break
				}
			}
			if idCol == "" {
				return fmt.Errorf("%s: no item id column (want one of %s)", path, strings.Join(itemTextIDNames, ", "))
			}
			if !get.Has(column) {
				return fmt.Errorf("%s: no column %q for the lower asymptotes (--guess %s)", path, limits.Clip(column), limits.Clip(column))
			}
		}
		id := get.Str(idCol)
		v := get.Num(column)
		if err := get.Err(); err != nil {
			return err
		}
		j, ok := want[id]
		if !ok {
			return nil
		}
		switch {
		case v >= 2:
			out[j] = 1 / v
		case v >= 0 && v < 1:
			out[j] = v
		default:
			return fmt.Errorf("%s: item %q: column %q: %v is neither a number of options (at least 2) nor a lower asymptote in [0, 1)", path, limits.Clip(id), limits.Clip(column), v)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for j, v := range out {
		if math.IsNaN(v) {
			return nil, fmt.Errorf("%s: item %q has no %s", path, limits.Clip(items[j]), limits.Clip(column))
		}
	}
	return out, nil
}
