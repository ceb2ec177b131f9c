package read

import (
	"compress/gzip"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/model/read/internal/cell"
)

// Resolving while streaming gives what resolving once at the end gives, for
// every policy and layout, on files with many duplicates in random order.
func TestStreamingDuplicatesSame(t *testing.T) {
	defer func(v int) { cell.CompactMin = v }(cell.CompactMin)
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
				cell.CompactMin = min
				r, rep, err := File(file, Options{Duplicates: policy, NoCache: true})
				if err != nil {
					return err.Error(), nil
				}
				return strings.Join(triples(r), " "), rep
			}
			want, wantRep := read(1 << 30)
			for _, min := range []int{1, 7, 100} {
				if got, rep := read(min); got != want || !reflect.DeepEqual(rep, wantRep) {
					t.Errorf("%s, %s, cell.CompactMin %d: got %.200s %+v\nwant %.200s %+v", file, policy, min, got, rep, want, wantRep)
				}
			}
		}
	}
}
