package catfile

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// Every file written and read back is the same, at rank 1 and 2, with and
// without the full-data columns; written again it is byte-identical.
func TestRoundTrip(t *testing.T) {
	nan := math.NaN()
	for _, rank := range []int{1, 2} {
		vec := func(x float64) []float64 {
			v := make([]float64, rank)
			for d := range v {
				v[d] = x + float64(d)/4
			}
			return v
		}
		f := &Folder{Rank: rank,
			Doc: &Doc{Version: "0.1.0", Mode: "simulate", Settings: Settings{Fit: "out/fit", Data: "r.csv", Models: []string{"a", "b, \"c\""}, Rule: "fisher",
				Estimator: "map", Budget: 10, TargetSE: 0.3, TargetScoreWidth: 0.04, Seed: 1}, Theta: "MAP", PriorMean: vec(0), PriorCov: []float64{1},
				Items: 5, Summary: &Summary{Models: 2, Spearman: 0.5, Pearson: 0.75, RMSE: 0.125, MeanItems: 7.5, MinItems: 5, MaxItems: 10, MeanSE: 0.25,
					FullItems: 40, Stops: map[string]int{"budget": 1, "target_se": 1}}},
			Abilities: []Ability{
				{Model: "a", Theta: vec(0.5), SE: vec(0.25), ItemsUsed: 10, Stop: "budget", ThetaFull: vec(0.625), SEFull: vec(0.125), ItemsFull: 40},
				{Model: "b, \"c\"", Theta: vec(-1), SE: vec(0.3), ItemsUsed: 5, Stop: "target_se", ThetaFull: vec(-1.5), SEFull: vec(0.2), ItemsFull: 40},
			},
			Trace: []Step{
				{Model: "a", Step: 0, Answer: -1, Value: nan, Theta: vec(0), SE: vec(1)},
				{Model: "a", Step: 1, Item: "q1", Group: "g", Answer: 1, Value: 0.75, Theta: vec(0.5), SE: vec(0.8)},
				{Model: "a", Step: 2, Item: "q,2", Answer: 0, Value: nan, Theta: vec(0.25), SE: vec(0.7)},
			},
			Next: []Question{{Model: "a", Rank: 1, Item: "q3", Group: "g", Value: 0.5, P: 0.25}, {Model: "a", Rank: 2, Item: "q4", Value: nan, P: 0.5}},
		}
		dir := t.TempDir()
		if err := Write(dir, f); err != nil {
			t.Fatal(err)
		}
		ab, err := ReadAbilities(filepath.Join(dir, "abilities.csv"), rank)
		if err != nil || !reflect.DeepEqual(ab, f.Abilities) {
			t.Errorf("rank %d abilities: %v\n got %+v\nwant %+v", rank, err, ab, f.Abilities)
		}
		tr, err := ReadTrace(filepath.Join(dir, "trace.csv"), rank)
		if err != nil || len(tr) != 3 || !math.IsNaN(tr[0].Value) || tr[0].Answer != -1 || tr[1].Item != "q1" || tr[1].Value != 0.75 ||
			tr[2].Item != "q,2" || tr[2].Answer != 0 || !reflect.DeepEqual(tr[1].Theta, vec(0.5)) || !reflect.DeepEqual(tr[2].SE, vec(0.7)) {
			t.Errorf("rank %d trace: %v %+v", rank, err, tr)
		}
		nx, err := ReadNext(filepath.Join(dir, "next.csv"))
		if err != nil || len(nx) != 2 || nx[0] != f.Next[0] || nx[1].Item != "q4" || !math.IsNaN(nx[1].Value) {
			t.Errorf("next: %v %+v", err, nx)
		}
		doc, err := ReadDoc(filepath.Join(dir, "cat.json"))
		if err != nil || !reflect.DeepEqual(doc, f.Doc) {
			t.Errorf("cat.json: %v\n got %+v\nwant %+v", err, doc, f.Doc)
		}
		again := t.TempDir()
		f2 := &Folder{Rank: rank, Doc: doc, Abilities: ab, Trace: tr, Next: nx}
		if err := Write(again, f2); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"abilities.csv", "trace.csv", "next.csv", "cat.json"} {
			a, _ := os.ReadFile(filepath.Join(dir, name))
			b, _ := os.ReadFile(filepath.Join(again, name))
			if string(a) != string(b) {
				t.Errorf("rank %d: %s differs when written again:\n%s\n%s", rank, name, a, b)
			}
		}
	}
}

// Without full-data columns abilities.csv has exactly the placement columns.
func TestAbilitiesColumns(t *testing.T) {
	var b strings.Builder
	WriteAbilities(&b, 1, []Ability{{Model: "m", Theta: []float64{0.5}, SE: []float64{0.25}, ItemsUsed: 3}})
	if b.String() != "model,theta,se,items_used,stop\nm,0.5,0.25,3,\n" {
		t.Errorf("abilities.csv:\n%s", b.String())
	}
}

func TestReadGroups(t *testing.T) {
	dir := t.TempDir()
	write := func(body string) string {
		p := filepath.Join(dir, "g.csv")
		os.WriteFile(p, []byte(body), 0o644)
		return p
	}
	g, err := ReadGroups(write("item_id,text,category\nq1,x,math\nq2,y,code\n"), "")
	if err != nil || len(g) != 2 || g["q1"] != "math" || g["q2"] != "code" {
		t.Errorf("groups %v %v", g, err)
	}
	g, err = ReadGroups(write("item,repo,category\nq1,django,math\n"), "repo")
	if err != nil || g["q1"] != "django" {
		t.Errorf("--group-column repo: %v %v", g, err)
	}
	for body, want := range map[string]string{
		"item,x\nq1,a\n":           "no group column",
		"name,group\nq1,a\n":       "no item id column",
		"item,group\nq1,a\nq1,b\n": `g.csv:3: column "item": item "q1" listed twice`,
		"item,group\nq1,a\n,b\n":   `g.csv:3: column "item" is empty`,
		"item,group\n":             "no items",
	} {
		if _, err := ReadGroups(write(body), ""); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", body, err, want)
		}
	}
	if _, err := ReadGroups(write("item,group\nq1,a\n"), "repo"); err == nil || !strings.Contains(err.Error(), `no column "repo"`) {
		t.Errorf("missing --group-column: %v", err)
	}
}
