package routefile

import (
	"bytes"
	"math"
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
