package encoder

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/jeirt/jeirt/encoder/transformer"
	"github.com/jeirt/jeirt/model/limits"
)

// Open returns the encoder a spec names:
//
//	hash              the weightless hash encoder, DefaultHashDim wide
//	hash:DIM          the hash encoder, DIM wide
//	precomputed:FILE  vectors read from FILE, looked up by item id (see Precomputed)
//	tfidf             TF-IDF + truncated SVD, DefaultTFIDFDim wide, unfitted (see TFIDF)
//	tfidf:DIM         the same, DIM wide
//	tfidf:DIM:MIN_DF  the same, keeping terms found in MIN_DF texts or more (default 2)
//	hf:ORG/NAME[@REV] a model folder in the local Hugging Face cache (see ResolveHF)
//	DIR               a sentence-transformers model folder, by config.json's
//	                  model_type: bert, mpnet or modernbert (see
//	                  transformer.Open)
func Open(spec string) (Encoder, error) {
	switch {
	case spec == "tfidf":
		return NewTFIDF(0)
	case strings.HasPrefix(spec, "tfidf:"):
		d, m, hasMinDF := strings.Cut(spec[len("tfidf:"):], ":")
		dim, err := strconv.Atoi(d)
		if err != nil || dim <= 0 || dim > limits.MaxDim {
			return nil, fmt.Errorf("encoder %q: want tfidf:DIM or tfidf:DIM:MIN_DF with an integer DIM in [1, %d]", limits.Clip(spec), limits.MaxDim)
		}
		t := &TFIDF{Width: dim}
		if hasMinDF {
			if t.MinDF, err = strconv.Atoi(m); err != nil || t.MinDF <= 0 {
				return nil, fmt.Errorf("encoder %q: MIN_DF must be a positive integer (texts a term must occur in)", spec)
			}
		}
		return t, nil
	case strings.HasPrefix(spec, "hf:"):
		dir, err := ResolveHF(spec[len("hf:"):])
		if err != nil {
			return nil, err
		}
		spec = dir
	case spec == "" || spec == "hash":
		return NewHash(DefaultHashDim)
	case strings.HasPrefix(spec, "hash:"):
		dim, err := strconv.Atoi(spec[len("hash:"):])
		if err != nil || dim <= 0 || dim > limits.MaxDim {
			return nil, fmt.Errorf("encoder %q: hash dimension must be an integer in [1, %d]", limits.Clip(spec), limits.MaxDim)
		}
		return NewHash(dim)
	case strings.HasPrefix(spec, "precomputed:"):
		p, err := OpenPrecomputed(spec[len("precomputed:"):])
		if err != nil {
			return nil, err
		}
		return p, nil
	}
	st, err := os.Stat(spec)
	if err != nil {
		return nil, fmt.Errorf("encoder %q: not hash, hash:DIM, tfidf, tfidf:DIM, precomputed:FILE, hf:ORG/NAME or a model folder: %w", spec, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("encoder %q: a model must be a folder (config.json, model.safetensors, tokenizer.json); for a file of vectors use precomputed:%s", spec, spec)
	}
	return OpenModel(spec)
}

// OpenModel opens a sentence-transformers model folder with the
// implementation of its config.json model_type (see transformer.Open).
func OpenModel(dir string) (Encoder, error) {
	m, err := transformer.Open(dir)
	if err != nil {
		return nil, err
	}
	return m, nil
}
