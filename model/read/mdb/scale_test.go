package mdb

import (
	"math"
	"testing"
)

// Whatever a response_scale says, a response scored under any response
// type is a score in [0, 1], missing, or a reason it does not fit.
func FuzzScale(f *testing.F) {
	for _, s := range []string{"{0, 1}", "{1, 2, 3, 4, 5}", "[-18, 18] continuous", "k/N, N varies per item", "{0, 1, 2}; -1 = not applicable",
		`{"kind":"discrete","values":[-1,0,1],"meanings":{"-1":"N/A"}}`, `{"kind":"interval","min":0,"max":null}`, `{"kind":"interval","min":5,"max":5}`, "{}", ""} {
		f.Add(s, 3.0, "0:10")
	}
	f.Fuzz(func(t *testing.T, scale string, x float64, scoreMap string) {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return
		}
		sc := parseScale(scale)
		for _, rt := range append(ResponseTypes, mixedType(sc)) {
			s, err := scorer(rt, sc, scoreMap)
			if err != nil {
				continue
			}
			y, missing, why := s.score(x)
			if why == "" && !missing && !(y >= 0 && y <= 1) {
				t.Fatalf("%s, scale %q, map %q: %v scored %v", rt, scale, scoreMap, x, y)
			}
		}
	})
}

// The scales of measurement-db's two generations read to the same values.
func TestParseScale(t *testing.T) {
	for _, c := range []struct {
		text   string
		kind   string
		lo, hi float64
		na     int
		lower  bool
	}{
		{"{0, 1}", "discrete", 0, 1, 0, false},
		{`{"kind":"discrete","values":[0,1]}`, "discrete", 0, 1, 0, false},
		{"{1, 2, 3, 4, 5}", "discrete", 1, 5, 0, false},
		{"[-18, 18] continuous", "interval", -18, 18, 0, false},
		{`{"kind":"interval","min":-10,"max":10,"direction":"lower_is_better"}`, "interval", -10, 10, 0, true},
		{"k/N, N varies per item", "interval", 0, 1, 0, false},
		{"{-1, 0, 1, 2}; -1 = not applicable", "discrete", 0, 2, 1, false},
		{`{"kind":"discrete","values":[-1,0,1,2],"meanings":{"-1":"not applicable","2":"best"}}`, "discrete", 0, 2, 1, false},
	} {
		sc := parseScale(c.text)
		lo, hi, ok := sc.bounds()
		if sc.Kind != c.kind || !ok || lo != c.lo || hi != c.hi || len(sc.NotApplicable) != c.na || sc.LowerIsBetter != c.lower {
			t.Errorf("%s: %+v (bounds %v %v %v)", c.text, sc, lo, hi, ok)
		}
	}
	if sc := parseScale(`{"kind":"interval","min":0,"max":null}`); sc.Kind != "interval" {
		t.Errorf("an open interval: %+v", sc)
	} else if _, _, ok := sc.bounds(); ok {
		t.Errorf("an open interval has no bounds: %+v", sc)
	}
}
