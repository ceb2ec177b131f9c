package encoder

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/jeirt/jeirt/model/checkpoint"
	"gonum.org/v1/gonum/mat"
)

func TestTFIDFTokens(t *testing.T) {
	// sklearn: re.findall(r"(?u)\b\w\w+\b", text.lower())
	got := tfidfTokens("Hello, World! a b_c 3d x y2 Über-Straße naïve")
	want := []string{"hello", "world", "b_c", "3d", "y2", "über", "straße", "naïve"}
	if !slices.Equal(got, want) {
		t.Errorf("tokens %q, want %q", got, want)
	}
	terms, counts := tfidfTerms("the cat saw the cat")
	wantTerms := []string{"the", "cat", "the cat", "saw", "cat saw", "saw the"}
	wantCounts := []int{2, 2, 2, 1, 1, 1}
	if !slices.Equal(terms, wantTerms) || !slices.Equal(counts, wantCounts) {
		t.Errorf("terms %q %v, want %q %v", terms, counts, wantTerms, wantCounts)
	}
}

// TestTFIDFRow checks one TF-IDF row against the formula by hand.
func TestTFIDFRow(t *testing.T) {
	texts := []string{"red apple red", "green apple", "red car"}
	e := &TFIDF{MinDF: 1, Width: 2}
	if err := e.Fit(context.Background(), texts); err != nil {
		t.Fatal(err)
	}
	// Vocabulary: sorted unigrams and bigrams of all three texts.
	wantVocab := []string{"apple", "apple red", "car", "green", "green apple", "red", "red apple", "red car"}
	if !slices.Equal(e.terms, wantVocab) {
		t.Fatalf("vocabulary %q, want %q", e.terms, wantVocab)
	}
	idf := func(df float64) float64 { return math.Log(4/(1+df)) + 1 }
	r := e.row("red apple red")
	raw := map[string]float64{"red": (1 + math.Log(2)) * idf(2), "apple": idf(2), "red apple": idf(1), "apple red": idf(1)}
	var ss float64
	for _, v := range raw {
		ss += v * v
	}
	if len(r.col) != len(raw) {
		t.Fatalf("row has %d terms, want %d", len(r.col), len(raw))
	}
	for k, j := range r.col {
		want := raw[e.terms[j]] / math.Sqrt(ss)
		if math.Abs(r.val[k]-want) > 1e-7 { // idf is stored as float32
			t.Errorf("term %q: %v, want %v", e.terms[j], r.val[k], want)
		}
	}
}

// TestRandomizedSVD compares the components with a dense SVD: with l ≥ rank
// the range finder is exact, so each component matches up to sign.
func TestRandomizedSVD(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	n, V, k := 14, 60, 6 // l = min(k+10, n) = n: the range is found exactly
	rows := make([]sparseRow, n)
	dense := mat.NewDense(n, V, nil)
	for i := range rows {
		for j := 0; j < V; j++ {
			if rng.Float64() < 0.2 {
				v := rng.Float64()
				rows[i].col = append(rows[i].col, int32(j))
				rows[i].val = append(rows[i].val, v)
				dense.Set(i, j, v)
			}
		}
	}
	compT, err := randomizedSVD(context.Background(), rows, V, k, 5, 7, nil)
	if err != nil {
		t.Fatal(err)
	}
	var svd mat.SVD
	if !svd.Factorize(dense, mat.SVDThin) {
		t.Fatal("dense SVD failed")
	}
	var vt mat.Dense
	svd.VTo(&vt)
	for d := 0; d < k; d++ {
		var dot, nrm float64
		for j := 0; j < V; j++ {
			x := float64(compT[j*k+d])
			dot += x * vt.At(j, d)
			nrm += x * x
		}
		if math.Abs(math.Abs(dot)-1) > 1e-5 || math.Abs(nrm-1) > 1e-5 {
			t.Errorf("component %d: |<v, v_exact>| = %v, |v|² = %v, want 1", d, math.Abs(dot), nrm)
		}
	}
}

func tfidfCorpus() []string {
	var texts []string
	topics := [][]string{
		{"python", "list", "index", "error", "function", "loop"},
		{"protein", "cell", "enzyme", "membrane", "gene", "molecule"},
		{"court", "contract", "law", "judge", "appeal", "statute"},
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 60; i++ {
		words := topics[i%3]
		s := ""
		for w := 0; w < 12; w++ {
			s += words[rng.IntN(len(words))] + " "
		}
		texts = append(texts, s+fmt.Sprintf("item%d", i))
	}
	return texts
}

func TestTFIDFEncode(t *testing.T) {
	ctx := context.Background()
	e, err := NewTFIDF(3)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Encode(ctx, []string{"x"}); !errors.Is(err, ErrNotFitted) {
		t.Fatalf("unfitted Encode: %v, want ErrNotFitted", err)
	}
	texts := tfidfCorpus()
	if err := e.Fit(ctx, texts); err != nil {
		t.Fatal(err)
	}
	if e.Dim() != 3 {
		t.Fatalf("Dim %d, want 3", e.Dim())
	}
	v, err := e.Encode(ctx, []string{"the judge read the contract", "an appeal to the court of law", "enzyme in the cell membrane", "zzz qqq"})
	if err != nil {
		t.Fatal(err)
	}
	cos := func(a, b []float32) float64 {
		var s float64
		for i := range a {
			s += float64(a[i]) * float64(b[i])
		}
		return s
	}
	if same, other := cos(v[0], v[1]), cos(v[0], v[2]); !(same > 0.9 && other < 0.5) {
		t.Errorf("cos(law, law) = %.3f, cos(law, biology) = %.3f: want same topic close, other far", same, other)
	}
	if !slices.Equal(v[3], make([]float32, 3)) {
		t.Errorf("text with no known term: %v, want zeros", v[3])
	}

	// A second fit is identical, and the stored state round-trips exactly.
	e2 := &TFIDF{Width: 3}
	if err := e2.Fit(ctx, texts); err != nil {
		t.Fatal(err)
	}
	if e2.Fingerprint() != e.Fingerprint() {
		t.Errorf("refit fingerprint %s, want %s", e2.Fingerprint(), e.Fingerprint())
	}
	state, err := e.State()
	if err != nil {
		t.Fatal(err)
	}
	back, err := LoadTFIDF(state, "test")
	if err != nil {
		t.Fatal(err)
	}
	if back.Fingerprint() != e.Fingerprint() || back.Dim() != 3 {
		t.Errorf("loaded %s dim %d, want %s dim 3", back.Fingerprint(), back.Dim(), e.Fingerprint())
	}
	w, err := back.Encode(ctx, []string{"the judge read the contract", "enzyme in the cell membrane"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(w[0], v[0]) || !slices.Equal(w[1], v[2]) {
		t.Errorf("loaded encoder projects differently")
	}
	// A damaged file is refused.
	state[checkpoint.TFIDFVocabFile] = []byte(`{"format":"jeirt-tfidf","version":"v1","dim":3,"vocabulary":["a"]}`)
	if _, err := LoadTFIDF(state, "test"); err == nil {
		t.Error("LoadTFIDF accepted a vocabulary that does not match the tensors")
	}
}

func TestTFIDFSmallCorpus(t *testing.T) {
	// Fewer texts than Width: the fit keeps min(texts, vocabulary) components.
	e := &TFIDF{MinDF: 1}
	if err := e.Fit(context.Background(), []string{"alpha beta", "beta gamma", "gamma delta"}); err != nil {
		t.Fatal(err)
	}
	if e.Dim() != 3 {
		t.Errorf("Dim %d, want 3", e.Dim())
	}
	if err := (&TFIDF{}).Fit(context.Background(), []string{"one", "two"}); err == nil {
		t.Error("no term in 2 texts: want an error")
	}
}

func TestOpenTFIDFSpec(t *testing.T) {
	for spec, want := range map[string][2]int{"tfidf": {DefaultTFIDFDim, 0}, "tfidf:64": {64, 0}, "tfidf:64:1": {64, 1}} {
		enc, err := Open(spec)
		if err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		if e := enc.(*TFIDF); e.Dim() != want[0] || e.MinDF != want[1] {
			t.Errorf("%s: dim %d min_df %d, want %v", spec, e.Dim(), e.MinDF, want)
		}
	}
	for _, bad := range []string{"tfidf:", "tfidf:0", "tfidf:x", "tfidf:8:0", "tfidf:8:y"} {
		if _, err := Open(bad); err == nil {
			t.Errorf("Open(%q): no error", bad)
		}
	}
}
