package read

import (
	"compress/gzip"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/model"
)

// A stream of repeated rows is resolved as it comes in: the cells held stay
// within twice the distinct cells (or compactMin), not the rows read.
func TestCellSinkBound(t *testing.T) {
	defer func(v int) { compactMin = v }(compactMin)
	compactMin = 1000
	c := newCellSink(false)
	most := 0
	const distinct, rows = 300, 1_000_000
	for k := 0; k < rows; k++ {
		c.add(int32(k%3), int32(k%distinct/3), uint8(k/7%2), k+2)
		most = max(most, c.held())
	}
	if most > max(compactMin, 2*distinct) {
		t.Errorf("held %d cells for %d distinct cells in %d rows", most, distinct, rows)
	}
	r := &model.Responses{Models: []string{"a", "b", "c"}, Items: make([]string, distinct/3)}
	rep := &Report{}
	if err := c.finish(r, "first", "x", rep); err != nil {
		t.Fatal(err)
	}
	if r.Len() != distinct || rep.DuplicateCells != distinct || rep.DuplicateRows != rows-distinct {
		t.Errorf("%d cells, report %+v", r.Len(), rep)
	}
	t.Logf("%d rows, %d distinct cells: at most %d cells held", rows, distinct, most)
}

// Resolving while streaming gives what resolving once at the end gives, for
// every policy and layout, on files with many duplicates in random order.
func TestStreamingDuplicatesSame(t *testing.T) {
	defer func(v int) { compactMin = v }(compactMin)
	rng := rand.New(rand.NewPCG(3, 4))
	var long, wide strings.Builder
	long.WriteString("model,item,label\n")
	wide.WriteString("model,q0,q1,q2,q3,q4\n")
	for k := 0; k < 3000; k++ {
		fmt.Fprintf(&long, "m%d,q%d,%d\n", rng.IntN(7), rng.IntN(40), rng.IntN(2))
		fmt.Fprintf(&wide, "m%d", rng.IntN(9))
		for range 5 {
			fmt.Fprintf(&wide, ",%d", rng.IntN(2))
		}
		wide.WriteString("\n")
	}
	var gz strings.Builder
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(long.String()))
	zw.Close()
	inDir(t, map[string]string{"long.csv": long.String(), "wide.csv": wide.String(), "long.csv.gz": gz.String(),
		"items.csv":   "item,m0,m1,m2\nq1,1,0,1\nq1,0,0,1\nq2,1,1,1\nq1,1,,0\n",
		"unnamed.csv": ",q0,q1,q2,q3,q4,q0\nm0,1,0,1,1,1,0\nm1,0,0,1,0,1,1\nm0,1,1,1,0,0,0\n"})
	for _, file := range []string{"long.csv", "wide.csv", "long.csv.gz", "items.csv", "unnamed.csv"} {
		for _, policy := range []string{"majority", "first", "error"} {
			read := func(min int) (string, *Report) {
				compactMin = min
				r, rep, err := File(file, Options{Duplicates: policy, NoCache: true})
				if err != nil {
					return err.Error(), nil
				}
				return strings.Join(triples(r), " "), rep
			}
			want, wantRep := read(1 << 30)
			for _, min := range []int{1, 7, 100} {
				if got, rep := read(min); got != want || !reflect.DeepEqual(rep, wantRep) {
					t.Errorf("%s, %s, compactMin %d: got %.200s %+v\nwant %.200s %+v", file, policy, min, got, rep, want, wantRep)
				}
			}
		}
	}
}
