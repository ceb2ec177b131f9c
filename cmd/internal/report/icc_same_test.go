package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The ICC legend shows a long item id whole, and two items with the same
// curve share it, both named, instead of one hiding the other.
func TestICCSameCurveAndLongIDs(t *testing.T) {
	dir := writeFitFixture(t)
	long := "scikit-learn__scikit-learn-25747-with-a-long-suffix"
	items := `item,a,b,se_a,se_b,p_correct,n_obs,flag,a_lo,a_hi,b_lo,b_hi
` + long + `,2.5,0.3,,,0.5,6,,,,,
twin-of-the-first,2.5,0.3,,,0.5,6,,,,,
django__django-2,1.2,-0.4,,,0.33,6,,,,,
sympy__sympy-7,0.05,0.1,,,0.5,6,uninformative,,,,
astropy__astropy-3,0.8,1.1,,,0.67,6,,,,,
astropy__astropy-5,0.6,1.0,,,0.6,6,,,,,
`
	if err := os.WriteFile(filepath.Join(dir, "items.csv"), []byte(items), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := Build(Options{Fit: dir, Curves: 2, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	var icc string
	for _, f := range rep.Figures {
		if f.Name == "icc" {
			icc = string(f.SVG)
		}
	}
	if icc == "" {
		t.Fatalf("no icc figure (notes %v)", rep.Notes)
	}
	if !strings.Contains(icc, long+" ") {
		t.Errorf("the long id is not shown whole")
	}
	if !strings.Contains(icc, "twin-of-the-first  (the same curve)") {
		t.Errorf("the twin's curve is not named as the same")
	}
}
