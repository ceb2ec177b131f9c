package checkpoint

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/fileio"
	"github.com/jeirt/jeirt/model/limits"
	"github.com/jeirt/jeirt/model/progress"
	"github.com/jeirt/jeirt/model/tensorfile"
)

// A JE-IRT checkpoint is a folder holding two files:
//
//	model.safetensors  float32 tensors W1 [hidden, D], c1 [hidden], W2 [d, hidden],
//	                   c2 [d], M [models, d], Q [items, d] and, when the
//	                   per-question residual is on, R [items, d]
//	manifest.json      Manifest: names of the rows of M and Q, encoder, config, metrics
//
// (and the extra files: metrics.json, the out-of-domain reference, a fitted
// encoder's state). Python reads it with safetensors alone:
//
//	t = safetensors.numpy.load_file("DIR/model.safetensors")
//	q = np.maximum(x @ t["W1"].T + t["c1"], 0) @ t["W2"].T + t["c2"]
//
// The folder is one thing (format version 2): the manifest records the
// SHA-256 of every other file (Manifest.SHA256), and the weights' metadata
// records the SHA-256 of the manifest's identity (IdentitySHA256: the model
// names, item ids, encoder fingerprint, shape, config, metrics and routing), so
// replacing the weights, editing the manifest (two model names swapped) or
// pairing a manifest with another run's weights is an error naming both
// files. A version-1 folder (written before the hashes) loads with a warning.
const (
	Format        = "jeirt-checkpoint"
	FormatVersion = 2
	WeightsFile   = "model.safetensors"
	ManifestFile  = "manifest.json"
	// IdentityKey is the weights' metadata key holding IdentitySHA256 of
	// the manifest they were written with.
	IdentityKey = "manifest_sha256"
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

	// Routing is the default routing rule and the out-of-domain check
	// (nil in a checkpoint written before jeirt chose one).
	Routing *Routing `json:"routing,omitempty"`

	// SHA256 is the hex SHA-256 of every other file of the folder, by name
	// (model.safetensors, metrics.json, ...), set by Write; Load
	// refuses a folder whose files differ.
	SHA256 map[string]string `json:"sha256,omitempty"`
}

// IdentitySHA256 is the hex SHA-256 of what makes the manifest describe one
// set of weights: every field but SHA256 and the encoder's locations (spec,
// path, rel_path, which a moved checkpoint or encoder may change), as
// compact JSON with config and metrics in canonical form (keys sorted,
// strings as Go escapes them), so that a manifest read and written again by
// another JSON library keeps its identity. Write stores it in the weights'
// metadata (IdentityKey).
func (m *Manifest) IdentitySHA256() string {
	id := *m
	id.SHA256 = nil
	id.Encoder.Spec, id.Encoder.Path, id.Encoder.RelPath = "", "", ""
	id.Config, id.Metrics = canonicalJSON(id.Config), canonicalJSON(id.Metrics)
	b, err := json.Marshal(&id)
	if err != nil { // only a malformed raw config or metrics, which Unmarshal refused
		b = []byte(err.Error())
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
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
	// state; Data holds their contents (read by Load, written by
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
	Model    *model.JEIRT
	// Files are extra files written into the folder with the checkpoint
	// (metrics.json), by name. Load does not read them.
	Files map[string][]byte
	// Dir is the folder Load read the checkpoint from.
	Dir string
	// Encoder, when set (a command's --encoder), is the spec to open the
	// encoder with instead of the manifest's location; its fingerprint must
	// still be the manifest's.
	Encoder string
	// Warnings are what Load could not check (a version-1
	// folder has no hashes); commands print them (LogWarnings).
	Warnings []string
}

// LogWarnings prints the checkpoint's warnings on log.
func (c *Checkpoint) LogWarnings(log progress.Logf) {
	for _, w := range c.Warnings {
		log.Printf("warning: %s", w)
	}
}

// Where names the checkpoint's weights in errors: the model.safetensors it
// was read from, or "the checkpoint" for one not read from disk.
func (c *Checkpoint) Where() string {
	if c.Dir == "" {
		return "the checkpoint"
	}
	return "checkpoint " + filepath.Join(c.Dir, WeightsFile)
}

// InManifest prefixes err with the checkpoint's manifest.json, the file
// whose contents it is about (nothing for a checkpoint not read from disk).
func (c *Checkpoint) InManifest(err error) error {
	if c.Dir == "" {
		return err
	}
	return fmt.Errorf("%s: %w", filepath.Join(c.Dir, ManifestFile), err)
}

// Write writes the checkpoint folder atomically: dir appears complete or not
// at all. An existing dir is replaced only when replace is true. Manifest's
// format, version, models, items and shape fields are filled from the model.
func (c *Checkpoint) Write(dir string, replace bool) error {
	m := c.Model
	if err := m.Check(); err != nil {
		return err
	}
	for _, t := range []struct {
		name string
		v    []float32
	}{{"W1", m.W1}, {"c1", m.C1}, {"W2", m.W2}, {"c2", m.C2}, {"M", m.M}, {"Q", m.Q}, {"R", m.R}} {
		for k, v := range t.v {
			if v-v != 0 {
				return fmt.Errorf("checkpoint %s: tensor %s holds %v at flat index %d: a checkpoint with a non-finite weight is not written", dir, t.name, v, k)
			}
		}
	}
	c.Manifest.Format = Format
	c.Manifest.FormatVersion = FormatVersion
	c.Manifest.Models, c.Manifest.Items = m.Models, m.Items
	c.Manifest.Model.Link = Link
	c.Manifest.Model.InputDim, c.Manifest.Model.Hidden, c.Manifest.Model.Dim = m.InputDim, m.Hidden, m.Dim
	if m.R == nil {
		c.Manifest.Model.Residual = 0
	}
	tensors := map[string]tensorfile.Tensor{
		"W1": {Shape: []int{m.Hidden, m.InputDim}, Data: m.W1},
		"c1": {Shape: []int{m.Hidden}, Data: m.C1},
		"W2": {Shape: []int{m.Dim, m.Hidden}, Data: m.W2},
		"c2": {Shape: []int{m.Dim}, Data: m.C2},
		"M":  {Shape: []int{len(m.Models), m.Dim}, Data: m.M},
		"Q":  {Shape: []int{len(m.Items), m.Dim}, Data: m.Q},
	}
	if m.R != nil {
		tensors["R"] = tensorfile.Tensor{Shape: []int{len(m.Items), m.Dim}, Data: m.R}
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
		if _, ok := c.Files[name]; ok || name != filepath.Base(name) || name == WeightsFile || name == ManifestFile {
			return fmt.Errorf("checkpoint: encoder file name %q is not allowed", name)
		}
	}
	c.Manifest.SHA256 = nil
	meta := map[string]string{"format": Format, "format_version": strconv.Itoa(FormatVersion),
		IdentityKey: c.Manifest.IdentitySHA256()}
	sums := map[string]string{}
	return fileio.WriteDirAtomic(dir, replace, func(tmp string) error {
		h := sha256.New()
		if err := fileio.WriteFileAtomic(filepath.Join(tmp, WeightsFile), func(w io.Writer) error {
			h.Reset()
			return tensorfile.WriteSafetensors(io.MultiWriter(w, h), tensors, meta)
		}); err != nil {
			return err
		}
		sums[WeightsFile] = hex.EncodeToString(h.Sum(nil))
		put := func(name string, data []byte) error {
			sum := sha256.Sum256(data)
			sums[name] = hex.EncodeToString(sum[:])
			return os.WriteFile(filepath.Join(tmp, name), data, 0o644)
		}
		for name, data := range c.Files {
			if name != filepath.Base(name) || name == WeightsFile || name == ManifestFile {
				return fmt.Errorf("checkpoint: extra file name %q is not allowed", name)
			}
			if err := put(name, data); err != nil {
				return err
			}
		}
		for _, name := range enc.Files {
			if err := put(name, enc.Data[name]); err != nil {
				return err
			}
		}
		c.Manifest.SHA256 = sums
		return fileio.WriteFileAtomic(filepath.Join(tmp, ManifestFile), func(w io.Writer) error {
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			return enc.Encode(&c.Manifest)
		})
	})
}

// Load reads a checkpoint folder written by Write.
func Load(dir string) (*Checkpoint, error) {
	raw, err := fileio.ReadInputFile(filepath.Join(dir, ManifestFile), fileio.MaxDocumentBytes, "a manifest")
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			if _, serr := os.Stat(dir); serr != nil {
				return nil, fmt.Errorf("checkpoint %s: %w", dir, serr)
			}
			return nil, fmt.Errorf("%s is not a jeirt checkpoint: no %s", dir, ManifestFile)
		}
		return nil, err
	}
	c := &Checkpoint{}
	mpath := filepath.Join(dir, ManifestFile)
	if err := json.Unmarshal(raw, &c.Manifest); err != nil {
		return nil, fmt.Errorf("%s: %w", mpath, err)
	}
	man := &c.Manifest
	if man.Format != Format {
		return nil, fmt.Errorf("%s: format %q, want %q", mpath, limits.Clip(man.Format), Format)
	}
	if man.FormatVersion < 1 || man.FormatVersion > FormatVersion {
		return nil, fmt.Errorf("%s: format_version %d is not supported by this jeirt (reads 1 to %d)", mpath, man.FormatVersion, FormatVersion)
	}
	c.Dir = dir
	mi := man.Model
	for _, d := range []struct {
		key    string
		v, min int
	}{{"model.input_dim", mi.InputDim, 1}, {"model.hidden", mi.Hidden, 1}, {"model.dim", mi.Dim, 1}} {
		if d.v < d.min || d.v > limits.MaxDim {
			return nil, fmt.Errorf("%s: %s %d is outside [%d, %d]", mpath, d.key, d.v, d.min, limits.MaxDim)
		}
	}
	for _, names := range []struct {
		key  string
		list []string
	}{{"models", man.Models}, {"items", man.Items}} {
		seen := make(map[string]bool, len(names.list))
		for _, n := range names.list {
			if seen[n] {
				return nil, fmt.Errorf("%s: %s: %q appears twice", mpath, names.key, limits.Clip(n))
			}
			seen[n] = true
		}
	}
	if man.Routing != nil {
		if err := man.Routing.Check(man.Models); err != nil {
			return nil, fmt.Errorf("%s: %w", mpath, err)
		}
	}
	wpath := filepath.Join(dir, WeightsFile)
	if man.FormatVersion < 2 {
		c.Warnings = append(c.Warnings, fmt.Sprintf("%s was written by jeirt %s before checkpoints recorded hashes: nothing checks that %s belongs to %s "+
			"(a model name swapped in the manifest would go unnoticed); write it again (jeirt train, or jeirt add-model) to have it checked",
			dir, orUnknown(man.JEIRTVersion), ManifestFile, WeightsFile))
	} else if man.SHA256[WeightsFile] == "" {
		return nil, fmt.Errorf("%s: sha256 records no hash of %s (format_version %d has one): the manifest was edited or is not jeirt's", mpath, WeightsFile, man.FormatVersion)
	}
	for name := range man.SHA256 {
		if name != filepath.Base(name) || name == ManifestFile || name == "." || name == ".." {
			return nil, fmt.Errorf("%s: sha256: %q is not a file of the checkpoint", mpath, limits.Clip(name))
		}
	}
	// checked reads one of the folder's files and compares it with the
	// manifest's hash (none recorded in a version-1 folder).
	checked := func(name string) ([]byte, error) {
		p := filepath.Join(dir, name)
		b, err := fileio.ReadInputFile(p, 0, "a checkpoint file")
		if err != nil {
			return nil, fmt.Errorf("%s names %s: %w", mpath, name, err)
		}
		if want, ok := man.SHA256[name]; ok || man.FormatVersion >= 2 {
			sum := sha256.Sum256(b)
			if got := hex.EncodeToString(sum[:]); got != want {
				return nil, fmt.Errorf("%s does not match %s: its SHA-256 is %s, the manifest records %s (the file was replaced or changed, or the manifest belongs to another checkpoint)",
					p, mpath, short(got), short(want))
			}
		}
		return b, nil
	}
	// The weights first: a manifest from another run says so about them.
	wb, err := checked(WeightsFile)
	if err != nil {
		return nil, err
	}
	if len(man.Encoder.Files) > 0 {
		man.Encoder.Data = make(map[string][]byte, len(man.Encoder.Files))
		for _, name := range man.Encoder.Files {
			if name != filepath.Base(name) {
				return nil, fmt.Errorf("%s: encoder.files: %q is not a file name", mpath, name)
			}
			b, err := checked(name)
			if err != nil {
				return nil, fmt.Errorf("the encoder's file: %w", err)
			}
			man.Encoder.Data[name] = b
		}
	}
	for _, name := range slices.Sorted(maps.Keys(man.SHA256)) { // the extra files, read by the commands that use them
		if name != WeightsFile && !slices.Contains(man.Encoder.Files, name) {
			if _, err := checked(name); err != nil {
				return nil, err
			}
		}
	}
	st, err := tensorfile.ParseSafetensors(wpath, wb)
	if err != nil {
		return nil, err
	}
	// The weights record the format version too, so a manifest set back to
	// an older version (which skips the checks above) is caught.
	if v, ok := st.Metadata["format_version"]; ok && v != strconv.Itoa(man.FormatVersion) {
		return nil, fmt.Errorf("%s does not match %s: the weights were written as format_version %s, the manifest says %d (the manifest was edited or comes from another checkpoint)",
			mpath, wpath, limits.Clip(v), man.FormatVersion)
	}
	t := st.Tensors
	m := &model.JEIRT{InputDim: mi.InputDim, Hidden: mi.Hidden, Dim: mi.Dim, Models: man.Models, Items: man.Items}
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
	if man.FormatVersion >= 2 {
		// The weights name the manifest they were written with.
		if got, want := man.IdentitySHA256(), st.Metadata[IdentityKey]; got != want {
			return nil, fmt.Errorf("%s does not match %s: the weights were written with a manifest whose identity (models, items, encoder fingerprint, shape, config, metrics, routing) hashes to %s, this one hashes to %s; "+
				"the manifest was edited (a model or item renamed or reordered, a setting changed) or comes from another run",
				mpath, wpath, short(want), short(got))
		}
	}
	c.Model = m
	return c, m.Check()
}

// canonicalJSON is raw decoded and encoded again: object keys sorted,
// numbers as written, strings escaped one way. Raw that does not decode is
// returned as it is (Unmarshal has refused it already).
func canonicalJSON(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return raw
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return raw
	}
	b, err := json.Marshal(v)
	if err != nil {
		return raw
	}
	return b
}

// short is the first 12 hex digits of a hash, enough to tell two apart.
func short(h string) string {
	if h == "" {
		return "nothing"
	}
	if len(h) > 12 {
		return h[:12] + "…"
	}
	return h
}

func orUnknown(v string) string {
	if v == "" {
		return "(version unknown)"
	}
	return v
}

// Open is Load as a command opens a checkpoint: what could not be checked
// (an old folder without hashes) is said on log, and encoder, when not "",
// is the spec to open the encoder with instead of the recorded location
// (its fingerprint must still match).
func Open(dir, encoder string, log progress.Logf) (*Checkpoint, error) {
	ck, err := Load(dir)
	if err != nil {
		return nil, err
	}
	ck.LogWarnings(log)
	ck.Encoder = encoder
	return ck, nil
}
