package route

import (
	"io"
	"math"
	"path/filepath"
	"testing"

	"github.com/jeirt/jeirt/model/fileio"
)

// The route CSV read back gives the points written (Chosen aside; numbers at
// the six significant digits the file keeps).
func TestRouteCSVRoundTrip(t *testing.T) {
	nan := math.NaN()
	pts := []RoutePoint{
		{Policy: "best-single", Rule: "best-single", Param: nan, Accuracy: 0.5, TotalCost: 12, MeanCost: 6, Items: 2, Chosen: "a"},
		{Policy: "router", Rule: "margin", Param: math.Inf(1), Accuracy: 0.75, TotalCost: nan, MeanCost: nan, Items: 2},
		{Policy: "router", Rule: "min-p", Param: 0.6, Accuracy: 0.123456, TotalCost: 3, MeanCost: 1.5, Items: 2, Fallbacks: 1},
	}
	path := filepath.Join(t.TempDir(), "curve.csv")
	if err := fileio.WriteFileAtomic(path, func(w io.Writer) error { return WriteRouteCSV(w, pts) }); err != nil {
		t.Fatal(err)
	}
	got, err := ReadRouteCSV(path)
	if err != nil {
		t.Fatal(err)
	}
	same := func(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }
	for k, p := range pts {
		g := got[k]
		if g.Policy != p.Policy || g.Rule != p.Rule || !same(g.Param, p.Param) || !same(g.Accuracy, p.Accuracy) ||
			!same(g.TotalCost, p.TotalCost) || !same(g.MeanCost, p.MeanCost) || g.Items != p.Items || g.Fallbacks != p.Fallbacks {
			t.Errorf("row %d: read %+v, wrote %+v", k, g, p)
		}
	}
}
