package estimate

import "math"

// FromDraws is the score on J items of a model whose posterior is given by
// equally weighted draws: P holds P(correct) of draw s on item j at
// P[s*J+j], and answered the observed fraction correct of the items
// answered (by index). As Scorer.Estimate's p-IRT: the answered items
// count as they are, each unanswered one its posterior mean, and the
// interval (at level) adds the variance over draws of the unanswered
// items' expected total and their own Bernoulli noise. It is how a JE-IRT
// map (whose P is not a logistic in a few θ) scores a model.
func FromDraws(P []float64, J int, answered map[int]float64, level float64) (score, lo, hi float64) {
	S := len(P) / J
	if S == 0 || J == 0 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	var obs float64
	for _, y := range answered {
		obs += y
	}
	var eu, eu2, ev float64
	for s := 0; s < S; s++ {
		var u, v float64
		for j, p := range P[s*J : (s+1)*J] {
			if _, ok := answered[j]; !ok {
				u += p
				v += p * (1 - p)
			}
		}
		eu, eu2, ev = eu+u/float64(S), eu2+u*u/float64(S), ev+v/float64(S)
	}
	N, n := float64(J), float64(len(answered))
	score = (obs + eu) / N
	if !(level > 0 && level < 1) {
		level = 0.95
	}
	h := math.Sqrt2 * math.Erfinv(level) * math.Sqrt(math.Max(eu2-eu*eu, 0)+ev) / N
	return score, math.Max(obs/N, score-h), math.Min((obs+N-n)/N, score+h)
}
