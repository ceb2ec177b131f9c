package checkpoint

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sort"
	"strconv"

	"github.com/jeirt/jeirt/model/fileio"
	"github.com/jeirt/jeirt/model/limits"
	"github.com/jeirt/jeirt/model/tensorfile"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
)

// DomainFile is the checkpoint file that holds the out-of-domain reference.
const DomainFile = "domain.safetensors"

// DefaultFalseFlagRate is the stated false-flag rate of the out-of-domain
// check: the share, at most, of new questions drawn like the training
// questions that it calls out of domain.
const DefaultFalseFlagRate = 0.05

// DomainSample caps the number of training questions kept as the reference,
// so the file stays small (2,000 x D floats per form of the questions kept,
// at most three) and a check costs at most 6,000·D multiply-adds.
const DomainSample = 2000

// Domain tells whether a question looks like the questions a checkpoint was
// trained on. It keeps the encoder vectors of (a sample of) the training
// questions, scaled to unit length, and calls a question out of domain when
// its encoder vector is farther, in cosine distance 1 − cos, from every one
// of them than Threshold. The checkpoint's probabilities for such a question
// are extrapolations, not estimates.
//
// Threshold is a split-conformal quantile (Vovk, Gammerman and Shafer 2005;
// Lei et al. 2018, §2.2) at the stated FalseFlagRate α: each training
// question is held out in turn and scored by its distance to the nearest
// reference question other than itself (the reference questions leave-one-
// out, the training questions beyond the sample against the whole
// reference); Threshold is the ⌈(n+1)(1−α)⌉-th smallest of those n scores.
// A new question exchangeable with the training questions (a random split
// by question) is then flagged with probability at most α, and at least
// α − 1/(n+1) up to the leave-one-out reference being one question
// smaller.
//
// The comparison is in the frozen encoder's space, where the text signal is:
// the adapter is trained only to predict correctness and maps unlike texts
// close together.
type Domain struct {
	// FalseFlagRate is the stated rate α the threshold was set at.
	FalseFlagRate float64
	Threshold     float64 // cosine distance beyond which a question is out of domain
	// Calibration is the number of held-out training questions the
	// threshold is a quantile of (0 for a file written before it was kept).
	Calibration int
	Dim         int // encoder width D
	// Forms is the number of forms of each reference question kept (the
	// full text, then its short forms; 0 and 1 mean the full text alone).
	Forms   int
	Vectors []float32
	// Vectors is Forms·NumReference() x Dim, rows of unit length (or zero
	// for an empty encoding), form after form.
}

// NewDomain builds the reference from the encoder vectors x (n x dim,
// row-major) of the training questions listed in rows (nil: all), sampling
// at most DomainSample of them with a fixed seed, and sets the threshold at
// false-flag rate rate (DefaultFalseFlagRate when 0) from every listed
// question held out in turn (see Domain). It needs at least two rows.
//
// Each of short, when given, holds the encoder vectors (like x) of shorter
// forms of the same questions (their title, their first sentence). The
// reference then keeps every form of the sampled questions, each question
// is scored in every form against the reference without any of its own
// forms, and the threshold is the largest of the conformal thresholds of
// the forms: a question written short, as users ask, is flagged at most at
// the stated rate, and so is a full one. Calibration counts the questions.
func NewDomain(x []float32, dim int, rows []int, rate float64, short ...[]float32) (*Domain, error) {
	if rate == 0 {
		rate = DefaultFalseFlagRate
	}
	if !(rate > 0 && rate < 1) {
		return nil, fmt.Errorf("domain: false-flag rate %v is not in (0, 1)", rate)
	}
	if dim <= 0 || len(x)%dim != 0 {
		return nil, fmt.Errorf("domain: %d values are not rows of width %d", len(x), dim)
	}
	if rows == nil {
		rows = make([]int, len(x)/dim)
		for j := range rows {
			rows[j] = j
		}
	} else {
		rows = append([]int(nil), rows...)
	}
	if len(rows) < 2 {
		return nil, fmt.Errorf("domain: %d training questions; at least 2 are needed", len(rows))
	}
	for _, j := range rows {
		if j < 0 || (j+1)*dim > len(x) {
			return nil, fmt.Errorf("domain: row %d out of range", j)
		}
	}
	sample := rows // then rows: the sample, then the questions beyond it
	if len(rows) > DomainSample {
		rng := rand.New(rand.NewPCG(1, 2))
		rng.Shuffle(len(rows), func(a, b int) { rows[a], rows[b] = rows[b], rows[a] })
		sample = rows[:DomainSample]
		sort.Ints(sample)
	}
	for v, xs := range short {
		if len(xs) != len(x) {
			return nil, fmt.Errorf("domain: short form %d has %d values, the questions %d", v+1, len(xs), len(x))
		}
	}
	// The reference holds every form of the sampled questions, the full
	// ones first; a question is scored without any of its own forms.
	forms := append([][]float32{x}, short...)
	ns := len(sample)
	d := &Domain{FalseFlagRate: rate, Dim: dim, Forms: len(forms), Vectors: make([]float32, 0, len(forms)*ns*dim)}
	for _, xs := range forms {
		for _, j := range sample {
			d.Vectors = append(d.Vectors, unitRow(xs[j*dim:(j+1)*dim])...)
		}
	}
	self := make(map[int]int, ns) // question → its reference row
	for k, j := range sample {
		self[j] = k
	}
	skips := make([]int, len(forms))
	scores := make([]float64, 0, len(rows))
	for f, xs := range forms {
		scores = scores[:0]
		for _, j := range rows {
			skip := skips[:0]
			if k, ok := self[j]; ok {
				for g := range forms {
					skip = append(skip, g*ns+k)
				}
			}
			scores = append(scores, d.nearest(unitRow(xs[j*dim:(j+1)*dim]), skip...))
		}
		if t := ConformalThreshold(scores, rate); f == 0 || t > d.Threshold {
			d.Threshold = t
		}
	}
	d.Calibration = len(rows)
	return d, nil
}

// ConformalThreshold is the split-conformal threshold of the nonconformity
// scores of n held-out calibration points at rate α: the ⌈(n+1)(1−α)⌉-th
// smallest score, so that a new point exchangeable with them has a score
// above it with probability at most α (and at least α − 1/(n+1) without
// ties). When n is too small for α (⌈(n+1)(1−α)⌉ > n) no finite score is
// safe to flag on; it returns MaxDistance, beyond every cosine distance.
func ConformalThreshold(scores []float64, rate float64) float64 {
	s := append([]float64(nil), scores...)
	sort.Float64s(s)
	n := len(s)
	k := int(math.Ceil(float64(n+1)*(1-rate) - 1e-9))
	if k > n || n == 0 {
		return MaxDistance
	}
	return s[max(k, 1)-1]
}

// MaxDistance is the largest cosine distance (two opposite directions): a
// threshold that flags nothing.
const MaxDistance = 2.0

// NumReference is the number of reference questions.
func (d *Domain) NumReference() int { return d.rows() / max(d.Forms, 1) }

func (d *Domain) rows() int { return len(d.Vectors) / d.Dim }

// Distance is the cosine distance from encoder vector x to the nearest
// reference question: 0 for a direction seen in training, 1 for one
// orthogonal to all of them (and for an empty encoding).
func (d *Domain) Distance(x []float32) float64 { return d.nearest(unitRow(x)) }

// OutOfDomain reports whether x is farther than Threshold from every
// reference question.
func (d *Domain) OutOfDomain(x []float32) bool { return d.Distance(x) > d.Threshold }

// nearest is the smallest 1 − u·v over reference rows v other than row skip,
// for a unit (or zero) u: one matrix-vector product.
func (d *Domain) nearest(u []float32, skip ...int) float64 {
	n := d.rows()
	dots := make([]float32, n)
	blas32.Gemv(blas.NoTrans, 1, blas32.General{Rows: n, Cols: d.Dim, Stride: d.Dim, Data: d.Vectors},
		blas32.Vector{N: d.Dim, Inc: 1, Data: u}, 0, blas32.Vector{N: n, Inc: 1, Data: dots})
	best := math.Inf(-1)
	for k, s := range dots {
		if float64(s) > best && !slices.Contains(skip, k) {
			best = float64(s)
		}
	}
	return 1 - best
}

// unitRow returns v scaled to unit length (zeros for a zero vector).
func unitRow(v []float32) []float32 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	out := make([]float32, len(v))
	if s == 0 || math.IsNaN(s) || math.IsInf(s, 0) {
		return out
	}
	inv := 1 / math.Sqrt(s)
	for i, x := range v {
		out[i] = float32(float64(x) * inv)
	}
	return out
}

// Marshal encodes the domain as a safetensors file: the tensor "reference"
// (NumReference x Dim) and the threshold, the false-flag rate, the number
// of calibration questions and, for readers of older files, the quantile
// 1 − rate as metadata.
func (d *Domain) Marshal() ([]byte, error) {
	var b bytes.Buffer
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	err := tensorfile.WriteSafetensors(&b, map[string]tensorfile.Tensor{"reference": {Shape: []int{d.rows(), d.Dim}, Data: d.Vectors}},
		map[string]string{"format": "jeirt-domain", "threshold": f(d.Threshold), "false_flag_rate": f(d.FalseFlagRate),
			"quantile": f(1 - d.FalseFlagRate), "calibration": strconv.Itoa(d.Calibration), "distance": "cosine",
			"forms": strconv.Itoa(max(d.Forms, 1))})
	return b.Bytes(), err
}

// ParseDomain decodes Marshal's bytes; name is used in errors.
func ParseDomain(name string, b []byte) (*Domain, error) {
	st, err := tensorfile.ParseSafetensors(name, b)
	if err != nil {
		return nil, err
	}
	ref, ok := st.Tensors["reference"]
	if !ok || len(ref.Shape) != 2 || ref.Shape[0] < 1 || ref.Shape[1] < 1 {
		return nil, fmt.Errorf("%s: no 2-D tensor \"reference\"", name)
	}
	num := func(key string) (float64, error) {
		v, err := strconv.ParseFloat(st.Metadata[key], 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || key == "quantile" && v > 1 {
			return 0, fmt.Errorf("%s: metadata %q is %q, want a finite number >= 0 (a quantile <= 1)", name, key, limits.Clip(st.Metadata[key]))
		}
		return v, nil
	}
	thr, err := num("threshold")
	if err != nil {
		return nil, err
	}
	// A file written before the rate was kept has the quantile alone
	// (0.99: a rate of 1%).
	rate := 0.0
	if _, ok := st.Metadata["false_flag_rate"]; ok {
		if rate, err = num("false_flag_rate"); err == nil && !(rate > 0 && rate < 1) {
			err = fmt.Errorf("%s: metadata \"false_flag_rate\" is %v, want a number in (0, 1)", name, rate)
		}
	} else {
		var q float64
		q, err = num("quantile")
		rate = 1 - q
	}
	if err != nil {
		return nil, err
	}
	calibration := 0
	if v, ok := st.Metadata["calibration"]; ok {
		if calibration, err = strconv.Atoi(v); err != nil || calibration < 0 {
			return nil, fmt.Errorf("%s: metadata \"calibration\" is %q, want a count", name, limits.Clip(v))
		}
	}
	forms := 1 // a file written before the short forms were kept
	if v, ok := st.Metadata["forms"]; ok {
		if forms, err = strconv.Atoi(v); err != nil || forms < 1 || ref.Shape[0]%forms != 0 {
			return nil, fmt.Errorf("%s: metadata \"forms\" is %q, want a count that divides the %d reference rows", name, limits.Clip(v), ref.Shape[0])
		}
	}
	for _, v := range ref.Data {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return nil, fmt.Errorf("%s: reference holds a non-finite value", name)
		}
	}
	return &Domain{FalseFlagRate: rate, Threshold: thr, Calibration: calibration, Dim: ref.Shape[1], Forms: forms, Vectors: ref.Data}, nil
}

// LoadDomain reads a checkpoint folder's domain file; a checkpoint written
// before the file existed gives (nil, nil).
func LoadDomain(dir string) (*Domain, error) {
	path := filepath.Join(dir, DomainFile)
	b, err := fileio.ReadInputFile(path, fileio.MaxDocumentBytes, "a domain file")
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return ParseDomain(path, b)
}
