package route

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func FuzzReadCosts(f *testing.F) {
	f.Add([]byte("model,cost\na,1.5\nb,0\n"))
	f.Add([]byte("model,cost\na,NaN\n"))
	f.Add([]byte("model,cost\na,1\na,2\n"))
	f.Add([]byte("a,\"1\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		costs, err := readCosts("costs.csv", bytes.NewReader(body), []string{"a", "b"})
		if err != nil {
			if len(err.Error()) > 4096 {
				t.Errorf("error of %d bytes", len(err.Error()))
			}
			return
		}
		for _, c := range costs {
			if !math.IsNaN(c) && (c < 0 || math.IsInf(c, 0)) {
				t.Fatalf("cost %v accepted", c)
			}
		}
	})
}

func FuzzReadQueries(f *testing.F) {
	f.Add([]byte("What is 2+2?\n\nName a prime.\n"))
	f.Add([]byte(`{"id":"q1","text":"x"}` + "\n" + `{"id":7,"text":""}` + "\n"))
	f.Add([]byte(`{"id":`))
	f.Fuzz(func(t *testing.T, body []byte) {
		qf, err := ReadQueries("q.txt", bytes.NewReader(body))
		if err != nil {
			if len(err.Error()) > 4096 {
				t.Errorf("error of %d bytes", len(err.Error()))
			}
			return
		}
		for _, q := range qf.Queries {
			if strings.TrimSpace(q.Text) == "" {
				t.Fatalf("query %v has empty text", q)
			}
		}
	})
}

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
