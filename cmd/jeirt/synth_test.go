package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/model/fileio"
	"github.com/jeirt/jeirt/model/read"
	"github.com/jeirt/jeirt/model/synth"
	"github.com/spf13/cobra"
)

// run executes a fresh command with args and returns its standard output.
func runCmd(t *testing.T, cmd *cobra.Command, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(context.Background())
	return out.String(), err
}

func TestSynthCommandDeterministicAndRereads(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		kind  string
		args  []string
		files []string
	}{
		{"2pl", nil, []string{fileio.OutputMarker, "responses.csv", "synth.json", "truth_items.csv", "truth_models.csv"}},
		{"mirt", []string{"--rank", "3"}, []string{fileio.OutputMarker, "responses.csv", "synth.json", "truth_items.csv", "truth_models.csv"}},
		{"jeirt", []string{"--dim", "6", "--embed-dim", "3"}, []string{fileio.OutputMarker, "features.npy", "items.csv", "responses.csv", "synth.json", "truth_m.csv", "truth_q.csv"}},
	}
	for _, c := range cases {
		var outs [2]string
		for k := range outs {
			outs[k] = filepath.Join(dir, c.kind+string(rune('a'+k)))
			args := append([]string{"--kind", c.kind, "--n-models", "17", "--n-items", "60", "--missing", "0.25", "--seed", "9", "--out", outs[k]}, c.args...)
			if _, err := runCmd(t, newSynthCmd(), args...); err != nil {
				t.Fatal(err)
			}
		}
		entries, _ := os.ReadDir(outs[0])
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
			if e.Name() == fileio.OutputMarker {
				continue // it records when it was written
			}
			a, _ := os.ReadFile(filepath.Join(outs[0], e.Name()))
			b, err := os.ReadFile(filepath.Join(outs[1], e.Name()))
			if err != nil || !bytes.Equal(a, b) {
				t.Errorf("%s/%s differs between two runs with the same seed", c.kind, e.Name())
			}
		}
		if strings.Join(names, " ") != strings.Join(c.files, " ") {
			t.Errorf("%s: files %v, want %v", c.kind, names, c.files)
		}
		// Re-reading gives the generator's counts and labels.
		opt := synth.Options{Kind: c.kind, Models: 17, Items: 60, Missing: 0.25, Seed: 9, FeatureDim: 6, EmbedDim: 3}
		if c.kind == "mirt" {
			opt.Rank = 3
		}
		if c.kind != "jeirt" {
			opt.FeatureDim, opt.EmbedDim = 0, 0
		}
		want, truth, err := synth.Generate(opt)
		if err != nil {
			t.Fatal(err)
		}
		ro := read.Options{Duplicates: "error"}
		if c.kind == "jeirt" {
			ro.Items = filepath.Join(outs[0], "items.csv")
		}
		got, _, err := read.File(filepath.Join(outs[0], "responses.csv"), ro)
		if err != nil {
			t.Fatal(err)
		}
		if got.NumModels() != 17 || got.NumItems() != 60 || got.Len() != want.Len() || got.MeanCorrect() != want.MeanCorrect() {
			t.Errorf("%s: re-read %d models, %d items, %d cells (mean %v); want 17, 60, %d (%v)",
				c.kind, got.NumModels(), got.NumItems(), got.Len(), got.MeanCorrect(), want.Len(), want.MeanCorrect())
		}
		if c.kind == "jeirt" {
			for j, id := range want.Items {
				k := got.ItemIndex(id)
				if k < 0 || got.ItemText[k] != want.ItemText[j] || got.ItemGroup[k] != want.ItemGroup[j] {
					t.Fatalf("jeirt item %s: text and group not re-read", id)
				}
			}
		}
		if c.kind == "mirt" {
			b, _ := os.ReadFile(filepath.Join(outs[0], "truth_items.csv"))
			lines := strings.Split(string(b), "\n")
			if lines[0] != "item,a_1,a_2,a_3,b" || len(lines) != 62 {
				t.Errorf("truth_items.csv header %q, %d lines", lines[0], len(lines))
			}
			// Values are written in shortest round-trip form: parsing gives the truth exactly.
			fields := strings.Split(lines[1], ",")
			b0, err := strconv.ParseFloat(fields[4], 64)
			a2, err2 := strconv.ParseFloat(fields[2], 64)
			if err != nil || err2 != nil || b0 != truth.B[0] || a2 != truth.A[1] {
				t.Errorf("truth_items.csv row 1 = %v, want a_2 %v, b %v", fields, truth.A[1], truth.B[0])
			}
		}
		if c.kind == "jeirt" {
			b, _ := os.ReadFile(filepath.Join(outs[0], "features.npy"))
			if !bytes.Contains(b[:128], []byte("'shape': (60, 6)")) || len(b) != 128+60*6*4 {
				t.Errorf("features.npy: %d bytes, header %q", len(b), b[:64])
			}
		}
	}
	// An existing folder is not overwritten without --force.
	_, err := runCmd(t, newSynthCmd(), "--kind", "2pl", "--n-models", "3", "--n-items", "4", "--out", filepath.Join(dir, "2pla"))
	if err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("existing --out: %v", err)
	}
	if _, err := runCmd(t, newSynthCmd(), "--kind", "2pl", "--n-models", "3", "--n-items", "4", "--out", filepath.Join(dir, "2pla"), "--force"); err != nil {
		t.Errorf("--force: %v", err)
	}
}
