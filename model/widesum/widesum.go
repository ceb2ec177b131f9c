// Package widesum adds non-negative costs without overflowing (Sum).
package widesum

import "math"

// Sum adds non-negative numbers (costs) without overflowing: the sum is
// sum·scale, scale a power of two that stays 1 (the plain sum, bit for bit)
// until a term would carry the sum past the float64 range, and then grows
// by 2^64 at a time (exact, as a power of two is). A total beyond the range
// is then still known to be beyond it, and a mean is exact enough.
type Sum struct {
	sum, scale float64
}

// Add adds the cost x ≥ 0 (a NaN or +Inf makes the sum one, as + does).
func (s *Sum) Add(x float64) {
	if s.scale == 0 {
		s.scale = 1
	}
	if !(x <= math.MaxFloat64) { // NaN or +Inf: no scale holds it
		s.sum += x
		return
	}
	for {
		if y := s.sum + x/s.scale; !math.IsInf(y, 0) {
			s.sum = y
			return
		}
		s.sum /= 0x1p64
		s.scale *= 0x1p64
	}
}

// Total is the sum, +Inf when it is beyond the float64 range.
func (s Sum) Total() float64 { return s.sum * max(s.scale, 1) }

// Mean is the sum over n (finite whenever the costs were, n > 0).
func (s Sum) Mean(n int) float64 { return s.sum / float64(n) * max(s.scale, 1) }
