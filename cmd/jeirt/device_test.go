package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/jeirt/jeirt/cmd/internal/runner"
	"github.com/jeirt/jeirt/model/checkpoint"
	"github.com/jeirt/jeirt/model/irtfit"
	"github.com/jeirt/jeirt/model/read"
	"github.com/jeirt/jeirt/model/synth"
	"github.com/jeirt/jeirt/train/backend"
	"github.com/jeirt/jeirt/train/pipeline"
)

// Every command that computes takes --device and resolves it by the one
// device rule before reading anything: on a build without CUDA, cuda is a
// one-line error that says why, and an unknown device is named.
func TestDeviceFlag(t *testing.T) {
	if _, err := backend.Resolve("cuda"); err == nil {
		t.Skip("this build has CUDA")
	}
	cases := []struct {
		cmd  func() *cobra.Command
		args []string
	}{
		{newTrainCmd, []string{"--config", "../../configs/quickstart.yaml"}},
		{newIRTCmd, []string{"fit", "--data", "x.csv", "--out", "y"}},
		{newIRTCmd, []string{"cv", "--data", "x.csv"}},
		{newEncodeCmd, []string{"--items", "x.csv", "--out", "y.npy"}},
		{newAddModelCmd, []string{"--checkpoint", "ck", "--data", "x.csv"}},
		{newAddModelCmd, []string{"suggest", "3", "--checkpoint", "ck"}},
		{newRouteCmd, []string{"q.txt", "--checkpoint", "ck"}},
		{newRouteCmd, []string{"eval", "--checkpoint", "ck", "--data", "x.csv"}},
		{newEvalCmd, []string{"--checkpoint", "ck", "--data", "x.csv"}},
	}
	for _, c := range cases {
		for dev, want := range map[string]string{
			"cuda": noCUDA(t),
			"tpu":  `device "tpu": unknown (want auto, cpu, cpu:fused or cuda)`,
		} {
			_, err := runCmd(t, c.cmd(), append(c.args, "--device", dev)...)
			if err == nil || err.Error() != want {
				t.Errorf("%v --device %s: %v, want %q", c.args, dev, err, want)
			}
		}
	}
}

// noCUDA is the error of --device cuda in a binary without CUDA and without
// the jeirt-cuda runner: both facts, and where the runner was looked for.
func noCUDA(t *testing.T) string {
	t.Helper()
	_, err := runner.Find()
	if err == nil {
		t.Skip("a jeirt-cuda runner is installed here")
	}
	return "device cuda: this jeirt binary was built without CUDA, and no usable CUDA runner: " + err.Error()
}

// One jeirt train run resolves its device once (backend.Resolutions), from
// --device when given and from the config's train.device otherwise, by the
// same rule, and records what ran in metrics.json; the config keeps the
// request.
func TestTrainResolvesDeviceOnce(t *testing.T) {
	if _, err := backend.Resolve("cuda"); err == nil {
		t.Skip("this build has CUDA: auto is cuda")
	}
	cases := []struct {
		name, step, recorded string
		args                 []string
	}{
		{"flag", "fused", "cpu:fused", []string{"--device", "cpu:fused", "--no-baselines"}},
		{"config", "fused", "cpu:fused", []string{"--set", "train.device=cpu:fused", "--no-baselines"}},
		{"config-auto", "graph", "auto", nil},
	}
	for _, c := range cases {
		out := filepath.Join(t.TempDir(), "run")
		args := append([]string{"--config", "../../configs/quickstart.yaml", "--set", "train.epochs=1", "--set", "output=" + out}, c.args...)
		before := backend.Resolutions()
		if msg, err := runCmd(t, newTrainCmd(), args...); err != nil {
			t.Fatalf("%s: %v\n%s", c.name, err, msg)
		}
		if n := backend.Resolutions() - before; n != 1 {
			t.Errorf("%s: the device was resolved %d times in one run, want once", c.name, n)
		}
		met, err := checkpoint.ReadRunMetrics(out)
		if err != nil {
			t.Fatal(err)
		}
		if met.Device != "cpu" || met.Step != c.step {
			t.Errorf("%s: metrics.json records device %q step %q, want cpu %s", c.name, met.Device, met.Step, c.step)
		}
		ck, err := checkpoint.Load(out)
		if err != nil {
			t.Fatal(err)
		}
		var cfg pipeline.Config
		if err := json.Unmarshal(ck.Manifest.Config, &cfg); err != nil || cfg.Train.Device != c.recorded {
			t.Errorf("%s: the manifest's config records train.device %q (%v), want %q", c.name, cfg.Train.Device, err, c.recorded)
		}
	}
}

// One run of irt fit (a bootstrap's replicates included), irt select (its
// refit, from the device the fit recorded) and irt cv (every fold) resolves
// its device once; fit.json records the request and what ran.
func TestIRTResolvesDeviceOnce(t *testing.T) {
	if _, err := backend.Resolve("cuda"); err == nil {
		t.Skip("this build has CUDA: auto is cuda")
	}
	dir := t.TempDir()
	r, _, err := synth.Generate(synth.Options{Kind: "2pl", Models: 20, Items: 40, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "r.csv")
	if err := read.WriteLongCSV(data, r); err != nil {
		t.Fatal(err)
	}
	fit := filepath.Join(dir, "fit")
	for _, c := range []struct {
		name string
		args []string
	}{
		{"fit", []string{"fit", "--data", data, "--bootstrap", "3", "--out", fit}},
		{"fit --device cpu", []string{"fit", "--data", data, "--device", "cpu", "--out", filepath.Join(dir, "fit-cpu")}},
		{"select", []string{"select", "--fit", fit, "--keep", "0.5", "--out", filepath.Join(dir, "kept.csv")}},
		{"cv", []string{"cv", "--data", data, "--folds", "3"}},
	} {
		before := backend.Resolutions()
		if msg, err := runCmd(t, newIRTCmd(), c.args...); err != nil {
			t.Fatalf("irt %s: %v\n%s", c.name, err, msg)
		}
		if n := backend.Resolutions() - before; n != 1 {
			t.Errorf("irt %s: the device was resolved %d times in one run, want once", c.name, n)
		}
	}
	for dir, want := range map[string]string{fit: "auto", filepath.Join(dir, "fit-cpu"): "cpu"} {
		f, err := irtfit.Read(dir)
		if err != nil {
			t.Fatal(err)
		}
		if doc := f.Doc; doc.Settings.Device != want || doc.Settings.DeviceResolved != "cpu" {
			t.Errorf("%s: fit.json records device %q, device_resolved %q; want %s and cpu", dir, doc.Settings.Device, doc.Settings.DeviceResolved, want)
		}
	}
}

// The retired spellings name what replaces them.
func TestRetiredDeviceSpellings(t *testing.T) {
	for args, want := range map[string]string{
		"--device gorgonia":           `device "gorgonia" was retired: use cpu (its default JE-IRT step is the Gorgonia graph; cpu:fused is the hand-written one)`,
		"--set train.device=gorgonia": "train.device: gorgonia was retired: use cpu (its default JE-IRT step is the Gorgonia graph; cpu:fused is the hand-written one)",
		"--set train.step=fused":      "train.step: was retired: the CPU step is part of train.device (cpu: the Gorgonia graph step, the default; cpu:fused: the hand-written one)",
	} {
		a := append([]string{"--config", "../../configs/quickstart.yaml", "--set", "output=" + t.TempDir()}, strings.Fields(args)...)
		_, err := runCmd(t, newTrainCmd(), a...)
		if err == nil || !strings.HasSuffix(err.Error(), want) {
			t.Errorf("%s: %v, want ...%q", args, err, want)
		}
	}
}
