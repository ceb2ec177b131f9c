package encoder

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"unicode"

	"github.com/jeirt/jeirt/model/checkpoint"
	"github.com/jeirt/jeirt/model/limits"
)

// DefaultTFIDFDim is the width of the tfidf encoder when the spec gives none.
const DefaultTFIDFDim = 256

// DefaultTFIDFMinDF is the least number of training texts a term must occur
// in to enter the vocabulary when TFIDF.MinDF is 0.
const DefaultTFIDFMinDF = 2

// ErrNotFitted is returned by TFIDF.Encode before Fit.
var ErrNotFitted = errors.New("the tfidf encoder must be fitted on training texts first (it is fitted by jeirt train and stored in the checkpoint)")

// Fitter is an Encoder that learns its features from the training texts
// before it can encode (TFIDF). Training calls Fit with the text of the
// training questions only; State then holds what must be stored with the
// model so that new text is projected the same way.
type Fitter interface {
	Encoder
	Fit(ctx context.Context, texts []string) error
	// State returns the fitted encoder as files (name to contents).
	State() (map[string][]byte, error)
}

// TFIDF is a weightless encoder that carries meaning: TF-IDF over word
// unigrams and bigrams followed by a truncated SVD (latent semantic analysis;
// Deerwester et al., "Indexing by Latent Semantic Analysis", JASIS 1990), the
// recipe of scikit-learn's
//
//	TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True, min_df=MinDF)
//	TruncatedSVD(n_components=Width, algorithm="randomized")
//
// Text is lowercased and split into tokens of two or more word characters
// (letters, digits, underscore; sklearn's token pattern \b\w\w+\b); a bigram
// is two consecutive tokens joined by a space. Term t in a text with count
// tf gets (1 + ln tf)·idf(t), idf(t) = ln((1+n)/(1+df(t))) + 1 (smooth idf, n
// training texts), and the row is scaled to unit length. The SVD is a
// randomised range finder with power iterations (Halko, Martinsson and Tropp,
// "Finding Structure with Randomness", SIAM Review 2011, Algorithms 4.4 and
// 5.1) from a fixed seed, so a fit is deterministic. A text's vector is its
// TF-IDF row times the components, scaled to unit length; a text with no
// known term gives the zero vector.
//
// The zero value is ready to Fit.
type TFIDF struct {
	// Width is the number of SVD components D. Zero means DefaultTFIDFDim. A
	// fit keeps at most min(texts, vocabulary) components.
	Width int
	// MinDF drops terms found in fewer training texts. Zero means
	// DefaultTFIDFMinDF.
	MinDF int
	// MaxFeatures, when positive, keeps only the terms most frequent over
	// the training texts.
	MaxFeatures int
	// PowerIters is the number of power iterations of the range finder.
	// Zero means 5.
	PowerIters int
	// Seed draws the random test matrix. Zero means 42.
	Seed uint64
	// Progress, when not nil, is told how far Fit is: the step ("terms":
	// counting the terms of the texts; "rows": weighting them; "svd": the
	// products of the range finder, one per power iteration and two more),
	// what is done of it and its total; every step ends with done == total.
	Progress func(step string, done, total int)

	vocab       map[string]int32
	terms       []string
	idf         []float32
	compT       []float32 // V × D, term-major: the transpose of "components"
	dim         int
	fingerprint string
}

// NewTFIDF returns an unfitted tfidf encoder of width dim (DefaultTFIDFDim if 0).
func NewTFIDF(dim int) (*TFIDF, error) {
	if dim < 0 {
		return nil, fmt.Errorf("tfidf encoder: dimension %d must be positive", dim)
	}
	return &TFIDF{Width: dim}, nil
}

// Fitted reports whether Fit (or LoadTFIDF) has run.
func (t *TFIDF) Fitted() bool { return t.compT != nil }

// Dim implements Encoder: the fitted width, or Width before fitting.
func (t *TFIDF) Dim() int {
	if t.Fitted() {
		return t.dim
	}
	if t.Width == 0 {
		return DefaultTFIDFDim
	}
	return t.Width
}

// Fingerprint implements Encoder: a hash of the vocabulary, idf and
// components, so two fits agree only if they project text identically.
func (t *TFIDF) Fingerprint() string {
	if !t.Fitted() {
		return fmt.Sprintf("tfidf/%s/unfitted/dim=%d", checkpoint.TFIDFVersion, t.Dim())
	}
	return t.fingerprint
}

// tfidfTokens lowercases text and returns its runs of two or more word
// characters.
func tfidfTokens(text string) []string {
	var out []string
	start := -1
	n := 0
	flush := func(end int) {
		if start >= 0 && n >= 2 {
			out = append(out, strings.ToLower(text[start:end]))
		}
		start, n = -1, 0
	}
	for i, r := range text {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsNumber(r) || r == '_' {
			if start < 0 {
				start = i
			}
			n++
			continue
		}
		flush(i)
	}
	flush(len(text))
	return out
}

// tfidfTerms counts the unigrams and bigrams of text, in first-seen order.
func tfidfTerms(text string) (terms []string, counts []int) {
	idx := map[string]int{}
	add := func(s string) {
		k, ok := idx[s]
		if !ok {
			k = len(terms)
			idx[s] = k
			terms = append(terms, s)
			counts = append(counts, 0)
		}
		counts[k]++
	}
	toks := tfidfTokens(text)
	for i, w := range toks {
		add(w)
		if i > 0 {
			add(toks[i-1] + " " + w)
		}
	}
	return terms, counts
}

// sparseRow is one TF-IDF row: vocabulary columns and unit-length values.
type sparseRow struct {
	col []int32
	val []float64
}

// row returns the TF-IDF row of text over the fitted vocabulary.
func (t *TFIDF) row(text string) sparseRow {
	terms, counts := tfidfTerms(text)
	var r sparseRow
	var ss float64
	for k, s := range terms {
		j, ok := t.vocab[s]
		if !ok {
			continue
		}
		v := (1 + math.Log(float64(counts[k]))) * float64(t.idf[j])
		r.col = append(r.col, j)
		r.val = append(r.val, v)
		ss += v * v
	}
	if ss > 0 {
		inv := 1 / math.Sqrt(ss)
		for k := range r.val {
			r.val[k] *= inv
		}
	}
	return r
}

// Fit learns the vocabulary, idf and SVD components from texts (the
// training questions). It replaces any earlier fit.
func (t *TFIDF) Fit(ctx context.Context, texts []string) error {
	if len(texts) == 0 {
		return fmt.Errorf("tfidf encoder: no training texts to fit on")
	}
	minDF := t.MinDF
	if minDF <= 0 {
		minDF = DefaultTFIDFMinDF
	}
	progress := t.Progress
	if progress == nil {
		progress = func(string, int, int) {}
	}
	df := map[string]int{}
	total := map[string]int{}
	for i, s := range texts {
		if i%256 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
			progress("terms", i, len(texts))
		}
		terms, counts := tfidfTerms(s)
		for k, w := range terms {
			df[w]++
			total[w] += counts[k]
		}
	}
	progress("terms", len(texts), len(texts))
	var vocab []string
	for w, d := range df {
		if d >= minDF {
			vocab = append(vocab, w)
		}
	}
	if t.MaxFeatures > 0 && len(vocab) > t.MaxFeatures {
		sort.Slice(vocab, func(a, b int) bool {
			if total[vocab[a]] != total[vocab[b]] {
				return total[vocab[a]] > total[vocab[b]]
			}
			return vocab[a] < vocab[b]
		})
		vocab = vocab[:t.MaxFeatures]
	}
	if len(vocab) == 0 {
		return fmt.Errorf("tfidf encoder: no term occurs in %d or more of the %d training texts (lower min_df)", minDF, len(texts))
	}
	sort.Strings(vocab)
	n := float64(len(texts))
	t.terms = vocab
	t.vocab = make(map[string]int32, len(vocab))
	t.idf = make([]float32, len(vocab))
	for j, w := range vocab {
		t.vocab[w] = int32(j)
		t.idf[j] = float32(math.Log((1+n)/(1+float64(df[w]))) + 1)
	}
	rows := make([]sparseRow, len(texts))
	for i, s := range texts {
		if i%256 == 0 {
			progress("rows", i, len(texts))
		}
		rows[i] = t.row(s)
	}
	progress("rows", len(texts), len(texts))
	width := t.Width
	if width <= 0 {
		width = DefaultTFIDFDim
	}
	k := min(width, len(texts), len(vocab))
	power := t.PowerIters
	if power <= 0 {
		power = 5
	}
	seed := t.Seed
	if seed == 0 {
		seed = 42
	}
	compT, err := randomizedSVD(ctx, rows, len(vocab), k, power, seed, func(done, total int) { progress("svd", done, total) })
	if err != nil {
		return err
	}
	t.compT, t.dim = compT, k
	t.fingerprint = t.hashState()
	return nil
}

// Encode implements Encoder.
func (t *TFIDF) Encode(ctx context.Context, texts []string) ([][]float32, error) {
	if !t.Fitted() {
		return nil, ErrNotFitted
	}
	out := make([][]float32, len(texts))
	acc := make([]float64, t.dim)
	for i, s := range texts {
		if i%256 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		clear(acc)
		r := t.row(s)
		for k, j := range r.col {
			c := t.compT[int(j)*t.dim : (int(j)+1)*t.dim]
			v := r.val[k]
			for d, x := range c {
				acc[d] += v * float64(x)
			}
		}
		var ss float64
		for _, x := range acc {
			ss += x * x
		}
		v := make([]float32, t.dim)
		if ss > 0 {
			inv := 1 / math.Sqrt(ss)
			for d, x := range acc {
				v[d] = float32(x * inv)
			}
		}
		out[i] = v
	}
	return out, nil
}

// State implements Fitter: the files of checkpoint.TFIDFState.
func (t *TFIDF) State() (map[string][]byte, error) {
	if !t.Fitted() {
		return nil, ErrNotFitted
	}
	minDF := t.MinDF
	if minDF <= 0 {
		minDF = DefaultTFIDFMinDF
	}
	V := len(t.terms)
	comp := make([]float32, t.dim*V)
	for j := 0; j < V; j++ {
		for d := 0; d < t.dim; d++ {
			comp[d*V+j] = t.compT[j*t.dim+d]
		}
	}
	s := &checkpoint.TFIDFState{Dim: t.dim, MinDF: minDF, MaxFeatures: t.MaxFeatures, Fingerprint: t.fingerprint,
		Vocabulary: t.terms, IDF: t.idf, Components: comp}
	return s.Files()
}

// LoadTFIDF rebuilds a fitted encoder from the files State wrote; where
// names them in errors (the checkpoint folder).
func LoadTFIDF(files map[string][]byte, where string) (*TFIDF, error) {
	f, err := checkpoint.ParseTFIDF(files, where)
	if err != nil {
		return nil, err
	}
	V := len(f.Vocabulary)
	t := &TFIDF{Width: f.Dim, MinDF: f.MinDF, MaxFeatures: f.MaxFeatures, terms: f.Vocabulary, idf: f.IDF, dim: f.Dim,
		vocab: make(map[string]int32, V), compT: make([]float32, V*f.Dim)}
	for j, w := range f.Vocabulary {
		t.vocab[w] = int32(j)
		for d := 0; d < f.Dim; d++ {
			t.compT[j*f.Dim+d] = f.Components[d*V+j]
		}
	}
	t.fingerprint = t.hashState()
	if f.Fingerprint != "" && f.Fingerprint != t.fingerprint {
		return nil, fmt.Errorf("%s: %s records fingerprint %s but its contents hash to %s (damaged files)", where, checkpoint.TFIDFVocabFile, limits.Clip(f.Fingerprint), t.fingerprint)
	}
	return t, nil
}

func (t *TFIDF) hashState() string {
	h := sha256.New()
	for j, w := range t.terms {
		fmt.Fprintf(h, "%q:", w)
		binary.Write(h, binary.LittleEndian, t.idf[j])
	}
	binary.Write(h, binary.LittleEndian, t.compT)
	return fmt.Sprintf("tfidf/%s/%s/dim=%d", checkpoint.TFIDFVersion, hex.EncodeToString(h.Sum(nil))[:32], t.dim)
}
