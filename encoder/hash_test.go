package encoder

import (
	"context"
	"hash/fnv"
	"math"
	"strings"
	"testing"
)

// paraphrases are 20 benchmark-style questions, each with a reworded twin.
var paraphrases = [20][2]string{
	{"What is the capital city of France?", "Which city is the capital of France?"},
	{"How many legs does a spider have?", "A spider has how many legs?"},
	{"Who wrote the novel Pride and Prejudice?", "Pride and Prejudice was written by which author?"},
	{"What is the boiling point of water at sea level in Celsius?", "At sea level, water boils at what temperature in degrees Celsius?"},
	{"Solve for x: 2x + 3 = 11.", "Find x if 2x + 3 = 11."},
	{"Which planet is known as the Red Planet?", "What planet do people call the Red Planet?"},
	{"What is the chemical symbol for gold?", "Gold has which chemical symbol?"},
	{"In which year did World War II end?", "World War II ended in what year?"},
	{"What is the largest ocean on Earth?", "Which ocean on Earth is the largest?"},
	{"Translate 'good morning' into Spanish.", "How do you say 'good morning' in Spanish?"},
	{"What is the derivative of sin(x)?", "Compute the derivative of sin(x) with respect to x."},
	{"Name the process by which plants make food from sunlight.", "By what process do plants use sunlight to make their food?"},
	{"What is the square root of 144?", "Compute the square root of 144."},
	{"Who painted the Mona Lisa?", "The Mona Lisa was painted by whom?"},
	{"What gas do humans exhale?", "Which gas is exhaled by humans?"},
	{"How many continents are there on Earth?", "Earth has how many continents?"},
	{"What is the speed of light in a vacuum?", "In a vacuum, what is the speed of light?"},
	{"Which programming language is used to write Linux kernel modules?", "Linux kernel modules are written in which programming language?"},
	{"What is the main function of red blood cells?", "Red blood cells mainly do what?"},
	{"Who was the first person to walk on the Moon?", "Name the first person who walked on the Moon."},
}

func cosine(a, b []float32) float64 {
	var ab, aa, bb float64
	for i := range a {
		ab += float64(a[i]) * float64(b[i])
		aa += float64(a[i]) * float64(a[i])
		bb += float64(b[i]) * float64(b[i])
	}
	return ab / math.Sqrt(aa*bb)
}

// paraphraseSeparation returns the mean cosine of the 20 paraphrase pairs and
// the mean over all 760 ordered non-pairs (a question with another pair's twin).
func paraphraseSeparation(t testing.TB, enc Encoder) (pairs, nonPairs float64) {
	var left, right []string
	for _, p := range paraphrases {
		left = append(left, p[0])
		right = append(right, p[1])
	}
	ctx := context.Background()
	l, err := enc.Encode(ctx, left)
	if err != nil {
		t.Fatal(err)
	}
	r, err := enc.Encode(ctx, right)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for i := range l {
		for j := range r {
			c := cosine(l[i], r[j])
			if i == j {
				pairs += c
			} else {
				nonPairs += c
				n++
			}
		}
	}
	return pairs / float64(len(l)), nonPairs / float64(n)
}

func TestHashParaphrases(t *testing.T) {
	enc, err := Open("hash")
	if err != nil {
		t.Fatal(err)
	}
	pairs, nonPairs := paraphraseSeparation(t, enc)
	t.Logf("hash:%d paraphrase pairs mean cosine %.3f, non-pairs %.3f", enc.Dim(), pairs, nonPairs)
	if pairs < 0.4 || pairs-nonPairs < 0.3 {
		t.Errorf("paraphrases not separated: pairs %.3f, non-pairs %.3f (want pairs >= 0.4 and a margin >= 0.3)", pairs, nonPairs)
	}
}

// TestHashPinned fixes hash/v1 forever: if this test fails, the recipe changed
// and hashVersion must be bumped (and these numbers rewritten).
func TestHashPinned(t *testing.T) {
	enc, err := Open("hash:16")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := enc.Fingerprint(), "hash/v1/fnv1a64/dim=16"; got != want {
		t.Errorf("fingerprint %q, want %q", got, want)
	}
	got, err := enc.Encode(context.Background(), []string{"What is the capital city of France?", "Café ÉCOLE naïve", "", "?!"})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]float32{
		{-0.06665661, -0.11766395, -0.12877068, -0.022795284, -0.25263986, 0.020524016, -0.24876586, -0.07773658, 0.45139912, 0.5401225, -0.2698319, 0, -0.4614184, 0.09713993, -0.0848494, 0.18598324},
		{-0.294993, -0.3087827, -0.08913789, -0.6175654, -0.08913789, 0, -0.102927566, 0.17827578, -0.5008482, 0, -0.075348206, -0.102927566, -0.08913789, 0.08913789, 0.08913789, -0.294993},
		make([]float32, 16),
		make([]float32, 16),
	}
	for i := range want {
		for k := range want[i] {
			if got[i][k] != want[i][k] {
				t.Errorf("text %d entry %d = %v, want %v", i, k, got[i][k], want[i][k])
			}
		}
	}
	// Normalisation: case, accents and spacing do not matter.
	same, _ := enc.Encode(context.Background(), []string{"cafe  ecole\u00a0NAIVE"})
	for k := range same[0] {
		if same[0][k] != got[1][k] {
			t.Fatalf("normalised text encodes differently at %d: %v vs %v", k, same[0][k], got[1][k])
		}
	}
	d, _ := Open("hash")
	if d.Dim() != 384 || d.Fingerprint() != "hash/v1/fnv1a64/dim=384" {
		t.Errorf("default hash: dim %d fingerprint %q", d.Dim(), d.Fingerprint())
	}
}

func TestHashFeatureIsFNV1a(t *testing.T) {
	for _, parts := range [][]string{{"capital"}, {"capital", "city"}, {""}, {"我"}} {
		f := fnv.New64a()
		f.Write([]byte("jeirt\x00b:" + strings.Join(parts, "\xff")))
		if got, want := hashFeature('b', parts...), f.Sum64(); got != want {
			t.Errorf("hashFeature(b, %q) = %#x, hash/fnv says %#x", parts, got, want)
		}
	}
}

func TestHashBatchAndCancel(t *testing.T) {
	enc := &Hash{Width: 64, Threads: 2}
	texts := make([]string, 1000)
	for i := range texts {
		texts[i] = paraphrases[i%20][i%2] + strings.Repeat(" again", i%7)
	}
	batch, err := enc.Encode(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{0, 333, 999} {
		one, _ := enc.Encode(context.Background(), texts[i:i+1])
		for k := range one[0] {
			if one[0][k] != batch[i][k] {
				t.Fatalf("text %d: batch and single differ at %d", i, k)
			}
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := enc.Encode(ctx, texts); err != context.Canceled {
		t.Errorf("cancelled Encode returned %v", err)
	}
}

func TestOpenHashSpecs(t *testing.T) {
	for _, tc := range []struct {
		spec, err string
		dim       int
	}{
		{"hash", "", 384},
		{"", "", 384},
		{"hash:100", "", 100},
		{"hash:0", `encoder "hash:0": hash dimension must be an integer in [1, 65536]`, 0},
		{"hash:x", `encoder "hash:x": hash dimension must be an integer in [1, 65536]`, 0},
	} {
		enc, err := Open(tc.spec)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("Open(%q) error %v, want %q", tc.spec, err, tc.err)
			}
			continue
		}
		if err != nil || enc.Dim() != tc.dim {
			t.Errorf("Open(%q) = dim %v, %v; want %d", tc.spec, enc, err, tc.dim)
		}
	}
}
