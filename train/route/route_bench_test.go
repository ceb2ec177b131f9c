package route

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/jeirt/jeirt/encoder"
	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/checkpoint"
	"github.com/jeirt/jeirt/model/read"
	"github.com/jeirt/jeirt/train/jeirt"
)

// routeBenchSetup returns a checkpoint (JEIRT_ROUTE_CHECKPOINT, or a random
// one of the quickstart's shape: hash encoder D = 384, hidden 768, d = 256,
// 134 models) with its encoder, and 10,000 queries: SWE-bench Verified
// problem statements, repeated, or synthetic sentences without ../shared.
func routeBenchSetup(b *testing.B) (*model.JEIRT, encoder.Encoder, []string) {
	var m *model.JEIRT
	var enc encoder.Encoder
	if dir := os.Getenv("JEIRT_ROUTE_CHECKPOINT"); dir != "" {
		ck, err := checkpoint.Load(dir)
		if err != nil {
			b.Fatal(err)
		}
		if enc, err = jeirt.OpenCheckpointEncoder(ck); err != nil {
			b.Fatal(err)
		}
		m = ck.Model
	} else {
		rng := rand.New(rand.NewPCG(1, 1))
		const D, H, d, N = 384, 768, 256, 134
		m = &model.JEIRT{InputDim: D, Hidden: H, Dim: d, W1: randVec(rng, H*D), C1: randVec(rng, H), W2: randVec(rng, d*H),
			C2: randVec(rng, d), M: randVec(rng, N*d)}
		for i := 0; i < N; i++ {
			m.Models = append(m.Models, "model")
		}
		enc, _ = encoder.NewHash(D)
	}
	var texts []string
	if root := routeSharedData(b); root != "" {
		t, err := read.Items(filepath.Join(root, "swebench-verified", "item_content.csv"))
		if err != nil {
			b.Fatal(err)
		}
		texts = t.Text
	} else {
		texts = []string{"Fix the off-by-one error in the pagination helper when the last page is empty."}
	}
	queries := make([]string, 10000)
	for k := range queries {
		queries[k] = texts[k%len(texts)]
	}
	return m, enc, queries
}

// route runs what `jeirt route` does after loading: encode, adapter, choice.
func routeTexts(b *testing.B, m *model.JEIRT, enc encoder.Encoder, rt *Router, texts []string) []Choice {
	vecs, err := enc.Encode(context.Background(), texts)
	if err != nil {
		b.Fatal(err)
	}
	x := make([]float32, 0, len(vecs)*m.InputDim)
	for _, v := range vecs {
		x = append(x, v...)
	}
	q := m.QuestionEmbeddings(x, len(texts))
	out := make([]Choice, len(texts))
	for k := range texts {
		out[k] = rt.Route(q[k*m.Dim : (k+1)*m.Dim])
	}
	return out
}

// BenchmarkRouteOneQuery is one query end to end after loading: hash
// encoding, the adapter and the choice among all models.
func BenchmarkRouteOneQuery(b *testing.B) {
	m, enc, queries := routeBenchSetup(b)
	rt := &Router{Model: m}
	b.ResetTimer()
	for k := 0; k < b.N; k++ {
		routeTexts(b, m, enc, rt, queries[k%len(queries):k%len(queries)+1])
	}
}

// BenchmarkRoute10k routes 10,000 queries per op and reports queries/s.
func BenchmarkRoute10k(b *testing.B) {
	m, enc, queries := routeBenchSetup(b)
	rt := &Router{Model: m}
	b.ResetTimer()
	for k := 0; k < b.N; k++ {
		routeTexts(b, m, enc, rt, queries)
	}
	b.ReportMetric(float64(b.N*len(queries))/b.Elapsed().Seconds(), "queries/s")
}

func randVec(rng *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for k := range v {
		v[k] = float32(rng.NormFloat64())
	}
	return v
}

// routeSharedData is ../shared/data next to the repository root, or "" when absent.
func routeSharedData(tb testing.TB) string {
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "..", "..", "shared", "data")
	if _, err := os.Stat(dir); err != nil {
		return ""
	}
	return dir
}
