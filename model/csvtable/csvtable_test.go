package csvtable

import (
	"math"
	"os"
	"path/filepath"
	"testing"
)

// Read gives each record by column name, past a byte-order mark and
// spaces, and the first problem of a row names the file, line and column.
func TestRead(t *testing.T) {
	p := filepath.Join(t.TempDir(), "items.csv")
	if err := os.WriteFile(p, []byte("\ufeffitem, a ,n\nq1,1.5,3\nq2,,x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var items []string
	var a []float64
	var errs []string
	err := Read(p, func(r Row) error {
		items = append(items, r.Str("item"))
		a = append(a, r.OptNum("a"))
		r.Int("n")
		if r.Err() != nil {
			errs = append(errs, r.Err().Error())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 2 || items[0] != "q1" || items[1] != "q2" || a[0] != 1.5 || !math.IsNaN(a[1]) {
		t.Errorf("items %q, a %v", items, a)
	}
	if want := p + `:3: column "n": "x" is not a number`; len(errs) != 1 || errs[0] != want {
		t.Errorf("errors %q, want %q", errs, want)
	}
	// A missing required column is the row's error, and stays the first.
	errs = nil
	if err := Read(p, func(r Row) error {
		r.Str("b")
		r.Int("n")
		errs = append(errs, r.Err().Error())
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if want := p + `: no column "b"`; len(errs) != 2 || errs[0] != want || errs[1] != want {
		t.Errorf("errors %q, want %q twice", errs, want)
	}
}
