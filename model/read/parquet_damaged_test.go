package read

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/jeirt/jeirt/internal/stress"
)

// Damaged Parquet files (the Parquet copies of the layout seeds with one to
// three bytes changed, 300 ways each by default and 3,000 with
// JEIRT_STRESS=full, fixed seed) give responses or an error, never a panic
// or a runaway allocation. Among the 3,000: a column with
// more values than its row group's rows (once an index out of range), a
// footer length of gigabytes (once a 4 GB allocation), and metadata that
// makes the Parquet library itself panic.
func TestReadParquetDamaged(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	failed, mutations := 0, 300
	if stress.Full() {
		mutations = 3000
	}
	for _, s := range layoutSeeds[:3] {
		src, dst := filepath.Join(dir, "s.csv"), filepath.Join(dir, "s.parquet")
		os.WriteFile(src, []byte(s.body), 0o644)
		if _, err := ConvertToParquet(src, dst, 0); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(dst)
		p := filepath.Join(dir, "m.parquet")
		for n := 0; n < mutations; n++ {
			m := append([]byte(nil), b...)
			for f := 0; f < 1+rng.IntN(3); f++ {
				m[rng.IntN(len(m))] = byte(rng.IntN(256))
			}
			os.WriteFile(p, m, 0o644)
			r, _, err := File(p, Options{NoCache: true})
			if err != nil {
				failed++
				continue
			}
			for c := range r.Label {
				if int(r.Model[c]) >= len(r.Models) || int(r.Item[c]) >= len(r.Items) || r.Label[c] > 1 {
					t.Fatalf("mutation %d: cell %d out of range", n, c)
				}
			}
		}
	}
	if failed == 0 {
		t.Error("no damaged file was refused: the mutations do not reach the reader")
	}
	t.Logf("%d of %d damaged files refused with an error", failed, 3*mutations)
}
