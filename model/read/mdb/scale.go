package mdb

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/limits"
)

// A measurement-db benchmark says how its grader scores in response_type
// and response_scale (benchmarks.parquet); mdbScore turns one response into
// what jeirt fits, a score in [0, 1], by the table of docs/data.md.

// mdbScale is a parsed response_scale: a set of values (discrete), bounds
// (interval), or nothing known. It is canonical JSON in measurement-db's
// schema 3 ({"kind":"discrete","values":[0,1]}, {"kind":"interval","min":0,
// "max":10}, "direction", "meanings") and free text before it ("{1, 2, 3,
// 4, 5}", "[0, 1]", "k/N, N varies per item", "{0, 1}; -1 = not applicable").
type mdbScale struct {
	Text           string
	Kind           string    // "discrete", "interval", "mixed" or "" (unknown)
	Values         []float64 // discrete: the values, sentinels left out, ascending
	Min, Max       float64   // interval bounds; NaN when open
	LowerIsBetter  bool
	Unordered      bool      // direction unordered: no value is a better answer
	NotApplicable  []float64 // values that mean "not applicable": missing
	notApplicableW string    // the words that said so
}

// naWords are the meanings of a value that is no answer at all.
var naWords = regexp.MustCompile(`(?i)^\s*(not applicable|n/?a|missing|no (answer|response|grade|score)|not (graded|scored|evaluated|available)|ungraded|invalid|skipped|undefined|unknown)\b`)

// naText finds "-1 = not applicable", "-1: N/A", "-1 means missing" in a
// free-text scale.
var naText = regexp.MustCompile(`(?i)(-?\d+(?:\.\d+)?)\s*(?:=|:|means|for|->|→)\s*"?(not applicable|n/?a\b|missing|no (?:answer|response|grade|score)|not (?:graded|scored|evaluated|available)|ungraded|invalid|skipped|undefined)`)

var (
	scaleSet      = regexp.MustCompile(`\{([^{}]*)\}`)
	scaleInterval = regexp.MustCompile(`[\[(]\s*(-?[\d.]+(?:[eE][-+]?\d+)?|-?inf)\s*,\s*(-?[\d.]+(?:[eE][-+]?\d+)?|\+?inf)\s*[\])]`)
	scaleNumber   = regexp.MustCompile(`-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?`)
)

// parseScale reads a response_scale; what it cannot read is an unknown
// scale (Kind ""), not an error: the response type may not need one.
func parseScale(text string) mdbScale {
	sc := mdbScale{Text: text, Min: math.NaN(), Max: math.NaN()}
	t := strings.TrimSpace(text)
	if strings.HasPrefix(t, "{") && json.Valid([]byte(t)) {
		var j struct {
			Kind      string            `json:"kind"`
			Values    []float64         `json:"values"`
			Min       *float64          `json:"min"`
			Max       *float64          `json:"max"`
			Direction string            `json:"direction"`
			Meanings  map[string]string `json:"meanings"`
		}
		if json.Unmarshal([]byte(t), &j) == nil {
			sc.Kind, sc.Values, sc.LowerIsBetter, sc.Unordered = j.Kind, j.Values, j.Direction == "lower_is_better", j.Direction == "unordered"
			if j.Min != nil {
				sc.Min = *j.Min
			}
			if j.Max != nil {
				sc.Max = *j.Max
			}
			for v, m := range j.Meanings {
				if x, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil && naWords.MatchString(m) {
					sc.NotApplicable = append(sc.NotApplicable, x)
					sc.notApplicableW = m
				}
			}
			sc.finish()
			return sc
		}
	}
	rest := t
	for _, m := range naText.FindAllStringSubmatchIndex(t, -1) {
		x, _ := strconv.ParseFloat(t[m[2]:m[3]], 64)
		sc.NotApplicable = append(sc.NotApplicable, x)
		sc.notApplicableW = t[m[4]:m[5]]
		rest = strings.Replace(rest, t[m[0]:m[1]], "", 1)
	}
	sc.LowerIsBetter = strings.Contains(strings.ToLower(t), "lower is better") || strings.Contains(t, "lower_is_better")
	switch {
	case scaleSet.MatchString(rest):
		sc.Kind = "discrete"
		for _, n := range scaleNumber.FindAllString(scaleSet.FindStringSubmatch(rest)[1], -1) {
			x, _ := strconv.ParseFloat(n, 64)
			sc.Values = append(sc.Values, x)
		}
	case scaleInterval.MatchString(rest):
		sc.Kind = "interval"
		m := scaleInterval.FindStringSubmatch(rest)
		sc.Min, sc.Max = parseBound(m[1]), parseBound(m[2])
	case strings.Contains(strings.ToLower(rest), "k/n"):
		sc.Kind, sc.Min, sc.Max = "interval", 0, 1
	}
	sc.finish()
	return sc
}

func parseBound(s string) float64 {
	x, err := strconv.ParseFloat(strings.TrimPrefix(s, "+"), 64)
	if err != nil || math.IsInf(x, 0) {
		return math.NaN()
	}
	return x
}

// finish takes the sentinels out of the values and sorts them.
func (sc *mdbScale) finish() {
	sc.Values = slices.DeleteFunc(sc.Values, func(x float64) bool { return slices.Contains(sc.NotApplicable, x) })
	slices.Sort(sc.Values)
	slices.Sort(sc.NotApplicable)
	if sc.Kind == "discrete" && len(sc.Values) == 0 {
		sc.Kind = ""
	}
}

// bounds are the lowest and highest values of a known scale.
func (sc mdbScale) bounds() (lo, hi float64, ok bool) {
	switch sc.Kind {
	case "discrete":
		return sc.Values[0], sc.Values[len(sc.Values)-1], len(sc.Values) > 1
	case "interval":
		return sc.Min, sc.Max, !math.IsNaN(sc.Min) && !math.IsNaN(sc.Max) && sc.Max > sc.Min
	}
	return 0, 0, false
}

// mdbScore scores the responses of one benchmark (or of one item of a
// mixed one): Reader is binary or graded, How says in words what it does.
type mdbScore struct {
	Reader string
	How    string
	// score maps a finite response to a score in [0, 1], or says why the
	// response does not fit; missing is a sentinel for "not applicable".
	score func(x float64) (y float64, missing bool, why string)
}

// ResponseTypes are measurement-db's response types, in docs/data.md's order.
var ResponseTypes = []string{"binary", "error_presence", "likert_5", "likert_10", "ordinal", "fraction", "win_rate", "continuous_bounded", "continuous_unbounded", "nominal", "mixed"}

// scorer chooses how to score a benchmark's responses from its response
// type and scale; scoreMap is Options.ScoreMap (continuous_unbounded only).
func scorer(responseType string, sc mdbScale, scoreMap string) (mdbScore, error) {
	na := func(x float64) bool { return slices.Contains(sc.NotApplicable, x) }
	naNote := ""
	if len(sc.NotApplicable) > 0 {
		naNote = fmt.Sprintf("; %s (%s) missing", fmtValues(sc.NotApplicable), sc.notApplicableW)
	}
	rev := func(y float64) float64 {
		if sc.LowerIsBetter {
			return 1 - y
		}
		return y
	}
	revNote := ""
	if sc.LowerIsBetter {
		revNote = ", reversed (lower is better)"
	}
	if sc.Unordered && responseType != "mixed" {
		return mdbScore{}, fmt.Errorf("response_scale %q says its values are unordered: no value is a better answer, so there is no score to fit", limits.Clip(sc.Text))
	}
	switch responseType {
	case "", "binary", "error_presence":
		flip := responseType == "error_presence" || sc.LowerIsBetter
		how := "0/1 as given" + naNote
		switch {
		case responseType == "error_presence":
			how = "1 - x: an error (1) is a wrong answer" + naNote
		case flip:
			how = "1 - x" + revNote + naNote
		}
		return mdbScore{Reader: "binary", How: how, score: func(x float64) (float64, bool, string) {
			switch {
			case na(x):
				return 0, true, ""
			case x != 0 && x != 1:
				return 0, false, "is not 0 or 1"
			case flip:
				return 1 - x, false, ""
			}
			return x, false, ""
		}}, nil
	case "likert_5", "likert_10", "ordinal", "fraction", "win_rate", "continuous_bounded":
		lo, hi, ok := sc.bounds()
		switch {
		case ok:
		case sc.Kind == "discrete" || sc.Kind == "interval":
			return mdbScore{}, fmt.Errorf("response_scale %q gives no range to score %s by (its bounds are open or equal)", limits.Clip(sc.Text), responseType)
		case responseType == "likert_5":
			lo, hi = 1, 5
		case responseType == "likert_10":
			lo, hi = 1, 10
		case responseType == "ordinal":
			return mdbScore{}, fmt.Errorf("response_type ordinal needs the levels in response_scale (e.g. {0, 1, 2, 3}), and %q names none", limits.Clip(sc.Text))
		default:
			lo, hi = 0, 1
		}
		discrete := sc.Kind == "discrete" && len(sc.Values) > 1
		how := fmt.Sprintf("(x - %s) / %s%s", fmtNum(lo), fmtNum(hi-lo), revNote)
		if lo == 0 && hi == 1 {
			how = "as given" + revNote
		} else if lo == 0 {
			how = fmt.Sprintf("x / %s%s", fmtNum(hi), revNote)
		}
		return mdbScore{Reader: "graded", How: how + naNote, score: func(x float64) (float64, bool, string) {
			switch {
			case na(x):
				return 0, true, ""
			case discrete && !slices.Contains(sc.Values, x):
				return 0, false, "is not one of the levels " + fmtValues(sc.Values)
			case x < lo || x > hi:
				return 0, false, fmt.Sprintf("is outside [%s, %s]", fmtNum(lo), fmtNum(hi))
			}
			return rev((x - lo) / (hi - lo)), false, ""
		}}, nil
	case "continuous_unbounded":
		if scoreMap == "" {
			return mdbScore{}, model.FieldErrorf("ScoreMap", "response_type continuous_unbounded has no bounds to score by: state a mapping with {ScoreMap} LO:HI (linear onto [0, 1]) or {ScoreMap} '>=T' (1 at or above T, else 0)")
		}
		return scoreMapScorer(scoreMap, sc, rev, revNote, na, naNote)
	case "nominal":
		return mdbScore{}, fmt.Errorf("response_type nominal is unordered categories: no category is a better answer, so there is no score to fit")
	}
	return mdbScore{}, fmt.Errorf("response_type %q is not one jeirt knows (want %s)", limits.Clip(responseType), strings.Join(ResponseTypes, ", "))
}

// scoreMapScorer is the stated mapping of Options.ScoreMap: "LO:HI" (linear,
// a response outside an error) or a threshold ">=T", ">T", "<=T", "<T".
func scoreMapScorer(m string, sc mdbScale, rev func(float64) float64, revNote string, na func(float64) bool, naNote string) (mdbScore, error) {
	m = strings.TrimSpace(m)
	for _, op := range []string{">=", "<=", ">", "<"} {
		if rest, ok := strings.CutPrefix(m, op); ok {
			t, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			if err != nil || math.IsNaN(t) || math.IsInf(t, 0) {
				break
			}
			pass := map[string]func(x float64) bool{">=": func(x float64) bool { return x >= t }, "<=": func(x float64) bool { return x <= t },
				">": func(x float64) bool { return x > t }, "<": func(x float64) bool { return x < t }}[op]
			return mdbScore{Reader: "binary", How: fmt.Sprintf("1 when x %s %s, else 0 (stated)%s", op, fmtNum(t), naNote), score: func(x float64) (float64, bool, string) {
				if na(x) {
					return 0, true, ""
				}
				if pass(x) {
					return 1, false, ""
				}
				return 0, false, ""
			}}, nil
		}
	}
	a, b, ok := strings.Cut(m, ":")
	lo, e1 := strconv.ParseFloat(strings.TrimSpace(a), 64)
	hi, e2 := strconv.ParseFloat(strings.TrimSpace(b), 64)
	if !ok || e1 != nil || e2 != nil || !(hi > lo) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return mdbScore{}, model.FieldErrorf("ScoreMap", "{ScoreMap} %q: want LO:HI with LO < HI (e.g. 0:100) or a threshold >=T, >T, <=T or <T", limits.Clip(m))
	}
	return mdbScore{Reader: "graded", How: fmt.Sprintf("(x - %s) / %s (stated)%s%s", fmtNum(lo), fmtNum(hi-lo), revNote, naNote), score: func(x float64) (float64, bool, string) {
		switch {
		case na(x):
			return 0, true, ""
		case x < lo || x > hi:
			return 0, false, fmt.Sprintf("is outside the stated range [%s, %s]", fmtNum(lo), fmtNum(hi))
		}
		return rev((x - lo) / (hi - lo)), false, ""
	}}, nil
}

// mixedScale is the response_scale an item of a mixed benchmark gives in
// its grading_criterion ("" when it gives none).
func mixedScale(criterion string) string {
	var j struct {
		Scale json.RawMessage `json:"response_scale"`
	}
	if json.Unmarshal([]byte(criterion), &j) != nil || len(j.Scale) == 0 || string(j.Scale) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(j.Scale, &s) == nil {
		return s
	}
	return string(j.Scale)
}

// mixedType is the response type an item scale of a mixed benchmark reads as.
func mixedType(sc mdbScale) string {
	lo, hi, ok := sc.bounds()
	switch {
	case sc.Kind == "discrete" && ok && lo == 0 && hi == 1 && len(sc.Values) == 2:
		return "binary"
	case sc.Kind == "discrete":
		return "ordinal"
	case ok:
		return "continuous_bounded"
	}
	return "continuous_unbounded"
}

func fmtNum(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

func fmtValues(xs []float64) string {
	s := make([]string, len(xs))
	for k, x := range xs {
		s[k] = fmtNum(x)
	}
	return "{" + strings.Join(s, ", ") + "}"
}
