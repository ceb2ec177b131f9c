package model

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
)

// A JE-IRT checkpoint is a folder holding two files:
//
//	model.safetensors  float32 tensors W1 [hidden, D], c1 [hidden], W2 [d, hidden],
//	                   c2 [d], M [models, d], Q [items, d] and, when the
//	                   per-question residual is on, R [items, d]
//	manifest.json      Manifest: names of the rows of M and Q, encoder, config, metrics
//
// Python reads it with safetensors alone:
//
//	t = safetensors.numpy.load_file("DIR/model.safetensors")
//	q = np.maximum(x @ t["W1"].T + t["c1"], 0) @ t["W2"].T + t["c2"]
const (
	CheckpointFormat        = "jeirt-checkpoint"
	CheckpointFormatVersion = 1
	CheckpointWeights       = "model.safetensors"
	CheckpointManifest      = "manifest.json"
)

// Manifest describes a checkpoint; it is manifest.json.
type Manifest struct {
	Format        string `json:"format"`         // always "jeirt-checkpoint"
	FormatVersion int    `json:"format_version"` // CheckpointFormatVersion
	JEIRTVersion  string `json:"jeirt_version"`  // the jeirt release that wrote it
	Created       string `json:"created,omitempty"`

	Encoder EncoderInfo `json:"encoder"`
	Model   ModelInfo   `json:"model"`

	Models []string `json:"models"` // rows of M
	Items  []string `json:"items"`  // rows of Q (and R)

	Config  json.RawMessage `json:"config,omitempty"`  // the training config as run
	Metrics json.RawMessage `json:"metrics,omitempty"` // metrics.json as written next to it
}

// EncoderInfo says which frozen encoder made the adapter's inputs: a new
// question must be encoded by an encoder with the same fingerprint.
//
// The encoder is found again, from any working directory, at the first of:
// the spec when it names no file (hash, tfidf, hf:ORG/NAME) or names one that
// exists; Path; RelPath taken from the checkpoint folder. Files fitted on the
// training data (tfidf) are stored inside the checkpoint.
type EncoderInfo struct {
	Spec        string `json:"spec"`
	Fingerprint string `json:"fingerprint"`
	Dim         int    `json:"dim"`
	// Path is the absolute location of a model folder or vector file.
	Path string `json:"path,omitempty"`
	// RelPath is Path relative to the checkpoint folder, set by Write, so
	// that a checkpoint moved together with its encoder still finds it.
	RelPath string `json:"rel_path,omitempty"`
	// Files names the checkpoint's files that hold the encoder's fitted
	// state; Data holds their contents (read by LoadCheckpoint, written by
	// Write).
	Files []string          `json:"files,omitempty"`
	Data  map[string][]byte `json:"-"`
}

// ModelInfo is the JE-IRT shape.
type ModelInfo struct {
	Link     string  `json:"link"` // the probability formula, for readers
	InputDim int     `json:"input_dim"`
	Hidden   int     `json:"hidden"`
	Dim      int     `json:"dim"`
	Dropout  float64 `json:"dropout"`  // used in training only
	Residual float64 `json:"residual"` // L2 weight of the per-question residual; 0 = none
}

// Link is the formula written into manifests.
const Link = "sigmoid(q.m/(|q|+1e-8) - |q|), q = W2 relu(W1 x + c1) + c2 (+ R[item])"

// Checkpoint is a trained JE-IRT model with its manifest.
type Checkpoint struct {
	Manifest Manifest
	Model    *JEIRT
	// Files are extra files written into the folder with the checkpoint
	// (metrics.json), by name. LoadCheckpoint does not read them.
	Files map[string][]byte
	// Dir is the folder LoadCheckpoint read the checkpoint from.
	Dir string
	// Encoder, when set (a command's --encoder), is the spec to open the
	// encoder with instead of the manifest's location; its fingerprint must
	// still be the manifest's.
	Encoder string
}

// Write writes the checkpoint folder atomically: dir appears complete or not
// at all. An existing dir is replaced only when replace is true. Manifest's
// format, version, models, items and shape fields are filled from the model.
func (c *Checkpoint) Write(dir string, replace bool) error {
	m := c.Model
	if err := m.Check(); err != nil {
		return err
	}
	c.Manifest.Format = CheckpointFormat
	c.Manifest.FormatVersion = CheckpointFormatVersion
	c.Manifest.Models, c.Manifest.Items = m.Models, m.Items
	c.Manifest.Model.Link = Link
	c.Manifest.Model.InputDim, c.Manifest.Model.Hidden, c.Manifest.Model.Dim = m.InputDim, m.Hidden, m.Dim
	if m.R == nil {
		c.Manifest.Model.Residual = 0
	}
	tensors := map[string]Tensor{
		"W1": {Shape: []int{m.Hidden, m.InputDim}, Data: m.W1},
		"c1": {Shape: []int{m.Hidden}, Data: m.C1},
		"W2": {Shape: []int{m.Dim, m.Hidden}, Data: m.W2},
		"c2": {Shape: []int{m.Dim}, Data: m.C2},
		"M":  {Shape: []int{len(m.Models), m.Dim}, Data: m.M},
		"Q":  {Shape: []int{len(m.Items), m.Dim}, Data: m.Q},
	}
	if m.R != nil {
		tensors["R"] = Tensor{Shape: []int{len(m.Items), m.Dim}, Data: m.R}
	}
	enc := &c.Manifest.Encoder
	enc.RelPath = ""
	if enc.Path != "" {
		if abs, err := filepath.Abs(dir); err == nil {
			if rel, err := filepath.Rel(abs, enc.Path); err == nil {
				enc.RelPath = filepath.ToSlash(rel)
			}
		}
	}
	for _, name := range enc.Files {
		if _, ok := enc.Data[name]; !ok {
			return fmt.Errorf("checkpoint: encoder file %s has no contents", name)
		}
		if _, ok := c.Files[name]; ok || name != filepath.Base(name) || name == CheckpointWeights || name == CheckpointManifest {
			return fmt.Errorf("checkpoint: encoder file name %q is not allowed", name)
		}
	}
	meta := map[string]string{"format": CheckpointFormat, "format_version": strconv.Itoa(CheckpointFormatVersion)}
	return WriteDirAtomic(dir, replace, func(tmp string) error {
		if err := WriteFileAtomic(filepath.Join(tmp, CheckpointWeights), func(w io.Writer) error {
			return WriteSafetensors(w, tensors, meta)
		}); err != nil {
			return err
		}
		for name, data := range c.Files {
			if name != filepath.Base(name) || name == CheckpointWeights || name == CheckpointManifest {
				return fmt.Errorf("checkpoint: extra file name %q is not allowed", name)
			}
			if err := os.WriteFile(filepath.Join(tmp, name), data, 0o644); err != nil {
				return err
			}
		}
		for _, name := range enc.Files {
			if err := os.WriteFile(filepath.Join(tmp, name), enc.Data[name], 0o644); err != nil {
				return err
			}
		}
		return WriteFileAtomic(filepath.Join(tmp, CheckpointManifest), func(w io.Writer) error {
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			return enc.Encode(&c.Manifest)
		})
	})
}

// LoadCheckpoint reads a checkpoint folder written by Write.
func LoadCheckpoint(dir string) (*Checkpoint, error) {
	raw, err := ReadInputFile(filepath.Join(dir, CheckpointManifest), MaxDocumentBytes, "a manifest")
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			if _, serr := os.Stat(dir); serr != nil {
				return nil, fmt.Errorf("checkpoint %s: %w", dir, serr)
			}
			return nil, fmt.Errorf("%s is not a jeirt checkpoint: no %s", dir, CheckpointManifest)
		}
		return nil, err
	}
	c := &Checkpoint{}
	mpath := filepath.Join(dir, CheckpointManifest)
	if err := json.Unmarshal(raw, &c.Manifest); err != nil {
		return nil, fmt.Errorf("%s: %w", mpath, err)
	}
	man := &c.Manifest
	if man.Format != CheckpointFormat {
		return nil, fmt.Errorf("%s: format %q, want %q", mpath, Clip(man.Format), CheckpointFormat)
	}
	if man.FormatVersion < 1 || man.FormatVersion > CheckpointFormatVersion {
		return nil, fmt.Errorf("%s: format_version %d is not supported by this jeirt (reads 1 to %d)", mpath, man.FormatVersion, CheckpointFormatVersion)
	}
	c.Dir = dir
	mi := man.Model
	for _, d := range []struct {
		key    string
		v, min int
	}{{"model.input_dim", mi.InputDim, 1}, {"model.hidden", mi.Hidden, 1}, {"model.dim", mi.Dim, 1}} {
		if d.v < d.min || d.v > MaxDim {
			return nil, fmt.Errorf("%s: %s %d is outside [%d, %d]", mpath, d.key, d.v, d.min, MaxDim)
		}
	}
	for _, names := range []struct {
		key  string
		list []string
	}{{"models", man.Models}, {"items", man.Items}} {
		seen := make(map[string]bool, len(names.list))
		for _, n := range names.list {
			if seen[n] {
				return nil, fmt.Errorf("%s: %s: %q appears twice", mpath, names.key, Clip(n))
			}
			seen[n] = true
		}
	}
	if len(man.Encoder.Files) > 0 {
		man.Encoder.Data = make(map[string][]byte, len(man.Encoder.Files))
		for _, name := range man.Encoder.Files {
			if name != filepath.Base(name) {
				return nil, fmt.Errorf("%s: encoder.files: %q is not a file name", mpath, name)
			}
			b, err := ReadInputFile(filepath.Join(dir, name), 0, "an encoder file")
			if err != nil {
				return nil, fmt.Errorf("%s: the encoder's file %s: %w", mpath, name, err)
			}
			man.Encoder.Data[name] = b
		}
	}
	wpath := filepath.Join(dir, CheckpointWeights)
	st, err := ReadSafetensors(wpath)
	if err != nil {
		return nil, err
	}
	t := st.Tensors
	m := &JEIRT{InputDim: mi.InputDim, Hidden: mi.Hidden, Dim: mi.Dim, Models: man.Models, Items: man.Items}
	for _, e := range []struct {
		name  string
		dst   *[]float32
		shape []int
	}{
		{"W1", &m.W1, []int{mi.Hidden, mi.InputDim}}, {"c1", &m.C1, []int{mi.Hidden}},
		{"W2", &m.W2, []int{mi.Dim, mi.Hidden}}, {"c2", &m.C2, []int{mi.Dim}},
		{"M", &m.M, []int{len(man.Models), mi.Dim}}, {"Q", &m.Q, []int{len(man.Items), mi.Dim}},
		{"R", &m.R, []int{len(man.Items), mi.Dim}},
	} {
		tt, ok := t[e.name]
		if !ok {
			if e.name == "R" {
				continue
			}
			return nil, fmt.Errorf("%s: tensor %s is missing", wpath, e.name)
		}
		if !slices.Equal(tt.Shape, e.shape) {
			return nil, fmt.Errorf("%s: tensor %s has shape %v, the manifest implies %v", wpath, e.name, tt.Shape, e.shape)
		}
		for i, v := range tt.Data {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return nil, fmt.Errorf("%s: tensor %s holds a non-finite value (%v at flat index %d); the training that wrote it diverged", wpath, e.name, v, i)
			}
		}
		*e.dst = tt.Data
	}
	c.Model = m
	return c, m.Check()
}
