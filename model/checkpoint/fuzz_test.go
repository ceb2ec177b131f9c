package checkpoint

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/model/tensorfile"
)

// FuzzLoadCheckpoint fuzzes manifest.json and model.safetensors of a
// checkpoint folder.
func FuzzLoadCheckpoint(f *testing.F) {
	seed := filepath.Join(f.TempDir(), "ck")
	if err := (&Checkpoint{Model: smallJEIRT()}).Write(seed, false); err != nil {
		f.Fatal(err)
	}
	man, _ := os.ReadFile(filepath.Join(seed, ManifestFile))
	w, _ := os.ReadFile(filepath.Join(seed, WeightsFile))
	f.Add(man, w)
	f.Add([]byte(strings.Replace(string(man), `"llama"`, `"gpt"`, 1)), w)
	f.Add([]byte(strings.Replace(string(man), `"dim": 2`, `"dim": 1000000000`, 1)), w)
	nan := bytes.Clone(w)
	binary.LittleEndian.PutUint32(nan[len(nan)-4:], math.Float32bits(float32(math.NaN())))
	f.Add(man, nan)
	// Format version 2 binds the files: names swapped, a hash that points
	// outside the folder; version 1 (no hashes) with and without a NaN.
	f.Add([]byte(strings.NewReplacer(`"gpt"`, `"llama"`, `"llama"`, `"gpt"`).Replace(string(man))), w)
	f.Add(regexp.MustCompile(`"model.safetensors"`).ReplaceAll(man, []byte(`"../model.safetensors"`)), w)
	v1 := regexp.MustCompile(`(?s),\s*"sha256": \{[^}]*\}`).ReplaceAll(man, nil)
	v1 = bytes.Replace(v1, []byte(`"format_version": 2`), []byte(`"format_version": 1`), 1)
	f.Add(v1, w) // refused: the weights record version 2
	// A real version-1 folder: its weights record version 1 (same length).
	w1 := bytes.Replace(w, []byte(`"format_version":"2"`), []byte(`"format_version":"1"`), 1)
	if bytes.Equal(w1, w) {
		f.Fatal("the weights do not record format_version 2")
	}
	f.Add(v1, w1)
	f.Add(v1, nan)
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, manifest, weights []byte) {
		ck := filepath.Join(dir, "ck")
		os.MkdirAll(ck, 0o755)
		os.WriteFile(filepath.Join(ck, ManifestFile), manifest, 0o644)
		os.WriteFile(filepath.Join(ck, WeightsFile), weights, 0o644)
		c, err := Load(ck)
		if err != nil {
			return
		}
		if st, err := tensorfile.ParseSafetensors("w", weights); err == nil {
			if v, ok := st.Metadata["format_version"]; ok && v != strconv.Itoa(c.Manifest.FormatVersion) {
				t.Fatalf("loaded a format_version %d manifest with weights of version %s", c.Manifest.FormatVersion, v)
			}
		}
		if c.Manifest.FormatVersion >= 2 {
			// A loaded version-2 checkpoint is the one Write wrote: its
			// weights are the bytes the manifest names, for its identity.
			sum := sha256.Sum256(weights)
			if hex.EncodeToString(sum[:]) != c.Manifest.SHA256[WeightsFile] {
				t.Fatal("weights loaded whose hash the manifest does not record")
			}
		} else if len(c.Warnings) == 0 {
			t.Fatal("a version-1 checkpoint loaded without a warning")
		}
		m := c.Model
		for _, v := range m.M {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				t.Fatal("non-finite weight loaded")
			}
		}
		if m.NumModels() > 0 && m.NumItems() > 0 {
			p := m.Prob(0, m.ItemEmbedding(0))
			if math.IsNaN(p) {
				t.Fatalf("P is NaN")
			}
		}
	})
}

// FuzzParseDomain feeds a checkpoint's out-of-domain reference (domain.safetensors)
// to ParseDomain: every input gives a domain whose vectors match its shape, or
// an error.
func FuzzParseDomain(f *testing.F) {
	d, err := NewDomain([]float32{1, 0, 0, 1, 0.6, 0.8}, 2, []int{0, 1, 2}, 0)
	if err != nil {
		f.Fatal(err)
	}
	b, err := d.Marshal()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add(safetensorsBytes(`{"reference":{"dtype":"F32","shape":[1,1],"data_offsets":[0,4]},"__metadata__":{"threshold":"NaN","quantile":"2"}}`, 4))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := ParseDomain("domain.safetensors", data)
		if err != nil {
			if len(err.Error()) > 4096 {
				t.Errorf("error of %d bytes", len(err.Error()))
			}
			return
		}
		if d.Dim < 1 || len(d.Vectors) != d.NumReference()*d.Dim || !(d.Threshold >= 0) || math.IsInf(d.Threshold, 0) || !(d.FalseFlagRate >= 0 && d.FalseFlagRate <= 1) || d.Calibration < 0 {
			t.Fatalf("dim %d, %d values for %d references, threshold %v, rate %v, calibration %d", d.Dim, len(d.Vectors), d.NumReference(), d.Threshold, d.FalseFlagRate, d.Calibration)
		}
	})
}

// safetensorsBytes is a safetensors file with the given header and data bytes.
func safetensorsBytes(header string, data int) []byte {
	var b bytes.Buffer
	binary.Write(&b, binary.LittleEndian, uint64(len(header)))
	b.WriteString(header)
	b.Write(make([]byte, data))
	return b.Bytes()
}
