package checkpoint

import (
	"math"
	"math/rand/v2"
	"testing"
)

// topicVectors draws n encoder vectors of width dim around two topic
// directions (the first and second coordinate axes) with small noise.
func topicVectors(n, dim int, noise float64, rng *rand.Rand) []float32 {
	x := make([]float32, n*dim)
	for j := 0; j < n; j++ {
		x[j*dim+j%2] = 1
		for k := 0; k < dim; k++ {
			x[j*dim+k] += float32(noise * rng.NormFloat64())
		}
	}
	return x
}

func TestDomainFlagsUnlikeQuestions(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const dim = 16
	x := topicVectors(600, dim, 0.05, rng)
	dom, err := NewDomain(x, dim, nil, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	if dom.FalseFlagRate != 0.01 || dom.Calibration != 600 || !(dom.Threshold > 0 && dom.Threshold < 0.5) {
		t.Fatalf("rate %v, %d calibration questions, threshold %v", dom.FalseFlagRate, dom.Calibration, dom.Threshold)
	}
	// Fresh questions on the training topics are in domain nearly always.
	fresh := topicVectors(200, dim, 0.05, rng)
	in := 0
	for k := 0; k < 200; k++ {
		if !dom.OutOfDomain(fresh[k*dim : (k+1)*dim]) {
			in++
		}
	}
	if in < 190 {
		t.Errorf("%d of 200 fresh on-topic questions in domain, want >= 190", in)
	}
	// A third topic, the opposite of a training topic and an empty encoding
	// are out of domain.
	third := make([]float32, dim)
	third[5] = 1
	opposite := make([]float32, dim)
	opposite[0] = -3
	for _, q := range [][]float32{third, opposite, make([]float32, dim)} {
		if !dom.OutOfDomain(q) {
			t.Errorf("%v: distance %.3f within threshold %.3f", q, dom.Distance(q), dom.Threshold)
		}
	}
	if got := dom.Distance(third); math.Abs(got-1) > 0.2 {
		t.Errorf("orthogonal topic at distance %.3f, want about 1", got)
	}
}

func TestDomainSampleAndRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	const dim = 4
	x := topicVectors(DomainSample+500, dim, 0.1, rng)
	dom, err := NewDomain(x, dim, nil, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	if dom.NumReference() != DomainSample || dom.Calibration != DomainSample+500 {
		t.Errorf("%d reference rows, %d calibration questions, want %d and %d", dom.NumReference(), dom.Calibration, DomainSample, DomainSample+500)
	}
	// Only the listed rows form the reference: rows of topic 0 alone make
	// topic 1 out of domain.
	var even []int
	for j := 0; j < 100; j += 2 {
		even = append(even, j)
	}
	half, err := NewDomain(x, dim, even, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !half.OutOfDomain(x[1*dim : 2*dim]) {
		t.Error("a topic-1 question is in the domain of topic-0 questions")
	}
	if half.OutOfDomain(x[100*dim : 101*dim]) {
		t.Error("a topic-0 question is out of the domain of topic-0 questions")
	}
	for _, bad := range []struct {
		x    []float32
		rows []int
		q    float64
	}{{x, nil, 1.5}, {x, nil, 1}, {x, nil, -0.1}, {x[:dim], nil, 0}, {x[:dim+1], nil, 0}, {x, []int{0, len(x)}, 0}} {
		if _, err := NewDomain(bad.x, dim, bad.rows, bad.q); err == nil {
			t.Errorf("NewDomain(%d values, rows %v, rate %v) accepted", len(bad.x), bad.rows, bad.q)
		}
	}
}

func TestDomainRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const dim = 8
	dom, err := NewDomain(topicVectors(50, dim, 0.1, rng), dim, nil, 0.05)
	if err != nil {
		t.Fatal(err)
	}
	b, err := dom.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParseDomain("domain.safetensors", b)
	if err != nil {
		t.Fatal(err)
	}
	if got.Threshold != dom.Threshold || got.FalseFlagRate != dom.FalseFlagRate || got.Calibration != 50 || got.Dim != dom.Dim || len(got.Vectors) != len(dom.Vectors) {
		t.Fatalf("round trip: %+v vs %+v", got, dom)
	}
	for k := range got.Vectors {
		if got.Vectors[k] != dom.Vectors[k] {
			t.Fatalf("reference value %d: %v vs %v", k, got.Vectors[k], dom.Vectors[k])
		}
	}
	if _, err := ParseDomain("x", b[:len(b)-4]); err == nil {
		t.Error("truncated domain file accepted")
	}
	if d, err := LoadDomain(t.TempDir()); d != nil || err != nil {
		t.Errorf("a folder without the file: %v, %v", d, err)
	}
}

// A file written before the false-flag rate was kept states the quantile
// alone: its rate is 1 − quantile.
func TestDomainOldFile(t *testing.T) {
	b := safetensorsBytes(`{"reference":{"dtype":"F32","shape":[1,2],"data_offsets":[0,8]},"__metadata__":{"threshold":"0.25","quantile":"0.99"}}`, 8)
	d, err := ParseDomain("domain.safetensors", b)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(d.FalseFlagRate-0.01) > 1e-12 || d.Threshold != 0.25 || d.Calibration != 0 {
		t.Errorf("old file: rate %v threshold %v calibration %d", d.FalseFlagRate, d.Threshold, d.Calibration)
	}
}

// The conformal threshold at rate α flags a new score exchangeable with
// the n calibration scores with probability in [α − 1/(n+1), α]: over
// 4,000 simulated calibration sets of similarities (n = 99, so the
// ⌈(n+1)(1−α)⌉ = 95th smallest), the flagged share of fresh draws is within
// three standard errors of the exact 5/100 for scores from a skewed law (an
// off-by-one rank would move it by 1/100), and at most 5/100 with ties (a
// discrete law).
func TestConformalThresholdRate(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	draws := map[string]func() float64{
		"skewed":   func() float64 { return 1 - math.Pow(rng.Float64(), 3) },
		"discrete": func() float64 { return float64(rng.IntN(40)) / 40 },
	}
	for name, draw := range draws {
		const trials, n, fresh = 4000, 99, 25
		flagged := 0
		scores := make([]float64, n)
		for range trials {
			for k := range scores {
				scores[k] = draw()
			}
			thr := ConformalThreshold(scores, 0.05)
			for range fresh {
				if draw() > thr {
					flagged++
				}
			}
		}
		rate := float64(flagged) / (trials * fresh)
		// With ties (discrete) a score equal to the threshold is not flagged,
		// so the rate may fall below α − 1/(n+1); never above α.
		lo := 0.05 - 1.0/(n+1)
		if name == "discrete" {
			lo = 0
		}
		// The flagged share given a threshold varies between calibration
		// sets (a Beta law of variance about α(1−α)/(n+2)) and between draws.
		se := math.Sqrt(0.05*0.95/(trials*fresh) + 0.05*0.95/((n+2)*trials))
		if rate > 0.05+3*se || rate < lo-3*se {
			t.Errorf("%s: flagged %.4f of fresh scores, want within [%.4f, 0.05] (± %.4f)", name, rate, lo, 3*se)
		}
		if name == "skewed" && math.Abs(rate-0.05) > 3*se {
			t.Errorf("skewed: flagged %.4f, want 0.05 ± %.4f (no ties: exactly 5/100 in expectation)", rate, 3*se)
		}
	}
	if got := ConformalThreshold([]float64{0.1, 0.2, 0.3}, 0.05); got != MaxDistance {
		t.Errorf("3 scores at 5%%: threshold %v, want %v (too few to flag anything)", got, MaxDistance)
	}
	if got := ConformalThreshold([]float64{0.4, 0.1, 0.3, 0.2}, 0.2); got != 0.4 {
		t.Errorf("4 scores at 20%%: threshold %v, want the 4th smallest, 0.4", got)
	}
}

// On simulated encoder vectors, fresh questions from the training
// distribution are flagged at the stated rate (here 5% and 10%, within
// three binomial standard errors of 1,500 fresh questions).
func TestDomainFalseFlagRate(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const dim, n, fresh = 24, 800, 1500
	for _, rate := range []float64{0.05, 0.10} {
		dom, err := NewDomain(topicVectors(n, dim, 0.3, rng), dim, nil, rate)
		if err != nil {
			t.Fatal(err)
		}
		x := topicVectors(fresh, dim, 0.3, rng)
		flagged := 0
		for k := 0; k < fresh; k++ {
			if dom.OutOfDomain(x[k*dim : (k+1)*dim]) {
				flagged++
			}
		}
		got := float64(flagged) / fresh
		if se := math.Sqrt(rate * (1 - rate) / fresh); math.Abs(got-rate) > 3*se+1.0/(n+1) {
			t.Errorf("rate %.2f: flagged %.4f of fresh questions (threshold %.4f)", rate, got, dom.Threshold)
		}
	}
}

// Short forms of the questions (here: the same topics with more noise, as
// a title says less than an issue) sit farther from the reference: a
// threshold calibrated on the full questions alone flags most new short
// questions of the same topics; calibrated on the short forms too it
// flags about the stated rate of them, and fewer full ones.
func TestDomainShortForms(t *testing.T) {
	const n, dim, rate = 400, 16, 0.1
	rng := rand.New(rand.NewPCG(7, 8))
	full := topicVectors(n, dim, 0.05, rng)
	short := make([]float32, len(full)) // the same questions, said in fewer words
	for k := range short {
		short[k] = full[k] + float32(0.25*rng.NormFloat64())
	}
	plain, err := NewDomain(full, dim, nil, rate)
	if err != nil {
		t.Fatal(err)
	}
	withShort, err := NewDomain(full, dim, nil, rate, short)
	if err != nil {
		t.Fatal(err)
	}
	if !(withShort.Threshold > plain.Threshold) || withShort.Calibration != n {
		t.Fatalf("thresholds: full only %.4f, with short forms %.4f (calibration %d)", plain.Threshold, withShort.Threshold, withShort.Calibration)
	}
	flagged := func(d *Domain, x []float32) float64 {
		k := 0
		for j := 0; j < len(x)/dim; j++ {
			if d.OutOfDomain(x[j*dim : (j+1)*dim]) {
				k++
			}
		}
		return float64(k) / float64(len(x)/dim)
	}
	newFull := topicVectors(2000, dim, 0.05, rng)
	newShort := make([]float32, len(newFull))
	for k := range newShort {
		newShort[k] = newFull[k] + float32(0.25*rng.NormFloat64())
	}
	if r := flagged(plain, newShort); r < 0.5 {
		t.Errorf("calibrated on full questions, it flags %.3f of new short ones; the test expects most", r)
	}
	// 2,000 new questions: a standard error of 0.7 points at 10%.
	if r := flagged(withShort, newShort); r > rate+0.03 || r < rate-0.05 {
		t.Errorf("calibrated on short forms too, it flags %.3f of new short questions, stated %v", r, rate)
	}
	if r := flagged(withShort, newFull); r > rate {
		t.Errorf("and %.3f of new full ones, stated at most %v", r, rate)
	}
	if _, err := NewDomain(full, dim, nil, rate, short[:dim]); err == nil {
		t.Error("a short form of another length accepted")
	}
}
