// Package sweep holds a sweep's files: sweep.json, the manifest of its
// runs that jeirt sweep writes (Manifest, ReadManifest), and the table of
// the runs' metrics collected from their checkpoints (Collect, Table), which
// jeirt sweep collect and jeirt analyze dims read.
package sweep

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/fileio"
	"github.com/jeirt/jeirt/model/limits"
)

// Setting is one config override.
type Setting struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// MaxRuns is the most runs a sweep may have (the product of its grid's and
// seeds' lengths).
const MaxRuns = 100_000

// Manifest is sweep.json in the sweep folder: what `jeirt sweep collect`
// reads.
type Manifest struct {
	Format  string       `json:"format"` // "jeirt-sweep"
	Version int          `json:"format_version"`
	Source  string       `json:"source"`
	Base    string       `json:"base"`
	Keys    []string     `json:"keys"`
	Runs    []RunSummary `json:"runs"`
	Slurm   any          `json:"slurm"` // the resources of each array task (sweeprun.SlurmSettings); read back as a JSON object
	Created string       `json:"created,omitempty"`
}

// RunSummary is one run in sweep.json.
type RunSummary struct {
	ID       string    `json:"id"`
	Dir      string    `json:"dir"` // relative to the sweep folder
	Settings []Setting `json:"settings"`
}

// Format is a manifest's format field.
const Format = "jeirt-sweep"

// ManifestFile is the manifest's name in the sweep folder.
const ManifestFile = "sweep.json"

// ReadManifest reads dir/sweep.json.
func ReadManifest(dir string) (*Manifest, error) {
	p := filepath.Join(dir, ManifestFile)
	raw, err := fileio.ReadInputFile(p, fileio.MaxDocumentBytes, "a sweep manifest")
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, model.FieldErrorf("Emit", "%s is not a sweep folder: no %s (write one with jeirt sweep {Emit})", dir, ManifestFile)
		}
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	if m.Format != Format {
		return nil, fmt.Errorf("%s: format %q, want %q", p, limits.Clip(m.Format), Format)
	}
	if len(m.Runs) == 0 {
		return nil, fmt.Errorf("%s: no runs", p)
	}
	if len(m.Runs) > MaxRuns {
		return nil, fmt.Errorf("%s: field runs: %d runs, more than a sweep may have (%d); emit the sweep again", p, len(m.Runs), MaxRuns)
	}
	seen := map[string]bool{}
	for i, r := range m.Runs {
		if !filepath.IsLocal(r.Dir) {
			return nil, fmt.Errorf("%s: run %d's dir %q is not a folder inside the sweep folder", p, i+1, limits.Clip(r.Dir))
		}
		// jeirt writes run k as id NNN in runs/NNN.
		if !runIDRE.MatchString(r.ID) || seen[r.ID] || r.Dir != filepath.Join("runs", r.ID) {
			return nil, fmt.Errorf("%s: field runs[%d]: id %q, dir %q: want a run number, once, in runs/NUMBER; emit the sweep again", p, i, limits.Clip(r.ID), limits.Clip(r.Dir))
		}
		seen[r.ID] = true
	}
	return &m, nil
}

var runIDRE = regexp.MustCompile(`^[0-9]{1,9}$`)

// FormatSettings writes settings as "model.dim=64 train.lr=3e-05".
func FormatSettings(settings []Setting) string {
	parts := make([]string, len(settings))
	for k, st := range settings {
		parts[k] = st.Key + "=" + st.Value
	}
	if len(parts) == 0 {
		return "base config"
	}
	return strings.Join(parts, " ")
}
