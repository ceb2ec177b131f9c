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
	dom, err := NewDomain(x, dim, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	if dom.Quantile != DefaultDomainQuantile || !(dom.Threshold > 0 && dom.Threshold < 0.5) {
		t.Fatalf("quantile %v threshold %v", dom.Quantile, dom.Threshold)
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
	if dom.NumReference() != DomainSample {
		t.Errorf("%d reference rows, want %d", dom.NumReference(), DomainSample)
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
	}{{x, nil, 1.5}, {x[:dim], nil, 0}, {x[:dim+1], nil, 0}, {x, []int{0, len(x)}, 0}} {
		if _, err := NewDomain(bad.x, dim, bad.rows, bad.q); err == nil {
			t.Errorf("NewDomain(%d values, rows %v, quantile %v) accepted", len(bad.x), bad.rows, bad.q)
		}
	}
}

func TestDomainRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const dim = 8
	dom, err := NewDomain(topicVectors(50, dim, 0.1, rng), dim, nil, 0.95)
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
	if got.Threshold != dom.Threshold || got.Quantile != dom.Quantile || got.Dim != dom.Dim || len(got.Vectors) != len(dom.Vectors) {
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
