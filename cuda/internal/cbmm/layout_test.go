package cbmm

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/cuda/internal/cbmm/cbmmtest"
	"github.com/jeirt/jeirt/cuda/kernels"
	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/train/backend"
)

// TestCBMMLayout checks the concatenated layout cell by cell against the
// problems it was built from: every observed cell appears once item-major
// (with its global model and label) and once model-major (pointing back at
// it, in increasing item order).
func TestCBMMLayout(t *testing.T) {
	rs := cbmmtest.Problems(t, "2pl", 1, 11, 12, 13)
	probs := make([]*backend.CBMMProblem, len(rs))
	for k, r := range rs {
		probs[k] = backend.NewCBMMProblem(r)
	}
	l, err := newLayout(probs, 1)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for k, r := range rs {
		total += r.Len()
		if got, want := l.ItemBase[k+1]-l.ItemBase[k], int64(r.NumItems()); got != want {
			t.Fatalf("problem %d: %d global items, want %d", k, got, want)
		}
		if got, want := l.ModelBase[k+1]-l.ModelBase[k], int64(r.NumModels()); got != want {
			t.Fatalf("problem %d: %d global models, want %d", k, got, want)
		}
		// Every response of problem k, by (global model, global item) -> label.
		want := map[[2]int64]uint32{}
		for c := range r.Model {
			want[[2]int64{l.ModelBase[k] + int64(r.Model[c]), l.ItemBase[k] + int64(r.Item[c])}] = uint32(r.Label[c])
		}
		got := map[[2]int64]uint32{}
		for g := l.ItemBase[k]; g < l.ItemBase[k+1]; g++ {
			if l.ItemProb[g] != int32(k) {
				t.Fatalf("item %d: problem %d, want %d", g, l.ItemProb[g], k)
			}
			for c := l.ItemStart[g]; c < l.ItemStart[g+1]; c++ {
				i := int64(l.Cells[c] >> 1)
				if i < l.ModelBase[k] || i >= l.ModelBase[k+1] {
					t.Fatalf("item %d: cell of model %d outside problem %d's models", g, i, k)
				}
				got[[2]int64{i, g}] = l.Cells[c] & 1
			}
		}
		if len(got) != len(want) || len(got) != r.Len() {
			t.Fatalf("problem %d: %d distinct cells laid out, %d responses", k, len(got), len(want))
		}
		for key, y := range want {
			if got[key] != y {
				t.Fatalf("problem %d: cell %v has label %d, want %d", k, key, got[key], y)
			}
		}
	}
	if len(l.Cells) != total || len(l.ModelCell) != total || l.ModelStart[l.Nt] != int64(total) {
		t.Fatalf("%d cells item-major, %d model-major, want %d", len(l.Cells), len(l.ModelCell), total)
	}
	seen := make([]bool, total)
	for i := 0; i < l.Nt; i++ {
		prev := int64(-1)
		for e := l.ModelStart[i]; e < l.ModelStart[i+1]; e++ {
			c, g := l.ModelCell[e], int64(l.ModelItem[e])
			if seen[c] {
				t.Fatalf("cell %d referenced twice", c)
			}
			seen[c] = true
			if int(l.Cells[c]>>1) != i {
				t.Fatalf("model %d: entry %d points at a cell of model %d", i, e, l.Cells[c]>>1)
			}
			if c < uint32(l.ItemStart[g]) || c >= uint32(l.ItemStart[g+1]) {
				t.Fatalf("model %d: entry %d names item %d but the cell is not in it", i, e, g)
			}
			if g <= prev {
				t.Fatalf("model %d: items out of order (%d after %d)", i, g, prev)
			}
			prev = g
			if l.ModelProb[i] != l.ItemProb[g] {
				t.Fatalf("model %d (problem %d) has a cell of item %d (problem %d)", i, l.ModelProb[i], g, l.ItemProb[g])
			}
		}
	}
}

func TestCBMMLayoutErrors(t *testing.T) {
	p := &backend.CBMMProblem{N: 2, J: 1, ItemStart: []int32{0, 2}, Cells: []uint32{0<<1 | 1, 2 << 1}}
	if _, err := newLayout([]*backend.CBMMProblem{p}, 1); err == nil || err.Error() != "cuda: problem 0: item 0 has a cell of model 2, but there are 2 models" {
		t.Fatalf("err = %v", err)
	}
	p.Cells[1] = 1 << 1
	_, err := newLayout([]*backend.CBMMProblem{p}, kernels.MaxRank+1)
	var fe *model.FieldError
	if err == nil || err.Error() != "cuda: rank 9: the GPU kernels handle ranks 1 to 8 (use device cpu)" || !errors.As(err, &fe) || fe.Field != "Device" {
		t.Fatalf("err = %v", err)
	}
	p.ItemStart = []int32{0, 1}
	if _, err := newLayout([]*backend.CBMMProblem{p}, 1); err == nil || err.Error() != "cuda: problem 0: item offsets do not match its 2 cells" {
		t.Fatalf("err = %v", err)
	}
}

func TestPackedEntries(t *testing.T) {
	// The kernels pack the lower triangle row by row, then the right-hand side.
	packed := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9}
	G := make([]float64, 9)
	rest := unpackLower(G, packed, 3)
	if want := []float64{1, 2, 4, 2, 3, 5, 4, 5, 6}; !slices.Equal(G, want) {
		t.Fatalf("G = %v, want %v", G, want)
	}
	if !slices.Equal(rest, []float64{7, 8, 9}) {
		t.Fatalf("rest = %v", rest)
	}
	if itemEntries(1) != 5 || modelEntries(1) != 2 || itemEntries(2) != 9 || modelEntries(3) != 9 {
		t.Fatal("entry counts")
	}
	for _, c := range []struct {
		cells int64
		segs  int
		want  int
	}{{0, 0, 32}, {100, 10, 32}, {700, 10, 64}, {1000, 10, 128}, {4_000_000, 112, 256}} {
		if got := blockThreads(c.cells, c.segs); got != c.want {
			t.Errorf("blockThreads(%d, %d) = %d, want %d", c.cells, c.segs, got, c.want)
		}
	}
}

// TestBatchSize: batches over the kernels' grid and index limits are
// refused before anything is allocated.
func TestBatchSize(t *testing.T) {
	if err := checkBatchSize(10, 1<<31, 5); err == nil || !strings.Contains(err.Error(), "at most 2147483647 items or models") {
		t.Errorf("2³¹ items: %v", err)
	}
	if err := checkBatchSize(1<<32, 5, 5); err == nil {
		t.Error("2³² cells: no error")
	}
	if err := checkBatchSize(1<<32-1, 1<<31-1, 1<<31-1); err != nil {
		t.Errorf("at the limits: %v", err)
	}
}
