package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/model/checkpoint"
	"github.com/jeirt/jeirt/model/read"
	"github.com/jeirt/jeirt/model/synth"
)

// A training config names the columns of a file with an unknown header and
// its delimiter (data.columns, data.delimiter), as --columns and
// --delimiter do on the command line.
func TestConfigColumnsAndDelimiter(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	r, _, err := synth.Generate(synth.Options{Kind: "2pl", Models: 8, Items: 20, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	if err := read.WriteLongCSV("std.csv", r); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile("std.csv")
	lines := strings.Split(string(b), "\n")
	lines[0] = "Model Name|Question|Score"
	for k := 1; k < len(lines); k++ {
		lines[k] = strings.ReplaceAll(lines[k], ",", "|")
	}
	writeUserFile(t, "odd.txt", strings.Join(lines, "\n"))
	writeUserFile(t, "c.yaml", "data: {responses: odd.txt, columns: \"model=Model Name,item=Question,label=Score\", delimiter: \"|\"}\n"+
		"encoder: {spec: \"hash:8\"}\nmodel: {dim: 2, hidden: 4}\ntrain: {epochs: 1}\nroute: {folds: 0}\noutput: ck\n")
	if out, err := runCmd(t, newTrainCmd(), "--config", "c.yaml", "--no-baselines"); err != nil {
		t.Fatal(err, out)
	}
	ck, err := checkpoint.Load(filepath.Join(dir, "ck"))
	if err != nil {
		t.Fatal(err)
	}
	want, _, err := read.File("std.csv", read.Options{NoCache: true})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ck.Manifest.Models, want.Models) || !slices.Equal(ck.Manifest.Items, want.Items) {
		t.Errorf("trained on models %v items %d, want %v items %d", ck.Manifest.Models, len(ck.Manifest.Items), want.Models, len(want.Items))
	}
	// The same on the command line.
	got, err := runCmd(t, newDataInspectCmd(), "--data", "odd.txt", "--columns", "model=Model Name,item=Question,label=Score", "--delimiter", "|", "--print", "json")
	if err != nil || !strings.Contains(got, `"observed": 160`) {
		t.Errorf("inspect: %v\n%s", err, got)
	}
}
