package cat

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkCATNext times one step of an adaptive test on the bank of a
// 1,000-model x 100,000-item fit (the prior from the 1,000 models'
// abilities): choosing the next item and updating θ with its answer. Each
// test runs to 50 items, then a new one starts (not timed); the reported
// time is per step. Run it on a quiet machine:
//
//	go test -run '^$' -bench BenchmarkCATNext -benchtime 2000x ./train/cat/
func BenchmarkCATNext(b *testing.B) {
	const models, items, perTest = 1000, 100_000, 50
	for _, tc := range []struct {
		name string
		rank int
		test Test
	}{
		{"fisher", 1, Test{Rule: Fisher}},
		{"fisher-eap", 1, Test{Rule: Fisher, Estimator: EAP}},
		{"kl", 1, Test{Rule: KL}},
		{"d-optimal-rank2", 2, Test{Rule: DOptimal}},
		{"random", 1, Test{Rule: Random}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			bank := randomBank(1, items, tc.rank, 1, tc.rank > 1)
			rng := rand.New(rand.NewPCG(2, 2))
			theta := make([]float64, models*tc.rank)
			for i := range theta {
				theta[i] = rng.NormFloat64()
			}
			prior, err := PopulationPrior(theta, tc.rank)
			if err != nil {
				b.Fatal(err)
			}
			pool, err := tc.test.Prepare(bank)
			if err != nil {
				b.Fatal(err)
			}
			var s *Session
			model := 0
			b.ResetTimer()
			for n := 0; n < b.N; n++ {
				if s == nil || s.NumAsked() == perTest {
					b.StopTimer()
					model = (model + 1) % models
					s, _ = pool.Start(prior, nil, uint64(model))
					b.StartTimer()
				}
				p, ok := s.Next()
				if !ok {
					b.Fatal("test over")
				}
				if err := s.Answer(p.Item, answerAt(bank, p.Item, theta[model*tc.rank:(model+1)*tc.rank], rng)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
