package route

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/jeirt/jeirt/model/csvtable"
)

// RoutePoint is one policy's result on held-out questions (over one split,
// or the mean over several: see Combine).
type RoutePoint struct {
	Policy string  // router, best-single, random, oracle, cheapest
	Rule   string  // the router's rule (default, max-p, shortlist, margin, margin-val, min-p, lambda); the policy otherwise
	Param  float64 // T, δ, min-p or λ; NaN when the rule has none
	// Spec, when set, is the param column in place of Param: the rule the
	// "router,default" point applied (shortlist?k=3), or, over splits that
	// recorded different rules or chose different margins (margin-val),
	// each with its count (best-single*3|shortlist?k=3*7).
	Spec      string
	Accuracy  float64 // mean over questions of the chosen model's label (over splits: the mean of the splits')
	TotalCost float64 // NaN without costs
	MeanCost  float64
	Items     int // questions routed (over splits: in all of them)
	Fallbacks int // min-p: questions where no model reached min-p
	Flagged   int // default: questions the out-of-domain check sent to best-single's pick
	// Departures counts the routed questions where the router chose
	// another model than best-single's pick (router points only).
	Departures int
	Chosen     string

	// AccuracySE is the standard error of Accuracy; VsBest and VsBestSE are
	// Accuracy minus best-single's and the standard error of that paired
	// difference; Wins and Losses count the splits where the point beat or
	// lost to best-single (see Intervals and Combine). NaN and 0 when not
	// computed.
	AccuracySE, VsBest, VsBestSE float64
	Wins, Losses                 int
	// Outcomes is the chosen model's label per routed question, in item
	// order, when RouteEvalOptions.Outcomes asks for it.
	Outcomes []float64
}

// RouteColumns are the columns of the curve WriteRouteCSV writes.
var RouteColumns = []string{"policy", "rule", "param", "accuracy", "total_cost", "mean_cost", "items", "fallbacks",
	"accuracy_se", "vs_best_single", "vs_best_single_se", "wins", "losses"}

// WriteRouteCSV writes route eval's points as CSV with RouteColumns (NaN as
// blank; the param of the default point is its Spec).
func WriteRouteCSV(w io.Writer, pts []RoutePoint) error {
	num := func(v float64) string {
		if math.IsNaN(v) {
			return ""
		}
		return strconv.FormatFloat(v, 'g', 6, 64)
	}
	if _, err := fmt.Fprintln(w, strings.Join(RouteColumns, ",")); err != nil {
		return err
	}
	for _, p := range pts {
		param := num(p.Param)
		if p.Spec != "" {
			param = p.Spec
		}
		if _, err := fmt.Fprintf(w, "%s,%s,%s,%s,%s,%s,%d,%d,%s,%s,%s,%d,%d\n", p.Policy, p.Rule, param, num(p.Accuracy),
			num(p.TotalCost), num(p.MeanCost), p.Items, p.Fallbacks, num(p.AccuracySE), num(p.VsBest), num(p.VsBestSE), p.Wins, p.Losses); err != nil {
			return err
		}
	}
	return nil
}

// ReadRouteCSV reads a file written by WriteRouteCSV (or by an older jeirt,
// without the interval columns). Param, TotalCost, MeanCost and the
// intervals are NaN where empty; a param that is not a number (the
// default row's rule) is the point's Spec; Chosen is not in the file.
func ReadRouteCSV(path string) ([]RoutePoint, error) {
	var pts []RoutePoint
	err := csvtable.Read(path, func(get csvtable.Row) error {
		p := RoutePoint{Policy: get.Str("policy"), Rule: get.Str("rule"), Param: math.NaN(),
			Accuracy: get.Num("accuracy"), TotalCost: get.OptNum("total_cost"), MeanCost: get.OptNum("mean_cost"),
			Items: get.OptInt("items"), Fallbacks: get.OptInt("fallbacks"), AccuracySE: get.OptNum("accuracy_se"),
			VsBest: get.OptNum("vs_best_single"), VsBestSE: get.OptNum("vs_best_single_se"), Wins: get.OptInt("wins"), Losses: get.OptInt("losses")}
		if param := get.OptStr("param"); param != "" {
			if v, err := strconv.ParseFloat(param, 64); err == nil {
				p.Param = v
			} else {
				p.Spec = param
			}
		}
		pts = append(pts, p)
		return get.Err()
	})
	if err != nil {
		return nil, err
	}
	if len(pts) == 0 {
		return nil, fmt.Errorf("%s: no rows", path)
	}
	return pts, nil
}
