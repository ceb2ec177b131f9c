package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/jeirt/jeirt/cmd/internal/cli"
	"github.com/jeirt/jeirt/cmd/internal/runner"
	"github.com/jeirt/jeirt/model/checkpoint"
	"github.com/jeirt/jeirt/model/interrupt"
)

// One exit rule for every command: interrupted (Ctrl-C, SIGTERM: the
// command's context cancelled) it exits 130 after keeping what is complete,
// whether it stopped before writing anything, in the middle (saying what it
// kept), or returned quietly after stopping early; serve, whose normal end
// is Ctrl-C, exits 0.
func TestExitRuleOnInterrupt(t *testing.T) {
	project := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv(runner.EnvRunner, filepath.Join(project, "no-runner"))
	safetyProjectIn(t, project)
	writeUserFile(t, filepath.Join(project, "cfgs", "long.yaml"),
		"data: {responses: ../dd/r.csv}\nencoder: {spec: \"hash:8\"}\nmodel: {dim: 2, hidden: 4}\ntrain: {epochs: 400, patience: 0}\noutput: ../runs/long\n")
	writeUserFile(t, filepath.Join(project, "cfgs", "sweep-long.yaml"), "name: long\nbase: long.yaml\ngrid: {train.seed: [1, 2, 3]}\n")
	for _, c := range []struct {
		name string
		cmd  func() *cobra.Command
		args []string
		// cancelAt: cancel when a log line starts with this; "" cancels
		// before the command starts.
		cancelAt string
		code     int
		msg      string // a substring of the exit message
		check    func(t *testing.T, dir string)
	}{
		{name: "train during its epochs", cmd: newTrainCmd, args: []string{"--config", "cfgs/long.yaml"}, cancelAt: "epoch   3/",
			code: 130, msg: "interrupted; wrote runs/long with epoch ", check: func(t *testing.T, dir string) {
				m, err := checkpoint.ReadRunMetrics(filepath.Join(dir, "runs", "long"))
				if err != nil || !m.Interrupted || m.EpochsRun < 3 {
					t.Errorf("the kept checkpoint: %+v %v", m, err)
				}
			}},
		{name: "irt fit during its bootstrap", cmd: newIRTCmd, args: []string{"fit", "--data", "dd/r.csv", "--bootstrap", "200", "--threads", "1", "--out", "bfit"},
			cancelAt: "bootstrap: 25 of 200", code: 130, msg: "with the fit and 25 of 200 bootstrap replicates"},
		{name: "sweep --emit local during its second run", cmd: newSweepCmd, args: []string{"--config", "cfgs/sweep-long.yaml", "--emit", "local", "--out", "swl"},
			cancelAt: "[run 001] epoch   3/", code: 130, msg: "run 001 was interrupted; its best epoch is kept, marked interrupted; 1 of 3 runs are finished in", check: func(t *testing.T, dir string) {
				b, err := os.ReadFile(filepath.Join(dir, "swl", "sweep.csv"))
				if err != nil || !strings.Contains(string(b), "000,1,ok") || !strings.Contains(string(b), "001,2,interrupted") || !strings.Contains(string(b), "002,3,missing") {
					t.Errorf("sweep.csv after the interruption: %v\n%s", err, b)
				}
			}},
		{name: "sweep --emit local before it starts", cmd: newSweepCmd, args: []string{"--config", "cfgs/sweep-long.yaml", "--emit", "local", "--out", "swl"}, code: 130},
		{name: "train before it starts", cmd: newTrainCmd, args: []string{"--config", "cfgs/long.yaml"}, code: 130, msg: "interrupted; nothing was written",
			check: func(t *testing.T, dir string) {
				if _, err := os.Stat(filepath.Join(dir, "runs", "long")); !os.IsNotExist(err) {
					t.Errorf("a run interrupted before it started wrote its output: %v", err)
				}
			}},
		{name: "irt fit", cmd: newIRTCmd, args: []string{"fit", "--data", "dd/r.csv", "--out", "f2"}, code: 130},
		{name: "irt cv", cmd: newIRTCmd, args: []string{"cv", "--data", "dd/r.csv", "--out", "cv.json"}, code: 130},
		{name: "irt select", cmd: newIRTCmd, args: []string{"select", "--fit", "fit", "--out", "sel.csv"}, code: 130},
		{name: "irt cat", cmd: newIRTCmd, args: []string{"cat", "--fit", "fit", "--next", "3"}, code: 130},
		{name: "add-model", cmd: newAddModelCmd, args: []string{"--checkpoint", "ck", "--data", "dd/r.csv", "--out", "ck2"}, code: 130},
		{name: "route eval", cmd: newRouteCmd, args: []string{"eval", "--checkpoint", "ck", "--data", "dd/r.csv", "--out", "curve.csv"}, code: 130},
		{name: "eval", cmd: newEvalCmd, args: []string{"--checkpoint", "ck", "--data", "dd/r.csv"}, code: 130},
		{name: "encode", cmd: newEncodeCmd, args: []string{"--items", "dd/items.csv", "--encoder", "hash:8", "--out", "v.jsonl"}, code: 130},
		{name: "data inspect", cmd: newDataInspectCmd, args: []string{"--data", "dd/r.csv"}, code: 130},
		{name: "data split", cmd: newDataSplitCmd, args: []string{"--data", "dd/r.csv", "--out", "split"}, code: 130},
		{name: "data parquet", cmd: newDataParquetCmd, args: []string{"dd/r.csv", "r.parquet"}, code: 130},
		{name: "analyze groups", cmd: newAnalyzeCmd, args: []string{"groups", "--data", "dd/r.csv", "--rule", "id-first", "--out", "groups.csv"}, code: 130},
		{name: "report", cmd: newReportCmd, args: []string{"--fit", "fit", "--out", "rep"}, code: 130},
		{name: "synth", cmd: newSynthCmd, args: []string{"--out", "syn"}, code: 130},
		{name: "serve ends with Ctrl-C", cmd: newServeCmd, args: []string{"--checkpoint", "ck", "--addr", "127.0.0.1:0"}, cancelAt: "serve: ck on http://", code: 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			copyTree(t, project, dir)
			t.Chdir(dir)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			log := &cancelOn{prefix: c.cancelAt, cancel: cancel}
			if c.cancelAt == "" {
				cancel()
			}
			cmd := c.cmd()
			var stdout bytes.Buffer
			cmd.SetOut(&stdout)
			cmd.SetErr(log)
			cmd.SetArgs(c.args)
			err := cmd.ExecuteContext(ctx)
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				t.Fatalf("ran for two minutes without reaching %q", c.cancelAt)
			}
			code, msg := cli.ExitStatus(cmd, ctx, err)
			if code != c.code || !strings.Contains(msg, c.msg) {
				t.Errorf("exit %d %q (error %v), want %d with %q\n%s", code, msg, err, c.code, c.msg, log.b.String())
			}
			var kept *interrupt.Error
			if c.cancelAt != "" && c.code == 130 && !errors.As(err, &kept) {
				t.Errorf("interrupted in the middle without saying what it kept: %v", err)
			}
			if c.check != nil {
				c.check(t, dir)
			}
		})
	}
}
