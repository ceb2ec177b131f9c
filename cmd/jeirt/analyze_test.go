package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/model/read"
	"github.com/jeirt/jeirt/model/synth"
	"github.com/jeirt/jeirt/train/pipeline"
)

// The analyze commands on a simulated benchmark with topic categories: a
// small JE-IRT checkpoint for directions and probe, a 2PL fit for icc.
func TestAnalyzeCommands(t *testing.T) {
	dir := t.TempDir()
	p := func(s string) string { return filepath.Join(dir, s) }
	r, _, err := synth.Generate(synth.Options{Kind: "jeirt", Models: 30, Items: 200, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	if err := read.WriteLongCSV(p("responses.csv"), r); err != nil {
		t.Fatal(err)
	}
	if err := read.WriteItemsCSV(p("items.csv"), r); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(p("c.yaml"), []byte("data: {responses: responses.csv, items: items.csv}\nencoder: {spec: \"hash:64\"}\nmodel: {dim: 8}\ntrain: {epochs: 3, batch_size: 128}\noutput: ckpt\n"), 0o644)
	cfg, err := pipeline.LoadConfig(p("c.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pipeline.Run(context.Background(), cfg, pipeline.Options{NoBaselines: true}); err != nil {
		t.Fatal(err)
	}

	out, err := runCmd(t, newAnalyzeCmd(), "directions", "--checkpoint", p("ckpt"), "--groups", p("items.csv"), "--out", p("dir"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "ARI") || len(readCSVFile(t, p("dir/assignments.csv"))) != 201 {
		t.Errorf("directions:\n%s", out)
	}
	cl := readCSVFile(t, p("dir/clusters.csv"))
	if last := cl[len(cl)-1]; last[0] != "all" || last[4] == "" || last[5] == "" {
		t.Errorf("clusters.csv last row %v", last)
	}

	out, err = runCmd(t, newAnalyzeCmd(), "probe", "--checkpoint", p("ckpt"), "--groups", p("items.csv"), "--axis", "topic_01,topic_02",
		"--data", p("responses.csv"), "--out", p("probe"))
	if err != nil {
		t.Fatal(err)
	}
	pr := readCSVFile(t, p("probe/probe.csv"))
	if strings.Join(pr[0], ",") != "model,projection,accuracy_topic_01,accuracy_topic_02" || len(pr) != 31 || pr[1][2] == "" {
		t.Errorf("probe.csv: %v ...\n%s", pr[:2], out)
	}

	if _, err := runCmd(t, newIRTCmd(), "fit", "--data", p("responses.csv"), "--out", p("fit")); err != nil {
		t.Fatal(err)
	}
	out, err = runCmd(t, newAnalyzeCmd(), "icc", "--fit", p("fit"), "--bins", "3", "--out", p("icc"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "200 items, 3 ability bins") || len(readCSVFile(t, p("icc/icc_curves.csv"))) != 1+200*3 {
		t.Errorf("icc:\n%s", out)
	}
	// Each figure is written as SVG and as PNG.
	for _, f := range []string{"dir/directions", "probe/probe", "icc/icc"} {
		svg, err1 := os.ReadFile(p(f + ".svg"))
		png, err2 := os.ReadFile(p(f + ".png"))
		if err1 != nil || err2 != nil || !bytes.Contains(svg, []byte("sans-serif")) || !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) {
			t.Errorf("%s: %v, %v", f, err1, err2)
		}
	}

	// Two leave-one-benchmark-out runs, tabled by analyze lobo.
	var lobo []string
	for _, hold := range []string{"topic_01", "topic_02"} {
		cfg, err := pipeline.LoadConfig(p("c.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		cfg.Split.By, cfg.Split.Hold, cfg.Output = "benchmark", hold, p("lobo-"+hold)
		if _, err := pipeline.Run(context.Background(), cfg, pipeline.Options{NoBaselines: true}); err != nil {
			t.Fatal(err)
		}
		lobo = append(lobo, cfg.Output)
	}
	out, err = runCmd(t, newAnalyzeCmd(), append([]string{"lobo", "--out", p("lobo")}, lobo...)...)
	if err != nil {
		t.Fatal(err)
	}
	if tab := readCSVFile(t, p("lobo/lobo.csv")); len(tab) != 3 || tab[1][0] != "topic_01" || tab[2][0] != "topic_02" {
		t.Errorf("lobo.csv %v\n%s", tab, out)
	}

	out, err = runCmd(t, newAnalyzeCmd(), "groups", "--data", p("responses.csv"), "--rule", "id-first", "--out", p("groups.csv"))
	if err != nil || !strings.Contains(out, "200 items in 1 categories") {
		t.Errorf("groups: %v\n%s", err, out)
	}
	if _, err := runCmd(t, newAnalyzeCmd(), "probe", "--checkpoint", p("ckpt"), "--groups", p("items.csv"), "--axis", "topic_01", "--out", p("p2")); err == nil {
		t.Error("probe --axis with one category: no error")
	}
}
