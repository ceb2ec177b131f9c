package irtstat

import "testing"

// BenchmarkDiagnose times the item diagnostics of a fit of 1,000 models x
// 10,000 items (10⁷ cells), which every irt fit computes after the fit.
//
//	go test -run '^$' -bench BenchmarkDiagnose -benchtime 3x ./train/irtstat/
func BenchmarkDiagnose(b *testing.B) {
	r, truth := simulate2PL(1, 1000, 10_000, 0, nil)
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		Diagnose(r, truth, 0)
	}
}
