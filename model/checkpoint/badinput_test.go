package checkpoint

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/model"
)

func TestCheckpointRefusesNaNAndBadManifest(t *testing.T) {
	write := func(t *testing.T, m *model.JEIRT) string {
		dir := filepath.Join(t.TempDir(), "ck")
		if err := (&Checkpoint{Model: m}).Write(dir, false); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	m := smallJEIRT()
	m.M[0] = float32(math.NaN())
	if err := (&Checkpoint{Model: m}).Write(filepath.Join(t.TempDir(), "ck"), false); err == nil || !strings.Contains(err.Error(), "non-finite") {
		t.Errorf("writing a NaN model table: %v", err)
	}
	// A NaN written by another program, with the manifest's hash made to match.
	dir := write(t, smallJEIRT())
	wpath := filepath.Join(dir, WeightsFile)
	w, _ := os.ReadFile(wpath)
	binary.LittleEndian.PutUint32(w[len(w)-4:], math.Float32bits(float32(math.NaN())))
	os.WriteFile(wpath, w, 0o644)
	rehash(t, dir)
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "non-finite") {
		t.Errorf("NaN model table: %v", err)
	}
	edit := func(t *testing.T, f func(*Manifest)) string {
		dir := write(t, smallJEIRT())
		p := filepath.Join(dir, ManifestFile)
		raw, _ := os.ReadFile(p)
		var man Manifest
		if err := json.Unmarshal(raw, &man); err != nil {
			t.Fatal(err)
		}
		f(&man)
		raw, _ = json.Marshal(&man)
		os.WriteFile(p, raw, 0o644)
		return dir
	}
	if _, err := Load(edit(t, func(m *Manifest) { m.Models[1] = m.Models[0] })); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("duplicate model names: %v", err)
	}
	if _, err := Load(edit(t, func(m *Manifest) { m.Model.Dim = 1e9 })); err == nil || !strings.Contains(err.Error(), "model.dim") {
		t.Errorf("model.dim 1e9: %v", err)
	}
	// A version-2 manifest set back to version 1 (which skips the hash and
	// identity checks), with or without its hashes, and with another run's
	// model names: the weights record version 2, so it is refused, naming
	// both files.
	for _, f := range []func(*Manifest){
		func(m *Manifest) { m.FormatVersion = 1 },
		func(m *Manifest) { m.FormatVersion, m.SHA256 = 1, nil },
		func(m *Manifest) { m.FormatVersion, m.SHA256, m.Models[0] = 1, nil, "another-run" },
	} {
		dir := edit(t, f)
		_, err := Load(dir)
		if err == nil || !strings.Contains(err.Error(), "format_version 2, the manifest says 1") ||
			!strings.Contains(err.Error(), ManifestFile) || !strings.Contains(err.Error(), WeightsFile) {
			t.Errorf("a downgraded manifest: %v", err)
		}
	}
	// A manifest set to a version the weights do not record.
	if _, err := Load(edit(t, func(m *Manifest) { m.FormatVersion = 3 })); err == nil || !strings.Contains(err.Error(), "format_version 3 is not supported") {
		t.Errorf("format_version 3: %v", err)
	}
}

// rehash makes the manifest of the checkpoint in dir record the SHA-256 of
// its files as they are now, as a writer other than jeirt might.
func rehash(t *testing.T, dir string) {
	t.Helper()
	p := filepath.Join(dir, ManifestFile)
	raw, _ := os.ReadFile(p)
	var man map[string]any
	if err := json.Unmarshal(raw, &man); err != nil {
		t.Fatal(err)
	}
	sums := man["sha256"].(map[string]any)
	for name := range sums {
		b, _ := os.ReadFile(filepath.Join(dir, name))
		sum := sha256.Sum256(b)
		sums[name] = hex.EncodeToString(sum[:])
	}
	raw, _ = json.Marshal(man)
	os.WriteFile(p, raw, 0o644)
}
