package checkpoint

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"

	"github.com/jeirt/jeirt/model/limits"
	"github.com/jeirt/jeirt/model/tensorfile"
)

// The files a fitted TF-IDF encoder is stored in, inside a checkpoint folder
// (the encoder's Files). Python reads them with json and
// safetensors.numpy.load_file; a text's vector is
// normalize(tfidf_row @ components.T).
const (
	TFIDFWeightsFile = "tfidf.safetensors" // tensors "idf" [V] and "components" [D, V], float32
	TFIDFVocabFile   = "tfidf.json"        // settings and the vocabulary in column order
	// TFIDFVersion names the encoder's recipe; any change to its features
	// bumps it, and a file of another version is refused.
	TFIDFVersion = "v1"
)

// TFIDFState is what a fitted TF-IDF encoder stores: its settings, its
// vocabulary (in column order), the inverse document frequencies and the
// truncated SVD's components, Dim x len(Vocabulary) row-major.
type TFIDFState struct {
	Dim         int
	MinDF       int
	MaxFeatures int
	Fingerprint string
	Vocabulary  []string
	IDF         []float32
	Components  []float32
}

// tfidfFile is TFIDFVocabFile.
type tfidfFile struct {
	Format      string   `json:"format"` // "jeirt-tfidf"
	Version     string   `json:"version"`
	Dim         int      `json:"dim"`
	MinDF       int      `json:"min_df"`
	MaxFeatures int      `json:"max_features,omitempty"`
	NGramRange  [2]int   `json:"ngram_range"`
	Sublinear   bool     `json:"sublinear_tf"`
	SmoothIDF   bool     `json:"smooth_idf"`
	Lowercase   bool     `json:"lowercase"`
	Pattern     string   `json:"token_pattern"`
	Fingerprint string   `json:"fingerprint"`
	Vocabulary  []string `json:"vocabulary"` // column order of idf and components
}

// Files is s as the two files TFIDFVocabFile and TFIDFWeightsFile.
func (s *TFIDFState) Files() (map[string][]byte, error) {
	js, err := json.Marshal(tfidfFile{Format: "jeirt-tfidf", Version: TFIDFVersion, Dim: s.Dim, MinDF: s.MinDF, MaxFeatures: s.MaxFeatures,
		NGramRange: [2]int{1, 2}, Sublinear: true, SmoothIDF: true, Lowercase: true, Pattern: `(?u)\b\w\w+\b`,
		Fingerprint: s.Fingerprint, Vocabulary: s.Vocabulary})
	if err != nil {
		return nil, err
	}
	V := len(s.Vocabulary)
	var buf bytes.Buffer
	if err := tensorfile.WriteSafetensors(&buf, map[string]tensorfile.Tensor{
		"idf":        {Shape: []int{V}, Data: s.IDF},
		"components": {Shape: []int{s.Dim, V}, Data: s.Components},
	}, map[string]string{"format": "jeirt-tfidf", "fingerprint": s.Fingerprint}); err != nil {
		return nil, err
	}
	return map[string][]byte{TFIDFVocabFile: append(js, '\n'), TFIDFWeightsFile: buf.Bytes()}, nil
}

// ParseTFIDF reads the files Files wrote and checks them: format and
// version, the width, the tensors' shapes, finite weights and a vocabulary
// without repeats. where names the checkpoint folder in errors.
func ParseTFIDF(files map[string][]byte, where string) (*TFIDFState, error) {
	js, ok1 := files[TFIDFVocabFile]
	st, ok2 := files[TFIDFWeightsFile]
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("%s: the tfidf encoder needs %s and %s, fitted by jeirt train", where, TFIDFVocabFile, TFIDFWeightsFile)
	}
	var f tfidfFile
	if err := json.Unmarshal(js, &f); err != nil {
		return nil, fmt.Errorf("%s/%s: %w", where, TFIDFVocabFile, err)
	}
	if f.Format != "jeirt-tfidf" || f.Version != TFIDFVersion {
		return nil, fmt.Errorf("%s/%s: format %q version %q, want jeirt-tfidf %s", where, TFIDFVocabFile, limits.Clip(f.Format), limits.Clip(f.Version), TFIDFVersion)
	}
	if f.Dim < 1 || f.Dim > limits.MaxDim {
		return nil, fmt.Errorf("%s/%s: dim %d must be in [1, %d]", where, TFIDFVocabFile, f.Dim, limits.MaxDim)
	}
	parsed, err := tensorfile.ParseSafetensors(where+"/"+TFIDFWeightsFile, st)
	if err != nil {
		return nil, err
	}
	tensors := parsed.Tensors
	V := len(f.Vocabulary)
	idf, comp := tensors["idf"], tensors["components"]
	if len(idf.Shape) != 1 || idf.Shape[0] != V {
		return nil, fmt.Errorf("%s/%s: tensor idf has shape %v, want [%d]", where, TFIDFWeightsFile, idf.Shape, V)
	}
	if len(comp.Shape) != 2 || comp.Shape[0] != f.Dim || comp.Shape[1] != V {
		return nil, fmt.Errorf("%s/%s: tensor components has shape %v, want [%d %d]", where, TFIDFWeightsFile, comp.Shape, f.Dim, V)
	}
	for _, x := range [][]float32{idf.Data, comp.Data} {
		for _, v := range x {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return nil, fmt.Errorf("%s/%s: a weight is %v (damaged files)", where, TFIDFWeightsFile, v)
			}
		}
	}
	seen := make(map[string]bool, V)
	for _, w := range f.Vocabulary {
		if seen[w] {
			return nil, fmt.Errorf("%s/%s: term %q appears twice in the vocabulary", where, TFIDFVocabFile, limits.Clip(w))
		}
		seen[w] = true
	}
	return &TFIDFState{Dim: f.Dim, MinDF: f.MinDF, MaxFeatures: f.MaxFeatures, Fingerprint: f.Fingerprint,
		Vocabulary: f.Vocabulary, IDF: idf.Data, Components: comp.Data}, nil
}
