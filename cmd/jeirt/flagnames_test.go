package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/checkpoint"
	"github.com/jeirt/jeirt/model/read"
	"github.com/jeirt/jeirt/model/synth"
)

// The errors of the applications and libraries name settings by their
// fields (model.FieldError); cli.Guard shows them with the command's flags.
// What a user of the command line reads is what it was when the errors
// spelled the flags themselves: each case is a converted error, with its
// message as the command printed it before the conversion.
func TestErrorsNameFlags(t *testing.T) {
	dir := t.TempDir()
	at := func(name string) string { return filepath.Join(dir, name) }
	r, _, err := synth.Generate(synth.Options{Kind: "2pl", Models: 12, Items: 30, Seed: 8})
	if err != nil {
		t.Fatal(err)
	}
	data := at("r.csv")
	if err := read.WriteLongCSV(data, r); err != nil {
		t.Fatal(err)
	}
	items := writeFile(t, at("items.csv"), "item,text\ni0,a question\n")
	fit, fit2 := at("fit"), at("fit2")
	for _, args := range [][]string{{"--out", fit}, {"--rank", "2", "--out", fit2}} {
		if _, err := runCmd(t, newIRTCmd(), append([]string{"fit", "--data", data}, args...)...); err != nil {
			t.Fatal(err)
		}
	}
	ck, lost := at("ck"), at("lost")
	writeHandCheckpoint(t, ck, []float64{0.9, 0.75, 0.6}, []string{"big", "mid", "small"})
	writeHandCheckpoint(t, lost, []float64{0.9, 0.75, 0.6}, []string{"big", "mid", "small"})
	// The encoder lost's manifest records is a model folder that is gone.
	ckLost, err := checkpoint.Load(lost)
	if err != nil {
		t.Fatal(err)
	}
	ckLost.Manifest.Encoder = checkpoint.EncoderInfo{Spec: at("gone-model"), Fingerprint: "st:gone", Dim: 8}
	if err := ckLost.Write(lost, true); err != nil {
		t.Fatal(err)
	}
	// A fit whose recorded interval level is out of range.
	fitLevel := at("fit-level")
	copyTree(t, fit, fitLevel)
	doc := readJSONMap(t, filepath.Join(fitLevel, "fit.json"))
	doc["settings"].(map[string]any)["level"] = 2
	b, _ := json.Marshal(doc)
	writeFile(t, filepath.Join(fitLevel, "fit.json"), string(b))
	queries := writeFile(t, at("q.txt"), "what is 2+2?\n")
	costs := writeFile(t, at("costs.csv"), "model,cost\nbig,10\nmid,3\n")
	routeData := writeFile(t, at("route.csv"), "model,item,correct\nbig,known,1\nmid,known,0\nsmall,known,1\n")
	badHeader := writeFile(t, at("bad.csv"), "who,what\na,b\n")
	dups := writeFile(t, at("dups.csv"), "model,item,correct\na,x,1\na,x,0\n")
	notFolder := writeFile(t, at("file"), "x\n")
	foreign := at("foreign")
	os.MkdirAll(foreign, 0o755)
	writeFile(t, filepath.Join(foreign, "notes.txt"), "mine\n")
	cfg := writeFile(t, at("c.yaml"), "data: {responses: "+data+"}\nencoder: {spec: \"hash:8\"}\noutput: "+fit+"\n")
	notSweep := at("notsweep")
	os.MkdirAll(notSweep, 0o755)
	writeFile(t, filepath.Join(notSweep, "x"), "x\n")

	for _, c := range []struct {
		cmd  func() *cobra.Command
		args []string
		want string
	}{
		{newIRTCmd, []string{"fit", "--data", data, "--rank", "0", "--out", at("o")}, "--rank 0: must be at least 1"},
		{newIRTCmd, []string{"fit", "--data", data, "--sigma=-1", "--out", at("o")}, "--sigma -1: must be positive"},
		{newIRTCmd, []string{"fit", "--data", data, "--min-a=-1", "--out", at("o")}, "--min-a -1: must be finite and not negative"},
		{newIRTCmd, []string{"fit", "--data", data, "--tol=-1", "--out", at("o")}, "--tol -1: must not be negative"},
		{newIRTCmd, []string{"fit", "--data", data, "--method", "foo", "--out", at("o")}, "--method \"foo\": want cbmm, lbfgs or mml"},
		{newIRTCmd, []string{"fit", "--data", data, "--method", "lbfgs", "--rank", "2", "--out", at("o")}, "--method lbfgs fits rank 1 only (got --rank 2)"},
		{newIRTCmd, []string{"fit", "--data", data, "--method", "lbfgs", "--bootstrap", "5", "--out", at("o")}, "--bootstrap needs --method cbmm"},
		{newIRTCmd, []string{"fit", "--data", data, "--method", "mml", "--sigma", "2", "--out", at("o")}, "--method mml uses sigma 1 (got --sigma 2)"},
		{newIRTCmd, []string{"fit", "--data", data, "--signed", "--out", at("o")}, "--signed needs --method cbmm and --rank 2 or more (got --method cbmm --rank 1)"},
		{newIRTCmd, []string{"fit", "--data", data, "--min-answers=-1", "--out", at("o")}, "--min-answers -1: must not be negative (0: no threshold)"},
		{newIRTCmd, []string{"fit", "--data", data, "--max-iter", "0", "--out", at("o")}, "--max-iter 0: must be at least 1"},
		{newIRTCmd, []string{"fit", "--data", data, "--bootstrap", "1", "--out", at("o")}, "--bootstrap 1: must be 0 (none) or at least 2"},
		{newIRTCmd, []string{"fit", "--data", data, "--level", "2", "--out", at("o")}, "--level 2: must be in (0, 1)"},
		{newIRTCmd, []string{"fit", "--data", data, "--rank", "20", "--out", at("o")}, "DIR/r.csv: --rank 20 needs at least 20 models and 20 items; the data has 12 models and 30 items"},
		{newIRTCmd, []string{"fit", "--data", data, "--joint", "--out", at("o")}, "--joint needs at least two --data files, got 1"},
		{newIRTCmd, []string{"fit", "--data", data, "--data", data, "--name", "a", "--out", at("o")}, "--name given 1 time(s) for 2 --data file(s): give one per file, in the same order, or none"},
		{newIRTCmd, []string{"fit", "--data", data, "--data", data, "--items", items, "--out", at("o")}, "--items names the item texts of one benchmark; it cannot go with several --data files"},
		{newIRTCmd, []string{"fit", "--data", data, "--data", data, "--joint", "--items", items, "--out", at("o")}, "--items names the item texts of one benchmark; it cannot go with several --data files"},
		{newIRTCmd, []string{"select", "--fit", fit, "--keep", "2", "--out", at("s.csv")}, "--keep: keep 2 must be in (0, 1]"},
		{newIRTCmd, []string{"select", "--fit", fit, "--keep", "0.5", "--rule", "foo", "--out", at("s.csv")}, "--rule \"foo\": want info or benchmirt"},
		{newIRTCmd, []string{"cv", "--data", data, "--folds", "1"}, "--folds 1: need at least 2"},
		{newIRTCmd, []string{"cat", "--fit", fit, "--out", at("o")}, "give --data FILE (simulate: replay held-out models' answers) or --next N (live: the next N questions to ask)"},
		{newIRTCmd, []string{"cat", "--fit", fit, "--data", data, "--next", "3", "--out", at("o")}, "--data (simulate) cannot go with --answers or --next (live)"},
		{newIRTCmd, []string{"cat", "--fit", fit, "--data", data, "--out", at("o")}, "give --budget N or --target-se S (or both): when to stop each simulated test"},
		{newIRTCmd, []string{"cat", "--fit", fit, "--next", "3", "--group-column", "g", "--out", at("o")}, "--group-column goes with --groups FILE"},
		{newIRTCmd, []string{"cat", "--fit", fit, "--data", data, "--budget", "5", "--out", at("o")}, "DIR/r.csv: every model is in the fit DIR/fit; name the models to test with --models"},
		{newIRTCmd, []string{"cat", "--fit", fit, "--data", data, "--budget", "5", "--models", r.Models[0] + "," + r.Models[0], "--out", at("o")}, "--models: \"model_001\" is named twice"},
		{newIRTCmd, []string{"cat", "--fit", fit, "--next", "3", "--models", "a,b", "--out", at("o")}, "--models: without --answers there is one new model to ask (got 2 names)"},
		{newAddModelCmd, []string{"--fit", fitLevel, "--data", data, "--out", at("p.csv")}, "--level 2 must be in (0, 1)"},
		{newAddModelCmd, []string{"--fit", fit2, "--data", data, "--estimator", "eap", "--out", at("p.csv")}, "--estimator eap is rank 1 only (the fit has rank 2); use map"},
		{newRouteCmd, []string{queries, "--checkpoint", ck, "--output", "foo"}, "route: --print \"foo\": want table, csv or json"},
		{newRouteCmd, []string{queries, "--checkpoint", ck, "--top=-1"}, "route: --top -1 must not be negative"},
		{newRouteCmd, []string{queries, "--checkpoint", ck, "--lambda", "0.1"}, "route: --lambda weighs cost; it needs --costs"},
		{newRouteCmd, []string{queries, "--checkpoint", ck, "--min-p", "0.5"}, "route: --min-p picks the cheapest good-enough model; it needs --costs"},
		{newRouteCmd, []string{queries, "--checkpoint", ck, "--models", "zzz"}, "route: --models: \"zzz\" is not a model of the checkpoint (it has 3: big, mid, small)"},
		{newRouteCmd, []string{queries, "--checkpoint", ck, "--shortlist=-1"}, "route: --shortlist -1 must not be negative"},
		{newRouteCmd, []string{queries, "--checkpoint", ck, "--default", "big"}, "route: --default is the default model of the margin rule; it needs --margin"},
		{newRouteCmd, []string{queries, "--checkpoint", ck, "--data", routeData}, "route: --data ranks the models for --margin, --shortlist or a recorded default rule; the checkpoint records none, so it needs --margin or --shortlist"},
		{newRouteCmd, []string{queries, "--checkpoint", ck, "--margin=-1"}, "route: --margin -1 must be a non-negative number (or inf)"},
		{newRouteCmd, []string{queries, "--checkpoint", ck, "--margin", "0.1", "--costs", costs}, "DIR/costs.csv: no cost for model \"small\" (price every model routed to, or choose them with --models)"},
		{newRouteCmd, []string{queries, "--checkpoint", ck, "--margin", "0.1", "--default", "big", "--data", routeData}, "route: give --default or --data, not both"},
		{newRouteCmd, []string{queries, "--checkpoint", ck, "--margin", "0.1", "--default", "zzz"}, "route: --default: \"zzz\" is not a model of the checkpoint (it has 3: big, mid, small)"},
		{newRouteCmd, []string{queries, "--checkpoint", ck, "--margin", "0.1", "--default", "mid", "--models", "big,small"}, "route: --default: \"mid\" is not one of the candidates (--models, --shortlist)"},
		{newRouteCmd, []string{queries, "--checkpoint", ck, "--costs", costs, "--min-p", "0.5"}, "DIR/costs.csv: no cost for model \"small\" (price every model routed to, or choose them with --models)"},
		{newRouteCmd, []string{"eval", "--checkpoint", ck, "--data", routeData, "--min-p", "0.5,0.6"}, "route eval: --min-p and --lambda sweeps need --costs"},
		{newEncodeCmd, []string{"--items", items, "--encoder", "hash:8", "--precision", "foo", "--out", at("v.npy")}, "encode: --precision \"foo\": want fp32, tf32 or bf16"},
		{newEncodeCmd, []string{"--items", items, "--encoder", "hash:8", "--precision", "tf32", "--out", at("v.npy")}, "encode: --precision tf32 needs the encoder's forward pass on the GPU (--device cuda and a model folder)"},
		{newEncodeCmd, []string{"--items", items, "--encoder", "hash:8", "--shard", "5/4", "--out", at("v.npy")}, "encode: --shard \"5/4\": want i/n with 0 <= i < n, e.g. 0/4"},
		{newAnalyzeCmd, []string{"probe", "--checkpoint", ck, "--items", items, "--axis", "a", "--out", at("o")}, "--axis \"a\": want two categories, A,B"},
		{newTrainCmd, []string{"--config", cfg, "--set", "foo"}, "--set \"foo\": want key=value, e.g. model.dim=128"},
		{newTrainCmd, []string{"--config", cfg, "--set", "nosuch.key=1"}, "--set unknown key nosuch.key (known: data, encoder, model, output, route, split, train)"},
		{newTrainCmd, []string{"--config", cfg}, "output: DIR/fit already exists; pass --force to replace it (only what jeirt wrote is ever replaced), or choose another output (set it with output: in the config or --set output=DIR)"},
		{newReportCmd, []string{"--out", at("o")}, "report: give --checkpoint, --fit or --route-csv (or several)"},
		{newSweepCmd, []string{"--config", "../../configs/sweeps/swebench-dims.yaml", "--emit", "local", "--out", notSweep}, "DIR/notsweep exists and is not this sweep's folder (no runs/000/config.yaml); choose another --out or pass --force to replace it"},
		{newSweepCollectCmd, []string{at("nope")}, "DIR/nope is not a sweep folder: no sweep.json (write one with jeirt sweep --emit)"},
		{newServeCmd, []string{"--checkpoint", ck, "--addr", "127.0.0.1:99999"}, "serve: --addr 127.0.0.1:99999: listen tcp: address 99999: invalid port"},
		{newIRTCmd, []string{"fit", "--data", data, "--out", fit}, "DIR/fit already exists; pass --force to replace it (only what jeirt wrote is ever replaced), or choose another output"},
		{newIRTCmd, []string{"fit", "--data", data, "--out", notFolder, "--force"}, "DIR/file exists and is not a folder; refusing to replace it even with --force: choose another output"},
		{newIRTCmd, []string{"fit", "--data", data, "--out", foreign, "--force"}, "DIR/foreign was not written by this jeirt (it has no .jeirt-output.json; it holds notes.txt); refusing to replace it even with --force: move it away or choose another output"},
		{newIRTCmd, []string{"fit", "--data", badHeader, "--out", at("o")}, "DIR/bad.csv:1: cannot tell the format from the header (first column \"who\" names neither models nor items, and there are no model, item and label columns); use --format long|wide|wide-items|pyirt|patterns, or name the columns of a long file with --columns model=COLUMN,item=COLUMN,label=COLUMN"},
		{newIRTCmd, []string{"fit", "--data", dups, "--duplicates", "error", "--out", at("o")}, "DIR/dups.csv:3: duplicate row for model \"a\", item \"x\" (first at line 2; use --duplicates majority, first or trials to resolve)"},
		{newRouteCmd, []string{queries, "--checkpoint", lost}, "DIR/lost/manifest.json: the checkpoint's encoder DIR/gone-model (fingerprint st:gone) is not found; looked at DIR/gone-model; give its location with --encoder SPEC"},
	} {
		msg, err := runCmd(t, c.cmd(), c.args...)
		got := "<nil>"
		if err != nil {
			got = strings.ReplaceAll(err.Error(), dir, "DIR")
		}
		if got != c.want {
			t.Errorf("%v:\n got %q\nwant %q\n%s", c.args, got, c.want, msg)
		}
		var fe *model.FieldError
		if !errors.As(err, &fe) {
			t.Errorf("%v: %v is not a field error", c.args, err)
		}
	}
}
