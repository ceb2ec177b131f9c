package catfile

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/csvtable"
)

// Estimate is one row of the estimates.csv that `jeirt irt estimate`
// writes: a model's estimated score on all of a fit's items (or on one
// category of them, Category "" for all), from NAnswered answered items
// whose mean is Observed, with its interval [Lo, Hi], and θ's posterior
// mean and standard deviation. NaN (an empty cell) is undefined.
type Estimate struct {
	Model, Category string
	NAnswered       int
	Observed        float64
	Score, Lo, Hi   float64
	Theta, SE       []float64
}

// WriteEstimates writes estimates.csv:
// model,n_answered,observed_mean,score,score_lo,score_hi,theta,se (rank r:
// theta_1..theta_r, se_1..se_r), with a category column after model when
// withCategory (categories.csv).
func WriteEstimates(w io.Writer, rank int, withCategory bool, rows []Estimate) error {
	cw := csv.NewWriter(w)
	hdr := []string{"model"}
	if withCategory {
		hdr = append(hdr, "category")
	}
	hdr = append(hdr, "n_answered", "observed_mean", "score", "score_lo", "score_hi")
	hdr = append(append(hdr, cols("theta", rank)...), cols("se", rank)...)
	if err := cw.Write(hdr); err != nil {
		return err
	}
	for _, e := range rows {
		row := []string{e.Model}
		if withCategory {
			row = append(row, e.Category)
		}
		row = append(row, strconv.Itoa(e.NAnswered), model.FormatFloat(e.Observed), model.FormatFloat(e.Score),
			model.FormatFloat(e.Lo), model.FormatFloat(e.Hi))
		for _, v := range [][]float64{e.Theta, e.SE} {
			for d := 0; d < rank; d++ {
				row = append(row, model.FormatFloat(v[d]))
			}
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// ReadEstimates reads a file WriteEstimates wrote (with or without its
// category column).
func ReadEstimates(path string, rank int) ([]Estimate, error) {
	var out []Estimate
	err := csvtable.Read(path, func(get csvtable.Row) error {
		e := Estimate{Model: get.Str("model"), NAnswered: get.Int("n_answered"), Observed: get.OptNum("observed_mean"),
			Score: get.OptNum("score"), Lo: get.OptNum("score_lo"), Hi: get.OptNum("score_hi"),
			Theta: readNums(get, "theta", rank, true), SE: readNums(get, "se", rank, true)}
		if get.Has("category") {
			e.Category = get.Str("category")
		}
		out = append(out, e)
		return get.Err()
	})
	return out, err
}

// WriteWeights writes the items `jeirt irt select --budget K` chose by an
// anchor or random rule: item, weight (the share of the bank each stands
// for, summing to 1; equal for random items) and, as in the other
// selections, a (a_1 ... a_r), the intercept d and the difficulty b.
func WriteWeights(w io.Writer, fit *model.IRT, items []int, weight []float64) error {
	rk := fit.Rank
	cw := csv.NewWriter(w)
	hdr := append([]string{"item", "weight"}, cols("a", rk)...)
	if err := cw.Write(append(hdr, "d", "b")); err != nil {
		return err
	}
	for k, j := range items {
		a := fit.A[j*rk : (j+1)*rk]
		row := []string{fit.Items[j], model.FormatFloat(weight[k])}
		for _, v := range a {
			row = append(row, model.FormatFloat(v))
		}
		row = append(row, model.FormatFloat(fit.B[j]), model.FormatFloat(model.Difficulty(a, fit.B[j])))
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// ReadWeights reads the item and weight columns of a file WriteWeights
// wrote: each item's weight, by id, every weight positive and finite.
func ReadWeights(path string) (map[string]float64, error) {
	out := map[string]float64{}
	err := csvtable.Read(path, func(get csvtable.Row) error {
		id, wt := get.Str("item"), get.Num("weight")
		if err := get.Err(); err != nil {
			return err
		}
		if !(wt > 0) || !model.Finite(wt) {
			return fmt.Errorf("%s: item %q: weight %v is not a positive number", path, id, wt)
		}
		if _, dup := out[id]; dup {
			return fmt.Errorf("%s: item %q is listed twice", path, id)
		}
		out[id] = wt
		return nil
	})
	return out, err
}
