package eval

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/machine"
)

// Two models, four items; item vectors place items 0,1 together and 2,3 together.
func baselineFixture() (trainR, valR, testR *model.Responses, feat []float32) {
	names := []string{"a", "b"}
	items := []string{"i0", "i1", "i2", "i3"}
	mk := func(m, i []int32, l []uint8) *model.Responses {
		return &model.Responses{Models: names, Items: items, Model: m, Item: i, Label: l}
	}
	// model a: right on i1, i2 wrong, i3 right; model b: i0 right, i1 right, i2 wrong.
	trainR = mk([]int32{0, 0, 0, 1, 1, 1}, []int32{1, 2, 3, 0, 1, 2}, []uint8{1, 0, 1, 1, 1, 0})
	valR = mk([]int32{1}, []int32{3}, []uint8{0})
	testR = mk([]int32{0}, []int32{0}, []uint8{1})
	feat = []float32{1, 0, 0.9, 0.1, 0, 1, 0.2, 1}
	return
}

func TestSimpleBaselines(t *testing.T) {
	trainR, _, testR, _ := baselineFixture()
	mean := 4.0 / 6
	if p := MajorityPredict(trainR, testR); p[0] != mean {
		t.Errorf("majority %v, want %v", p[0], mean)
	}
	// model a: 2 of 3 right, shrunk (2 + 4/6)/(3 + 1).
	if p := ModelMeanPredict(trainR, testR); math.Abs(p[0]-(2+mean)/4) > 1e-12 {
		t.Errorf("model mean %v, want %v", p[0], (2+mean)/4)
	}
	// item 0: 1 of 1 right, shrunk (1 + 4/6)/2.
	if p := ItemMeanPredict(trainR, testR); math.Abs(p[0]-(1+mean)/2) > 1e-12 {
		t.Errorf("item mean %v, want %v", p[0], (1+mean)/2)
	}
	// An item without training cells falls back to the model mean.
	unseen := &model.Responses{Models: trainR.Models, Items: append(trainR.Items, "i4"), Model: []int32{1}, Item: []int32{4}, Label: []uint8{1}}
	tr := &model.Responses{Models: trainR.Models, Items: unseen.Items, Model: trainR.Model, Item: trainR.Item, Label: trainR.Label}
	if p, q := ItemMeanPredict(tr, unseen), ModelMeanPredict(tr, unseen); p[0] != q[0] {
		t.Errorf("unseen item: item mean %v, model mean %v", p[0], q[0])
	}
}

func TestKNNBaseline(t *testing.T) {
	trainR, valR, testR, feat := baselineFixture()
	p, k, err := KNN{Features: feat, Dim: 2}.Fit(context.Background(), trainR, valR, testR)
	if err != nil {
		t.Fatal(err)
	}
	// Validation: model b on i3; neighbours of i3 by cosine: i2 (b wrong), then i1, i0 (b right).
	// k = 1 predicts (0 + p_b)/2 < 0.5: correct (label 0), and has the lowest log loss among accurate k.
	if k != 1 {
		t.Errorf("k = %d, want 1", k)
	}
	// Test: model a on i0; nearest is i1, which a got right: (1 + p_a)/2.
	pa := (2 + 4.0/6) / 4
	if want := (1 + pa) / 2; math.Abs(p[0]-want) > 1e-12 {
		t.Errorf("knn p = %v, want %v", p[0], want)
	}
}

// knnReference is KNN's neighbour counting done the slow way: every
// similarity in float64, every answered question of the model sorted.
func knnReference(trainR, q *model.Responses, feat []float32, D int) []knnSums {
	out := make([]knnSums, q.Len())
	by := trainR.ByModel()
	for c := range q.Label {
		j := int(q.Item[c])
		var nb []knnNeighbour
		for _, tc := range by.Row(int(q.Model[c])) {
			j2 := int(trainR.Item[tc])
			var dot, n1, n2 float64
			for d := 0; d < D; d++ {
				a, b := float64(feat[j*D+d]), float64(feat[j2*D+d])
				dot, n1, n2 = dot+a*b, n1+a*a, n2+b*b
			}
			nb = append(nb, knnNeighbour{float32(dot / math.Sqrt(n1*n2)), int32(j2), trainR.Label[tc]})
		}
		sort.Slice(nb, func(a, b int) bool { return nearer(nb[a], nb[b]) })
		for ki, k := range KNNCandidates {
			for _, n := range nb[:min(k, len(nb))] {
				out[c].right[ki] += n.label
			}
			out[c].found[ki] = uint8(min(k, len(nb)))
		}
	}
	return out
}

// Both ways of computing the neighbours (per model on sparse data, per item
// on dense data) give exactly the neighbours of the definition: the k
// questions the model answered in training most similar to the asked one,
// ties to the lower item. The vectors have four entries of ±1/2, so every
// similarity is a multiple of 1/4 computed exactly, with many ties.
func TestKNNNeighboursBothWays(t *testing.T) {
	for _, c := range []struct {
		name, way     string
		models, items int
		density       float64
		sparseRows    int // models answering a tenth of the density
	}{{"sparse", "per model", 60, 400, 0.08, 0}, {"dense", "per item", 25, 90, 0.9, 0},
		// Over 400 items the per-item way walks the 400 nearest; the
		// models with sparse rows find fewer than 100 there and scan.
		{"dense with sparse rows", "per item", 30, 600, 0.9, 3}} {
		t.Run(c.name, func(t *testing.T) {
			const D = 16
			rng := rand.New(rand.NewPCG(7, uint64(c.models)))
			feat := make([]float32, c.items*D)
			for j := 0; j < c.items; j++ {
				for _, d := range rng.Perm(D)[:4] {
					feat[j*D+d] = float32(rng.IntN(2))*1 - 0.5
				}
			}
			r := &model.Responses{}
			for i := 0; i < c.models; i++ {
				r.Models = append(r.Models, fmt.Sprint("m", i))
			}
			for j := 0; j < c.items; j++ {
				r.Items = append(r.Items, fmt.Sprint("i", j))
			}
			for i := 0; i < c.models; i++ {
				density := c.density
				if i < c.sparseRows {
					density /= 10
				}
				for j := 0; j < c.items; j++ {
					if rng.Float64() < density {
						r.Model, r.Item = append(r.Model, int32(i)), append(r.Item, int32(j))
						r.Label = append(r.Label, uint8(rng.IntN(2)))
					}
				}
			}
			trainR, valR, testR, err := Split(r, SplitOptions{Val: 0.1, Test: 0.2, Seed: 3, By: "cell"})
			if err != nil {
				t.Fatal(err)
			}
			kn := KNN{Features: feat, Dim: D}
			got, way, err := kn.neighbourSums(context.Background(), trainR, []*model.Responses{valR, testR})
			if err != nil || way != c.way {
				t.Fatalf("%s, %v; want the %s way", way, err, c.way)
			}
			for s, q := range []*model.Responses{valR, testR} {
				want := knnReference(trainR, q, feat, D)
				for k := range want {
					if got[s][k] != want[k] {
						t.Fatalf("set %d cell %d (model %d, item %d): %+v, want %+v", s, k, q.Model[k], q.Item[k], got[s][k], want[k])
					}
				}
			}
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			if _, _, err := kn.Fit(ctx, trainR, valR, testR); !errors.Is(err, context.Canceled) {
				t.Errorf("cancelled: %v", err)
			}
			// A memory budget below the dense way's tables refuses them,
			// with the estimate, before they are made.
			kn.MaxMemory = 1000
			_, _, err = kn.Fit(context.Background(), trainR, valR, testR)
			if c.way == "per model" {
				if err != nil {
					t.Errorf("the per-model way under a budget of 1000 B: %v", err)
				}
				return
			}
			N, cand := int64(trainR.NumModels()), int64(0)
			seen := map[int32]bool{}
			for _, j := range trainR.Item {
				if !seen[j] {
					seen[j], cand = true, cand+1
				}
			}
			need := N*int64(c.items) + 4*256*cand + 4*(cand+256)*D
			var fe *model.FieldError
			if want := fmt.Sprintf("the kNN baseline (a table of the training labels of %d models x %d items, and similarities of 256 questions at a time against %d) would need about %s of memory, more than 1000 B (max-memory)",
				N, c.items, cand, machine.Bytes(need)); err == nil || !strings.HasPrefix(err.Error(), want) || !errors.As(err, &fe) || fe.Field != "MaxMemory" {
				t.Errorf("under a budget of 1000 B: %v\nwant %s", err, want)
			}
		})
	}
}
