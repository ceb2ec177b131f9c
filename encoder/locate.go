package encoder

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/checkpoint"
	"github.com/jeirt/jeirt/model/fileio"
)

// namesNoFile reports whether spec is an encoder found without a path of
// its own: hash, tfidf or a Hugging Face cache name.
func namesNoFile(spec string) bool {
	return spec == "" || spec == "hash" || strings.HasPrefix(spec, "hash:") ||
		spec == "tfidf" || strings.HasPrefix(spec, "tfidf:") || strings.HasPrefix(spec, "hf:")
}

// specPath returns the file or folder spec names ("" for none) and the
// prefix that goes before it.
func specPath(spec string) (prefix, path string) {
	if namesNoFile(spec) {
		return "", ""
	}
	if p, ok := strings.CutPrefix(spec, "precomputed:"); ok {
		return "precomputed:", p
	}
	return "", spec
}

// ResolveSpec makes the file or folder of a relative spec relative to base
// instead (a config's folder, as for its data paths); specs without a path
// (hash, tfidf, hf:ORG/NAME) are returned unchanged.
func ResolveSpec(spec, base string) string {
	prefix, p := specPath(spec)
	if p == "" || filepath.IsAbs(p) {
		return spec
	}
	return prefix + filepath.Join(base, p)
}

// Record describes enc, opened from spec, for a checkpoint manifest: its
// fingerprint, its absolute location (a model folder, the snapshot an hf:
// spec resolved to, a vector file) and, for a Fitter, its fitted state as
// files to store in the checkpoint.
func Record(spec string, enc Encoder) (checkpoint.EncoderInfo, error) {
	info := checkpoint.EncoderInfo{Spec: spec, Fingerprint: enc.Fingerprint(), Dim: enc.Dim()}
	_, p := specPath(spec)
	if ref, ok := strings.CutPrefix(spec, "hf:"); ok {
		if dir, err := ResolveHF(ref); err == nil {
			p = dir
		}
	}
	if p != "" {
		abs, err := filepath.Abs(p)
		if err != nil {
			return info, err
		}
		info.Path = abs
	}
	if f, ok := enc.(Fitter); ok {
		state, err := f.State()
		if err != nil {
			return info, err
		}
		for name := range state {
			info.Files = append(info.Files, name)
		}
		sort.Strings(info.Files)
		info.Data = state
	}
	return info, nil
}

// FingerprintError is OpenRecorded's error when an encoder is found but is
// not the one the checkpoint was trained with.
type FingerprintError struct {
	Where string // the spec or folder opened
	Got   string // its fingerprint
	Want  string // the checkpoint's
	Spec  string // the checkpoint's spec
}

func (e *FingerprintError) Error() string {
	return fmt.Sprintf("encoder %s now has fingerprint %s, but the checkpoint was trained with %s: new questions cannot be encoded the same way",
		e.Where, e.Got, e.Want)
}

// OpenRecorded opens the encoder a checkpoint's manifest records; dir is the
// checkpoint folder. With override (a command's encoder setting) only that
// spec is tried; otherwise, in order, the recorded spec (when it names no
// file, or a file that exists), the absolute Path, and RelPath from dir. A
// fitted encoder (tfidf) is rebuilt from the files stored in the checkpoint,
// or from the folder override names. The encoder found must have the
// recorded fingerprint; otherwise the error gives both.
func OpenRecorded(info checkpoint.EncoderInfo, dir, override string) (Encoder, error) {
	fitted := info.Spec == "tfidf" || strings.HasPrefix(info.Spec, "tfidf:")
	if fitted && override != "" && !exists(filepath.Join(override, checkpoint.TFIDFVocabFile)) {
		fitted = false // not a folder holding a fit: open it and let the fingerprint decide
	}
	if fitted {
		files, where := info.Data, dir
		if override != "" {
			files, where = map[string][]byte{}, override
			for _, name := range []string{checkpoint.TFIDFVocabFile, checkpoint.TFIDFWeightsFile} {
				b, err := fileio.ReadInputFile(filepath.Join(override, name), 0, "a TF-IDF file")
				if err != nil {
					return nil, fmt.Errorf("%w: %w", model.FieldErrorf("Encoder", "{Encoder} %s", override), err)
				}
				files[name] = b
			}
		}
		t, err := LoadTFIDF(files, where)
		if err != nil {
			return nil, err
		}
		return t, checkFingerprint(t, where, info)
	}
	var specs []string
	if override != "" {
		specs = []string{override}
	} else {
		prefix, p := specPath(info.Spec)
		if p == "" || exists(p) {
			specs = append(specs, info.Spec)
		}
		if info.Path != "" && exists(info.Path) {
			specs = append(specs, prefix+info.Path)
		}
		if info.RelPath != "" && dir != "" {
			if q := filepath.Join(dir, filepath.FromSlash(info.RelPath)); exists(q) {
				specs = append(specs, prefix+q)
			}
		}
		if len(specs) == 0 {
			looked := []string{p}
			if info.Path != "" {
				looked = append(looked, info.Path)
			}
			if info.RelPath != "" {
				looked = append(looked, filepath.Join(dir, filepath.FromSlash(info.RelPath)))
			}
			return nil, model.FieldErrorf("Encoder", "the checkpoint's encoder %s (fingerprint %s) is not found; looked at %s; give its location with {Encoder} SPEC",
				info.Spec, info.Fingerprint, strings.Join(looked, ", "))
		}
	}
	var firstErr error
	for _, spec := range specs {
		enc, err := Open(spec)
		if err == nil {
			err = checkFingerprint(enc, spec, info)
		}
		if err == nil {
			return enc, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	return nil, firstErr
}

func checkFingerprint(enc Encoder, where string, info checkpoint.EncoderInfo) error {
	if fp := enc.Fingerprint(); fp != info.Fingerprint {
		return &FingerprintError{Where: where, Got: fp, Want: info.Fingerprint, Spec: info.Spec}
	}
	return nil
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
