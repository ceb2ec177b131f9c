package read

import (
	"compress/gzip"
	"fmt"
	"math/rand/v2"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/read/internal/cell"
)

// Resolving while streaming gives what resolving once at the end gives, for
// every policy and layout, on files with many duplicates in random order.
func TestStreamingDuplicatesSame(t *testing.T) {
	defer func(v, w int) { cell.CompactMin, reserveMin = v, w }(cell.CompactMin, reserveMin)
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
			read := func(min, reserve int) (string, *Report) {
				cell.CompactMin, reserveMin = min, reserve
				r, rep, err := File(file, Options{Duplicates: policy, NoCache: true})
				if err != nil {
					return err.Error(), nil
				}
				return strings.Join(triples(r), " "), rep
			}
			want, wantRep := read(1<<30, 1<<30)
			for _, min := range []int{1, 7, 100} {
				// Room reserved from the bytes read (reserveMin 1, 50) or not.
				for _, reserve := range []int{1, 50, 1 << 30} {
					if got, rep := read(min, reserve); got != want || !reflect.DeepEqual(rep, wantRep) {
						t.Errorf("%s, %s, cell.CompactMin %d, reserveMin %d: got %.200s %+v\nwant %.200s %+v", file, policy, min, reserve, got, rep, want, wantRep)
					}
				}
			}
		}
	}
}

// A long file of 10^6 cells is read into room reserved once from its size,
// not grown by append: append's growth allocates the cells about four times
// over, and the outgrown copies, left to the collector, set the peak memory
// of a large read. The bytes allocated while reading are counted (they do
// not depend on the machine or the collector's timing); the cells read are
// checked one by one.
func TestLongReadReservesRoom(t *testing.T) {
	const nm, ni = 200, 5000
	var b strings.Builder
	b.WriteString("model,item,label\n")
	for m := range nm {
		for i := range ni {
			fmt.Fprintf(&b, "model-%d,item-%d,%d\n", m, i, (m*7+i*3)%5/3)
		}
	}
	inDir(t, map[string]string{"long.csv": b.String()})
	read := func(reserve int) (*model.Responses, uint64) {
		defer func(v int) { reserveMin = v }(reserveMin)
		reserveMin = reserve
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		r, _, err := File("long.csv", Options{NoCache: true})
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatal(err)
		}
		return r, after.TotalAlloc - before.TotalAlloc
	}
	cellBytes := uint64(nm * ni * (4 + 4 + 1))
	r, alloc := read(1 << 14)
	if r.Len() != nm*ni {
		t.Fatalf("%d cells, want %d", r.Len(), nm*ni)
	}
	for c := range r.Len() {
		m, i := int(r.Model[c]), int(r.Item[c])
		if r.Models[m] != fmt.Sprintf("model-%d", c/ni) || r.Items[i] != fmt.Sprintf("item-%d", c%ni) || int(r.Label[c]) != (c/ni*7+c%ni*3)%5/3 {
			t.Fatalf("cell %d: %s, %s, %d", c, r.Models[m], r.Items[i], r.Label[c])
		}
	}
	if room := cap(r.Label); room > nm*ni*5/4 {
		t.Errorf("room for %d cells reserved for %d", room, nm*ni)
	}
	_, grown := read(1 << 30)
	t.Logf("%d cells (%d bytes): %d bytes allocated with room reserved, %d grown by append", nm*ni, cellBytes, alloc, grown)
	if alloc > 2*cellBytes {
		t.Errorf("reading %d bytes of cells allocated %d bytes (%d without reserving)", cellBytes, alloc, grown)
	}
}
