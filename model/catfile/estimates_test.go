package catfile

import (
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/fileio"
)

// TestEstimatesRoundTrip: estimates.csv and categories.csv read back
// exactly, NaN (undefined) included.
func TestEstimatesRoundTrip(t *testing.T) {
	for _, rank := range []int{1, 2} {
		for _, withCat := range []bool{false, true} {
			rows := []Estimate{
				{Model: "m,1", NAnswered: 100, Observed: 0.71, Score: 0.6912345678901234, Lo: 0.65, Hi: 0.7300000000000001},
				{Model: "m2", NAnswered: 0, Observed: math.NaN(), Score: 1.0 / 3, Lo: 0, Hi: 1},
			}
			for k := range rows {
				rows[k].Theta, rows[k].SE = make([]float64, rank), make([]float64, rank)
				for d := 0; d < rank; d++ {
					rows[k].Theta[d], rows[k].SE[d] = -1.25+float64(k+d)/7, 0.1/float64(k+d+1)
				}
				if withCat {
					rows[k].Category = "cat " + strconv.Itoa(k)
				}
			}
			path := filepath.Join(t.TempDir(), "estimates.csv")
			if err := fileio.WriteFileAtomic(path, func(w io.Writer) error { return WriteEstimates(w, rank, withCat, rows) }); err != nil {
				t.Fatal(err)
			}
			got, err := ReadEstimates(path, rank)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(rows) {
				t.Fatalf("read %d rows of %d", len(got), len(rows))
			}
			for k := range rows {
				a, b := rows[k], got[k]
				same := func(x, y float64) bool { return x == y || (math.IsNaN(x) && math.IsNaN(y)) }
				if a.Model != b.Model || a.Category != b.Category || a.NAnswered != b.NAnswered || !same(a.Observed, b.Observed) ||
					a.Score != b.Score || a.Lo != b.Lo || a.Hi != b.Hi || !slices.Equal(a.Theta, b.Theta) || !slices.Equal(a.SE, b.SE) {
					t.Errorf("rank %d, category %v: row %d %+v read back as %+v", rank, withCat, k, a, b)
				}
			}
		}
	}
}

// TestWeightsRoundTrip: the weights irt select writes are read back
// exactly, and a non-positive weight is refused with the file's name.
func TestWeightsRoundTrip(t *testing.T) {
	fit := &model.IRT{Rank: 1, Items: []string{"a", "b", "c"}, A: []float64{1, 2, 0.5}, B: []float64{0, -1, 1}}
	path := filepath.Join(t.TempDir(), "sel.csv")
	w := []float64{0.1, 0.6000000000000001, 0.3}
	if err := fileio.WriteFileAtomic(path, func(out io.Writer) error { return WriteWeights(out, fit, []int{2, 0, 1}, w) }); err != nil {
		t.Fatal(err)
	}
	got, err := ReadWeights(path)
	if err != nil {
		t.Fatal(err)
	}
	if got["c"] != w[0] || got["a"] != w[1] || got["b"] != w[2] || len(got) != 3 {
		t.Errorf("weights %v", got)
	}
	bad := filepath.Join(t.TempDir(), "bad.csv")
	os.WriteFile(bad, []byte("item,weight\na,0\n"), 0o644)
	if _, err := ReadWeights(bad); err == nil || !strings.Contains(err.Error(), "bad.csv") {
		t.Errorf("weight 0: %v", err)
	}
}
