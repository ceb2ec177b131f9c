package model

import "testing"

func TestParseFamily(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Family
	}{{"", TwoPL}, {"1pl", OnePL}, {"2pl", TwoPL}, {"3pl", ThreePL}} {
		got, err := ParseFamily(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseFamily(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"4pl", "2PL", " 2pl", "rasch", "2pl "} {
		got, err := ParseFamily(bad)
		if err == nil || got != "" {
			t.Errorf("ParseFamily(%q) = %q, %v; want an error", bad, got, err)
			continue
		}
		if want := `model "` + bad + `": want 1pl, 2pl or 3pl`; err.Error() != want {
			t.Errorf("ParseFamily(%q): error %q, want %q", bad, err, want)
		}
	}
}

func TestFamilyRoundTrip(t *testing.T) {
	if len(Families) != 3 || Families[0] != OnePL || Families[1] != TwoPL || Families[2] != ThreePL {
		t.Fatalf("Families = %v", Families)
	}
	for _, f := range Families {
		got, err := ParseFamily(f.String())
		if err != nil || got != f {
			t.Errorf("ParseFamily(%q.String()) = %q, %v", f, got, err)
		}
	}
	if got := FamilyNames(); got != "1pl, 2pl or 3pl" {
		t.Errorf("FamilyNames() = %q", got)
	}
	if got := Family("").String(); got != "" {
		t.Errorf(`Family("").String() = %q, want ""`, got)
	}
}

func TestFamilyNesting(t *testing.T) {
	var chain []Family
	for f, ok := ThreePL, true; ok; f, ok = f.Nested() {
		chain = append(chain, f)
		if len(chain) > 5 {
			t.Fatalf("Nested does not end: %v", chain)
		}
	}
	if want := []Family{ThreePL, TwoPL, OnePL}; len(chain) != 3 || chain[0] != want[0] || chain[1] != want[1] || chain[2] != want[2] {
		t.Errorf("nesting chain %v, want %v", chain, want)
	}
	if n, ok := Family("").Nested(); !ok || n != OnePL {
		t.Errorf(`Family("").Nested() = %q, %v; want 1pl (the empty family is the 2PL)`, n, ok)
	}
	if n, ok := Family("4pl").Nested(); ok || n != "" {
		t.Errorf(`Family("4pl").Nested() = %q, %v; want none`, n, ok)
	}
}

func TestFamilyPredicates(t *testing.T) {
	for _, tc := range []struct {
		f                 Family
		asymptote, common bool
	}{{OnePL, false, true}, {TwoPL, false, false}, {ThreePL, true, false}, {"", false, false}} {
		if got := tc.f.HasAsymptote(); got != tc.asymptote {
			t.Errorf("%q.HasAsymptote() = %v", tc.f, got)
		}
		if got := tc.f.CommonSlope(); got != tc.common {
			t.Errorf("%q.CommonSlope() = %v", tc.f, got)
		}
	}
}
