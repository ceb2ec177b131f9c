package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/catfile"
	"github.com/jeirt/jeirt/model/read"
	"github.com/jeirt/jeirt/model/synth"
)

// TestIRTEstimate: fit 150 simulated models, select 40 anchor points of 400
// items, and estimate 60 held-out models of the same population from their
// answers to the anchors: estimates.csv has one row per model whose score
// is near its true score on all 400 items, with the anchors' count; the
// categories add up; and --eval prints a row per rule x estimator.
func TestIRTEstimate(t *testing.T) {
	dir := t.TempDir()
	r, _, err := synth.Generate(synth.Options{Kind: "2pl", Models: 210, Items: 400, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	fitR, heldR := splitModels(r, 150)
	train, held := filepath.Join(dir, "train.csv"), filepath.Join(dir, "held.csv")
	if err := read.WriteLongCSV(train, fitR); err != nil {
		t.Fatal(err)
	}
	if err := read.WriteLongCSV(held, heldR); err != nil {
		t.Fatal(err)
	}
	fit, sel := filepath.Join(dir, "fit"), filepath.Join(dir, "anchors.csv")
	if _, err := runCmd(t, newIRTCmd(), "fit", "--data", train, "--out", fit); err != nil {
		t.Fatal(err)
	}
	if _, err := runCmd(t, newIRTCmd(), "select", "--fit", fit, "--rule", "anchor", "--budget", "40", "--out", sel); err != nil {
		t.Fatal(err)
	}
	weights, err := catfile.ReadWeights(sel)
	if err != nil || len(weights) != 40 {
		t.Fatalf("%d weights: %v", len(weights), err)
	}
	asked := &model.Responses{Items: r.Items, Models: heldR.Models}
	truth := map[string]float64{}
	for i, name := range heldR.Models {
		row := heldR.ByModel().Row(i)
		for _, c := range row {
			truth[name] += float64(heldR.Label[c]) / float64(len(row))
			if _, ok := weights[r.Items[heldR.Item[c]]]; ok {
				asked.AppendFrom(int32(i), heldR.Item[c], heldR, int(c))
			}
		}
	}
	answers, cats := filepath.Join(dir, "asked.csv"), filepath.Join(dir, "cats.csv")
	if err := read.WriteLongCSV(answers, asked); err != nil {
		t.Fatal(err)
	}
	var cat strings.Builder
	cat.WriteString("item,category\n")
	for j, id := range r.Items {
		cat.WriteString(id + "," + []string{"even", "odd"}[j%2] + "\n")
	}
	writeFile(t, cats, cat.String())
	out := filepath.Join(dir, "est")
	if _, err := runCmd(t, newIRTCmd(), "estimate", "--fit", fit, "--answers", answers, "--weights", sel, "--by-category", cats, "--out", out); err != nil {
		t.Fatal(err)
	}
	// --weights keeps only the answers to the items it lists: every answer
	// of the held-out models gives the same estimates as their answers to
	// the anchors, and says how many it left out.
	outAll := filepath.Join(dir, "est-all")
	msg, err := runCmd(t, newIRTCmd(), "estimate", "--fit", fit, "--answers", held, "--weights", sel, "--by-category", cats, "--out", outAll)
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("left out %d answers to items", heldR.Len()-asked.Len()); !strings.Contains(msg, want) {
		t.Errorf("estimate with --weights on every answer: %q lacks %q", msg, want)
	}
	for _, f := range []string{"estimates.csv", "categories.csv"} {
		a, _ := os.ReadFile(filepath.Join(out, f))
		b, _ := os.ReadFile(filepath.Join(outAll, f))
		if len(a) == 0 || string(a) != string(b) {
			t.Errorf("%s differs between the anchors' answers and every answer under --weights", f)
		}
	}
	// Answers to part of the items without --weights count equally: say so.
	if msg, err := runCmd(t, newIRTCmd(), "estimate", "--fit", fit, "--answers", answers, "--estimator", "mean"); err != nil || !strings.Contains(msg, "pass its CSV as --weights") {
		t.Errorf("anchors without their weights: %v %q", err, msg)
	}
	rows, err := catfile.ReadEstimates(filepath.Join(out, "estimates.csv"), 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 60 {
		t.Fatalf("%d rows, want 60", len(rows))
	}
	var mae float64
	cover := 0
	for _, e := range rows {
		if e.NAnswered != 40 || !(e.Lo <= e.Score && e.Score <= e.Hi) {
			t.Errorf("%+v", e)
		}
		mae += math.Abs(e.Score-truth[e.Model]) / 60
		if e.Lo <= truth[e.Model] && truth[e.Model] <= e.Hi {
			cover++
		}
	}
	t.Logf("MAE %.4f, %d of 60 intervals cover the true score", mae, cover)
	// 40 answers of 400 items: the observed mean's error is about
	// 0.8·√(0.2/40) ≈ 0.057, p-IRT's about 0.045 (irt estimate --eval on
	// these data).
	if mae > 0.055 || cover < 50 {
		t.Errorf("MAE %.4f, coverage %d of 60", mae, cover)
	}
	byCat, err := catfile.ReadEstimates(filepath.Join(out, "categories.csv"), 1)
	if err != nil || len(byCat) != 120 {
		t.Fatalf("categories.csv: %d rows, %v", len(byCat), err)
	}
	if byCat[0].Category != "even" || byCat[0].Model != rows[0].Model || byCat[0].NAnswered+byCat[1].NAnswered != 40 {
		t.Errorf("categories %+v %+v", byCat[0], byCat[1])
	}
	if _, err := runCmd(t, newIRTCmd(), "estimate", "--fit", fit, "--answers", answers, "--out", out); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Errorf("an existing --out without --force: %v", err)
	}
	if _, err := runCmd(t, newIRTCmd(), "estimate", "--fit", fit, "--answers", answers, "--estimator", "median"); err == nil || !strings.Contains(err.Error(), "--estimator") {
		t.Errorf("--estimator median: %v", err)
	}
	badW := writeFile(t, filepath.Join(dir, "badw.csv"), "item,weight\nno-such-item,0.5\n")
	if _, err := runCmd(t, newIRTCmd(), "estimate", "--fit", fit, "--answers", answers, "--weights", badW); err == nil || !strings.Contains(err.Error(), "badw.csv") || !strings.Contains(err.Error(), "no-such-item") {
		t.Errorf("a weights file naming an item the fit lacks: %v", err)
	}
	// irt select without --rule: with --budget it selects by irt estimate's
	// default rule (anchor-rank), with --keep by info; both exactly as named.
	for _, c := range []struct{ flag, n, rule string }{{"--budget", "20", "anchor-rank"}, {"--keep", "0.1", "info"}} {
		def, named := filepath.Join(dir, "sel-default"+c.flag+".csv"), filepath.Join(dir, "sel-"+c.rule+".csv")
		if _, err := runCmd(t, newIRTCmd(), "select", "--fit", fit, c.flag, c.n, "--out", def); err != nil {
			t.Fatal(err)
		}
		if _, err := runCmd(t, newIRTCmd(), "select", "--fit", fit, c.flag, c.n, "--rule", c.rule, "--out", named); err != nil {
			t.Fatal(err)
		}
		a, _ := os.ReadFile(def)
		b, _ := os.ReadFile(named)
		if len(a) == 0 || string(a) != string(b) {
			t.Errorf("irt select %s %s without --rule differs from --rule %s", c.flag, c.n, c.rule)
		}
	}
	// An adaptive test that stops at a score interval width.
	catOut := filepath.Join(dir, "cat")
	if _, err := runCmd(t, newIRTCmd(), "cat", "--fit", fit, "--data", held, "--target-score-width", "0.15", "--budget", "300", "--out", catOut); err != nil {
		t.Fatal(err)
	}
	ab, err := catfile.ReadAbilities(filepath.Join(catOut, "abilities.csv"), 1)
	if err != nil || len(ab) != 60 {
		t.Fatalf("cat abilities: %d rows, %v", len(ab), err)
	}
	if doc, err := catfile.ReadDoc(filepath.Join(catOut, "cat.json")); err != nil || doc.Settings.TargetScoreWidth != 0.15 {
		t.Errorf("cat.json's target_score_width: %v (%v)", doc, err)
	}
	for _, a := range ab {
		if a.Stop != "target_score_width" || a.ItemsUsed >= 300 || a.ItemsUsed < 5 {
			t.Errorf("%s: stopped (%s) after %d items", a.Model, a.Stop, a.ItemsUsed)
		}
	}
	got, err := runCmd(t, newIRTCmd(), "estimate", "--eval", "--data", train, "--seeds", "2", "--budget", "20", "--rule", "random,anchor-rank")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(got, "\n| random |") + strings.Count(got, "\n| anchor-rank |"); n != 8 || !strings.Contains(got, "default (anchor-rank + blend)") {
		t.Errorf("--eval printed %d rows:\n%s", n, got)
	}
}

// TestIRTEstimateTrials: answers given as several trials of each item
// (--duplicates trials: k of n correct) count as their fraction correct,
// not rounded to 0 or 1: the observed mean and the mean estimator are the
// mean of k/n over the answered items, exactly.
func TestIRTEstimateTrials(t *testing.T) {
	dir := t.TempDir()
	r, _, err := synth.Generate(synth.Options{Kind: "2pl", Models: 60, Items: 100, Seed: 6})
	if err != nil {
		t.Fatal(err)
	}
	train := filepath.Join(dir, "train.csv")
	if err := read.WriteLongCSV(train, r); err != nil {
		t.Fatal(err)
	}
	fit := filepath.Join(dir, "fit")
	if _, err := runCmd(t, newIRTCmd(), "fit", "--data", train, "--out", fit); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("model,item,correct\n")
	want := map[string]float64{}
	for m := 0; m < 3; m++ {
		name := "new" + string(rune('a'+m))
		for j := 0; j < 20; j++ {
			k := (m + j) % 5 // k of 4 trials right
			for trial := 0; trial < 4; trial++ {
				y := "0"
				if trial < k {
					y = "1"
				}
				b.WriteString(name + "," + r.Items[j] + "," + y + "\n")
			}
			want[name] += float64(k) / 4 / 20
		}
	}
	answers := filepath.Join(dir, "answers.csv")
	writeFile(t, answers, b.String())
	for _, est := range []string{"mean", "blend"} {
		out := filepath.Join(dir, "est-"+est)
		if _, err := runCmd(t, newIRTCmd(), "estimate", "--fit", fit, "--answers", answers, "--duplicates", "trials", "--estimator", est, "--out", out); err != nil {
			t.Fatal(err)
		}
		rows, err := catfile.ReadEstimates(filepath.Join(out, "estimates.csv"), 1)
		if err != nil || len(rows) != 3 {
			t.Fatalf("%s: %d rows, %v", est, len(rows), err)
		}
		for _, e := range rows {
			if e.NAnswered != 20 || math.Abs(e.Observed-want[e.Model]) > 1e-12 {
				t.Errorf("%s %s: %d answered, observed mean %v, want 20 and %v", est, e.Model, e.NAnswered, e.Observed, want[e.Model])
			}
			if est == "mean" && math.Abs(e.Score-want[e.Model]) > 1e-12 {
				t.Errorf("mean %s: score %v, want %v", e.Model, e.Score, want[e.Model])
			}
			if !(e.Lo <= e.Score && e.Score <= e.Hi && e.Lo >= 0 && e.Hi <= 1) {
				t.Errorf("%s %s: score %v [%v, %v]", est, e.Model, e.Score, e.Lo, e.Hi)
			}
		}
	}
}

// TestIRTEstimate3PL: irt estimate takes a 3PL fit (irt cat does not):
// from 60 of 300 items, the held-out models' scores land near their true
// scores on all 300, nearer than the mean of the 60 answers.
func TestIRTEstimate3PL(t *testing.T) {
	dir := t.TempDir()
	r, _, err := synth.Generate(synth.Options{Kind: "2pl", Models: 140, Items: 300, Seed: 8, Guess: 0.2})
	if err != nil {
		t.Fatal(err)
	}
	fitR, all := splitModels(r, 100)
	heldR := &model.Responses{Items: r.Items, Models: all.Models}
	truth := map[string]float64{}
	for i, name := range all.Models {
		row := all.ByModel().Row(i)
		for _, c := range row {
			truth[name] += float64(all.Label[c]) / float64(len(row))
			if all.Item[c] < 60 { // asked: the first 60 items
				heldR.AppendFrom(int32(i), all.Item[c], all, int(c))
			}
		}
	}
	train, held := filepath.Join(dir, "train.csv"), filepath.Join(dir, "held.csv")
	if err := read.WriteLongCSV(train, fitR); err != nil {
		t.Fatal(err)
	}
	if err := read.WriteLongCSV(held, heldR); err != nil {
		t.Fatal(err)
	}
	fit, out := filepath.Join(dir, "fit"), filepath.Join(dir, "est")
	if _, err := runCmd(t, newIRTCmd(), "fit", "--data", train, "--model", "3pl", "--out", fit); err != nil {
		t.Fatal(err)
	}
	if _, err := runCmd(t, newIRTCmd(), "cat", "--fit", fit, "--data", held, "--budget", "10"); err == nil || !strings.Contains(err.Error(), "3PL") {
		t.Errorf("irt cat on a 3PL fit: %v", err)
	}
	if _, err := runCmd(t, newIRTCmd(), "estimate", "--fit", fit, "--answers", held, "--out", out); err != nil {
		t.Fatal(err)
	}
	rows, err := catfile.ReadEstimates(filepath.Join(out, "estimates.csv"), 1)
	if err != nil || len(rows) != 40 {
		t.Fatalf("%d rows, %v", len(rows), err)
	}
	var mae, maeMean float64
	for _, e := range rows {
		mae += math.Abs(e.Score-truth[e.Model]) / 40
		maeMean += math.Abs(e.Observed-truth[e.Model]) / 40
	}
	t.Logf("3PL: MAE %.4f of the estimate, %.4f of the answered items' mean", mae, maeMean)
	if !(mae < 0.045 && mae < maeMean) {
		t.Errorf("MAE %.4f (the answered mean's %.4f)", mae, maeMean)
	}
}

// splitModels is r's first n models (to fit) and the rest (held out), every
// cell of each.
func splitModels(r *model.Responses, n int) (fitR, heldR *model.Responses) {
	fitR, heldR = &model.Responses{Items: r.Items}, &model.Responses{Items: r.Items}
	for i, name := range r.Models {
		dst := fitR
		if i >= n {
			dst = heldR
		}
		m := int32(len(dst.Models))
		dst.Models = append(dst.Models, name)
		for _, c := range r.ByModel().Row(i) {
			dst.AppendFrom(m, r.Item[c], r, int(c))
		}
	}
	return fitR, heldR
}
