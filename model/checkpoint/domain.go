package checkpoint

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"strconv"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/fileio"
	"github.com/jeirt/jeirt/model/tensorfile"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
)

// DomainFile is the checkpoint file that holds the out-of-domain reference.
const DomainFile = "domain.safetensors"

// DefaultDomainQuantile is the share of reference questions whose nearest
// reference neighbour lies within the out-of-domain threshold.
const DefaultDomainQuantile = 0.99

// DomainSample caps the number of training questions kept as the reference,
// so the file stays small (2,000 x D floats) and a check costs at most
// 2,000·D multiply-adds.
const DomainSample = 2000

// Domain tells whether a question looks like the questions a checkpoint was
// trained on. It keeps the encoder vectors of (a sample of) the training
// questions, scaled to unit length, and calls a question out of domain when
// its encoder vector is farther, in cosine distance 1 − cos, from every one
// of them than Quantile of the reference questions are from their own
// nearest neighbour among the others. The checkpoint's probabilities for such
// a question are extrapolations, not estimates.
//
// The comparison is in the frozen encoder's space, where the text signal is:
// the adapter is trained only to predict correctness and maps unlike texts
// close together.
type Domain struct {
	Quantile  float64
	Threshold float64 // cosine distance beyond which a question is out of domain
	Dim       int     // encoder width D
	Vectors   []float32
	// Vectors is NumReference() x Dim, rows of unit length (or zero for an
	// empty encoding).
}

// NewDomain builds the reference from the encoder vectors x (n x dim,
// row-major) of the rows listed (nil: all), sampling at most DomainSample of
// them with a fixed seed, and sets the threshold at quantile of their
// leave-one-out nearest-neighbour distances (DefaultDomainQuantile when
// quantile is 0). It needs at least two rows.
func NewDomain(x []float32, dim int, rows []int, quantile float64) (*Domain, error) {
	if quantile == 0 {
		quantile = DefaultDomainQuantile
	}
	if !(quantile > 0 && quantile <= 1) {
		return nil, fmt.Errorf("domain: quantile %v is not in (0, 1]", quantile)
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
	if len(rows) > DomainSample {
		rng := rand.New(rand.NewPCG(1, 2))
		rng.Shuffle(len(rows), func(a, b int) { rows[a], rows[b] = rows[b], rows[a] })
		rows = rows[:DomainSample]
		sort.Ints(rows)
	}
	d := &Domain{Quantile: quantile, Dim: dim, Vectors: make([]float32, 0, len(rows)*dim)}
	for _, j := range rows {
		if j < 0 || (j+1)*dim > len(x) {
			return nil, fmt.Errorf("domain: row %d out of range", j)
		}
		d.Vectors = append(d.Vectors, unitRow(x[j*dim:(j+1)*dim])...)
	}
	nn := make([]float64, len(rows))
	for k := range nn {
		nn[k] = d.nearest(d.Vectors[k*dim:(k+1)*dim], k)
	}
	sort.Float64s(nn)
	d.Threshold = quantileSorted(nn, quantile)
	return d, nil
}

// NumReference is the number of reference questions.
func (d *Domain) NumReference() int { return len(d.Vectors) / d.Dim }

// Distance is the cosine distance from encoder vector x to the nearest
// reference question: 0 for a direction seen in training, 1 for one
// orthogonal to all of them (and for an empty encoding).
func (d *Domain) Distance(x []float32) float64 { return d.nearest(unitRow(x), -1) }

// OutOfDomain reports whether x is farther than Threshold from every
// reference question.
func (d *Domain) OutOfDomain(x []float32) bool { return d.Distance(x) > d.Threshold }

// nearest is the smallest 1 − u·v over reference rows v other than row skip,
// for a unit (or zero) u: one matrix-vector product.
func (d *Domain) nearest(u []float32, skip int) float64 {
	n := d.NumReference()
	dots := make([]float32, n)
	blas32.Gemv(blas.NoTrans, 1, blas32.General{Rows: n, Cols: d.Dim, Stride: d.Dim, Data: d.Vectors},
		blas32.Vector{N: d.Dim, Inc: 1, Data: u}, 0, blas32.Vector{N: n, Inc: 1, Data: dots})
	best := math.Inf(-1)
	for k, s := range dots {
		if k != skip && float64(s) > best {
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

// quantileSorted is the q-quantile of sorted xs, interpolated linearly.
func quantileSorted(xs []float64, q float64) float64 {
	pos := q * float64(len(xs)-1)
	lo := int(math.Floor(pos))
	if lo >= len(xs)-1 {
		return xs[len(xs)-1]
	}
	f := pos - float64(lo)
	return xs[lo]*(1-f) + xs[lo+1]*f
}

// Marshal encodes the domain as a safetensors file: the tensor "reference"
// (NumReference x Dim) and the threshold and quantile as metadata.
func (d *Domain) Marshal() ([]byte, error) {
	var b bytes.Buffer
	err := tensorfile.WriteSafetensors(&b, map[string]tensorfile.Tensor{"reference": {Shape: []int{d.NumReference(), d.Dim}, Data: d.Vectors}},
		map[string]string{"format": "jeirt-domain", "threshold": strconv.FormatFloat(d.Threshold, 'g', -1, 64),
			"quantile": strconv.FormatFloat(d.Quantile, 'g', -1, 64), "distance": "cosine"})
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
			return 0, fmt.Errorf("%s: metadata %q is %q, want a finite number >= 0 (a quantile <= 1)", name, key, model.Clip(st.Metadata[key]))
		}
		return v, nil
	}
	thr, err := num("threshold")
	if err != nil {
		return nil, err
	}
	q, err := num("quantile")
	if err != nil {
		return nil, err
	}
	for _, v := range ref.Data {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return nil, fmt.Errorf("%s: reference holds a non-finite value", name)
		}
	}
	return &Domain{Quantile: q, Threshold: thr, Dim: ref.Shape[1], Vectors: ref.Data}, nil
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
