package route

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzReadRouteCSV feeds route-eval curves (route.csv) to ReadRouteCSV, and
// so the CSV row reader every small CSV file goes through: every input gives
// points or a short error.
func FuzzReadRouteCSV(f *testing.F) {
	f.Add([]byte("policy,rule,param,accuracy,total_cost,mean_cost,items,fallbacks\njeirt,threshold,0.5,0.8,12,0.1,120,3\noracle,,,0.9,,,120,\n"))
	f.Add([]byte("policy,accuracy\n\"a\nb\",x\n"))
	p := filepath.Join(f.TempDir(), "route.csv")
	f.Fuzz(func(t *testing.T, raw []byte) {
		if err := os.WriteFile(p, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		pts, err := ReadRouteCSV(p)
		if err != nil {
			if len(err.Error()) > 4096 {
				t.Errorf("error of %d bytes", len(err.Error()))
			}
			return
		}
		if len(pts) == 0 {
			t.Fatal("no points and no error")
		}
	})
}
