package read

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeTemp(t *testing.T, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A pattern table whose freq values overflow, ask for 1e11 respondents or
// for more cells than a pattern table may expand to (the 24-byte table of
// 10,000,000 respondents took 17 s and 1 GB) is refused before anything is
// allocated; one just inside both limits is read.
func TestPatternFreqBounded(t *testing.T) {
	for _, body := range []string{
		"q1,q2,freq\n1,0,100000000000\n",
		"q1,q2,freq\n1,0,9223372036854775807\n0,1,9223372036854775807\n",
		"q1,q2,freq\n1,0,262144\n0,1,1\n",
		"q1,q2,freq\n1,0,10000000\n",
		"q1,q2,q3,q4,q5,q6,q7,q8,q9,q10,freq\n1,0,1,1,0,1,0,1,1,0,209716\n", // 2,097,160 cells
	} {
		p := writeTemp(t, "p.csv", []byte(body))
		_, _, err := File(p, Options{Format: "patterns", NoCache: true})
		if err == nil || !strings.Contains(err.Error(), "freq") {
			t.Errorf("%q: got %v, want a freq error", body, err)
		}
	}
	p := writeTemp(t, "p.csv", []byte("q1,q2,freq\n1,0,3\n0,1,2\n"))
	r, _, err := File(p, Options{Format: "patterns", NoCache: true})
	if err != nil || len(r.Models) != 5 {
		t.Fatalf("small table: %v", err)
	}
	p = writeTemp(t, "p.csv", []byte("q1,q2,q3,q4,q5,q6,q7,q8,freq\n1,0,1,1,1,0,1,1,262143\n0,1,0,,0,1,0,1,1\n"))
	r, _, err = File(p, Options{Format: "patterns", NoCache: true})
	if err != nil || len(r.Models) != 1<<18 || len(r.Label) != 8*(1<<18)-1 {
		t.Fatalf("table at the limits: %v", err)
	}
}

// Error messages quote at most a few hundred bytes of a huge header line
// (here inside a gzip) or a huge bad label.
func TestErrorsQuoteLittle(t *testing.T) {
	long := strings.Repeat("x", 1<<20)
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	w.Write([]byte(long + ",y\n1,2\n"))
	w.Close()
	label := "model,item,label\nm,i," + long + "\n"
	for name, b := range map[string][]byte{"h.csv.gz": gz.Bytes(), "l.csv": []byte(label)} {
		for _, format := range []string{"auto", "patterns", "long"} {
			_, _, err := File(writeTemp(t, name, b), Options{Format: format, NoCache: true})
			if err == nil {
				t.Errorf("%s %s: accepted", name, format)
				continue
			}
			if n := len(err.Error()); n > 2000 {
				t.Errorf("%s %s: error of %d bytes", name, format, n)
			}
		}
	}
}
