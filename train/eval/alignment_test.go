package eval

import (
	"math"
	"testing"
)

// Three training benchmarks along e1, e2 and e1+e2 and a held-out one along
// −e1 (with lengths that must not matter): the held-out mean direction is
// (−1, 0), the training mean (after unit-normalising each item) is
// ((1 + 0 + 1/√2)/3, (0 + 1 + 1/√2)/3).
func TestBenchmarkAlignment(t *testing.T) {
	q := []float32{
		2, 0, 5, 0, // a
		0, 1, 0, 3, // b
		1, 1, 4, 4, // c
		-7, 0, -0.5, 0, // held
	}
	group := []string{"a", "a", "b", "b", "c", "c", "h", "h"}
	al := BenchmarkAlignment(q, 2, group, []string{"h"})
	s := 1 / math.Sqrt2
	tx, ty := (1+0+s)/3, (0+1+s)/3
	want := -tx / math.Hypot(tx, ty)
	if math.Abs(al.Cosine-want) > 1e-6 {
		t.Errorf("cosine %v, want %v", al.Cosine, want)
	}
	if math.Abs(al.PerBenchmark["a"]+1) > 1e-6 || math.Abs(al.PerBenchmark["b"]) > 1e-6 || math.Abs(al.PerBenchmark["c"]+s) > 1e-6 {
		t.Errorf("per benchmark %v", al.PerBenchmark)
	}
	if al.Nearest != "b" {
		t.Errorf("nearest %q, want b", al.Nearest)
	}
}
