package model

import (
	"strings"
	"testing"
)

// TestParsePrior: the grammar's forms, its round trip through String, and
// its errors (each naming the term at fault).
func TestParsePrior(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Prior
	}{
		{"", DefaultPrior},
		{"default", DefaultPrior},
		{"none", Prior{}},
		{"a=normal(1,0.5)", Prior{Theta: 1, D: 3, A: 0.5, AMean: 1}},
		{"theta=normal(0,2), d=normal(-1,4)", Prior{Theta: 2, D: 4, DMean: -1, A: 1, AMean: 1}},
		{"a=none,d=none", Prior{Theta: 1}},
		{"theta=none,a=none,d=none", Prior{}},
	} {
		got, err := ParsePrior(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParsePrior(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
			continue
		}
		back, err := ParsePrior(got.String())
		if err != nil || back != got {
			t.Errorf("round trip of %q through %q: %+v, %v", c.in, got.String(), back, err)
		}
	}
	if s := (Prior{}).String(); s != "none" {
		t.Errorf("Prior{}.String() = %q, want none", s)
	}
	if s := DefaultPrior.String(); s != "theta=normal(0,1),a=normal(1,1),d=normal(0,3)" {
		t.Errorf("DefaultPrior.String() = %q", s)
	}
	for in, want := range map[string]string{
		"flat":               `term "flat": want PARAM=normal(MEAN,SD)`,
		"a=normal(1,0)":      "the sd must be positive",
		"a=normal(1,-2)":     "the sd must be positive",
		"b=normal(0,1)":      `unknown parameter "b"`,
		"theta=normal(1,1)":  "the abilities' prior mean is 0",
		"d=cauchy(0,1)":      "want normal(MEAN,SD) or none",
		"a=normal(1,1,2)":    "want normal(MEAN,SD) or none",
		"a=normal(NaN,1)":    "the mean finite",
		"d=normal(0,+Inf)":   "the sd must be positive and finite",
		"theta=normal(0,1),": `term ""`,
	} {
		if _, err := ParsePrior(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParsePrior(%q): %v, want an error containing %q", in, err, want)
		}
	}
}

// TestParseRowPrior: add-model's prior on a new model's row, in the same
// grammar.
func TestParseRowPrior(t *testing.T) {
	for in, want := range map[string]struct {
		pop bool
		sd  float64
	}{"": {true, 0}, "default": {true, 0}, "population": {true, 0}, "l2": {false, 0}, "theta=normal(0,2)": {false, 2}} {
		pop, sd, err := ParseRowPrior(in)
		if err != nil || pop != want.pop || sd != want.sd {
			t.Errorf("ParseRowPrior(%q) = %v, %v, %v; want %v, %v", in, pop, sd, err, want.pop, want.sd)
		}
	}
	for _, in := range []string{"none", "a=normal(1,1)", "theta=none", "theta=normal(0,1),d=normal(0,1)"} {
		if _, _, err := ParseRowPrior(in); err == nil {
			t.Errorf("ParseRowPrior(%q): no error", in)
		}
	}
}
