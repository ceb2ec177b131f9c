package irtfit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A fit folder is read like user data: every case is a folder that jeirt
// could have written, edited or damaged in one place, and the error names
// the file, the line and column (or the field) and the fix.
func TestSafetyFitFolders(t *testing.T) {
	const (
		fitJSON   = `{"settings": {"method": "cbmm", "rank": 1, "sigma": {SIGMA}, "tol": {TOL}, "level": {LEVEL}, "max_iter": 1000}, "models": 3, "items": 3}`
		abilities = "model,theta,accuracy\nm1,{THETA},0.75\nm2,0,0.5\nm3,-0.5,0.25\n"
		items     = "item,a,d\nq1,{A},{D}\nq2,1,0\nq3,0.5,-1\n"
		fix       = "; the fit folder was edited or damaged: restore it, or fit again with jeirt irt fit"
	)
	base := map[string]string{"{SIGMA}": "1", "{TOL}": "1e-6", "{LEVEL}": "0.95", "{THETA}": "0.5", "{A}": "1.5", "{D}": "0.25"}
	for _, tc := range []struct {
		name string
		set  map[string]string // placeholders changed from base
		edit func(files map[string]string)
		want string // the error after the folder's path
	}{
		{name: "items.csv missing a row", edit: func(f map[string]string) { f["items.csv"] = strings.TrimSuffix(f["items.csv"], "q3,0.5,-1\n") },
			want: "items.csv has 2 item rows, and DIR/fit.json says items 3: the files are not one fit" + fix},
		{name: "abilities.csv missing a row", edit: func(f map[string]string) {
			f["abilities.csv"] = strings.TrimSuffix(f["abilities.csv"], "m3,-0.5,0.25\n")
		},
			want: "abilities.csv has 2 model rows, and DIR/fit.json says models 3: the files are not one fit" + fix},
		{name: "items.csv with an extra row", edit: func(f map[string]string) { f["items.csv"] += "q4,1,1\n" },
			want: "items.csv has 4 item rows, and DIR/fit.json says items 3: the files are not one fit" + fix},
		{name: "fit.json counting no items", edit: func(f map[string]string) {
			f["fit.json"] = strings.Replace(f["fit.json"], `"items": 3`, `"items": 0`, 1)
		},
			want: "fit.json: items 0: a fit has at least one item" + fix},
		{name: "sigma -1", set: map[string]string{"{SIGMA}": "-1"},
			want: "fit.json: settings.sigma -1: the logistic scale must be positive and at most 1e+06" + fix},
		{name: "sigma 0", set: map[string]string{"{SIGMA}": "0"},
			want: "fit.json: settings.sigma 0: the logistic scale must be positive and at most 1e+06" + fix},
		{name: "sigma 1e308", set: map[string]string{"{SIGMA}": "1e308"},
			want: "fit.json: settings.sigma 1e+308: the logistic scale must be positive and at most 1e+06" + fix},
		{name: "tol -1", set: map[string]string{"{TOL}": "-1"},
			want: "fit.json: settings.tol -1: must be finite and not negative" + fix},
		{name: "max_iter -5", edit: func(f map[string]string) {
			f["fit.json"] = strings.Replace(f["fit.json"], `"max_iter": 1000`, `"max_iter": -5`, 1)
		},
			want: "fit.json: settings.max_iter -5: must not be negative" + fix},
		{name: "theta NaN", set: map[string]string{"{THETA}": "NaN"},
			want: `abilities.csv:2: model "m1": theta NaN, not a finite number (column "theta")` + fix},
		{name: "theta 1e308", set: map[string]string{"{THETA}": "1e308"},
			want: `abilities.csv:2: model "m1": theta 1e+308, beyond ±1e+06 (column "theta"), a value no fit writes` + fix},
		{name: "theta -Inf", set: map[string]string{"{THETA}": "-Inf"},
			want: `abilities.csv:2: model "m1": theta -Inf, not a finite number (column "theta")` + fix},
		{name: "slope NaN", set: map[string]string{"{A}": "nan"},
			want: `items.csv:2: item "q1": slope NaN, not a finite number (column "a")` + fix},
		{name: "slope 1e7", set: map[string]string{"{A}": "1e7"},
			want: `items.csv:2: item "q1": slope 1e+07, beyond ±1e+06 (column "a"), a value no fit writes` + fix},
		{name: "intercept +Inf", set: map[string]string{"{D}": "+Inf"},
			want: `items.csv:2: item "q1": intercept +Inf, not a finite number (column "d")` + fix},
		{name: "intercept -1e308 on the last row", edit: func(f map[string]string) {
			f["items.csv"] = strings.Replace(f["items.csv"], "q3,0.5,-1", "q3,0.5,-1e308", 1)
		},
			want: `items.csv:4: item "q3": intercept -1e+308, beyond ±1e+06 (column "d"), a value no fit writes` + fix},
		{name: "old intercept column b NaN", edit: func(f map[string]string) { f["items.csv"] = strings.Replace(f["items.csv"], "item,a,d", "item,a,b", 1) }, set: map[string]string{"{D}": "NaN"},
			want: `items.csv:2: item "q1": intercept NaN, not a finite number (column "b")` + fix},
		{name: "rank-2 score NaN", edit: func(f map[string]string) {
			f["fit.json"] = strings.Replace(f["fit.json"], `"rank": 1`, `"rank": 2`, 1)
			f["abilities.csv"] = "model,theta_1,theta_2,score,accuracy\nm1,0.5,0,NaN,0.75\nm2,0,0,0,0.5\nm3,-0.5,0,-0.5,0.25\n"
			f["items.csv"] = "item,a_1,a_2,d\nq1,1,0,0\nq2,1,1,0\nq3,0.5,0,-1\n"
		}, want: `abilities.csv:2: model "m1": score NaN, not a finite number (column "score")` + fix},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vals := map[string]string{}
			for k, v := range base {
				vals[k] = v
			}
			for k, v := range tc.set {
				vals[k] = v
			}
			files := map[string]string{"fit.json": fitJSON, "abilities.csv": abilities, "items.csv": items}
			if tc.edit != nil {
				tc.edit(files)
			}
			dir := t.TempDir()
			for name, text := range files {
				for k, v := range vals {
					text = strings.ReplaceAll(text, k, v)
				}
				if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want := filepath.Join(dir, strings.ReplaceAll(tc.want, "DIR", dir))
			if _, err := Read(dir); err == nil || err.Error() != want {
				t.Errorf("got  %v\nwant %s", err, want)
			}
		})
	}
	// The folder unedited reads.
	dir := t.TempDir()
	for name, text := range map[string]string{"fit.json": fitJSON, "abilities.csv": abilities, "items.csv": items} {
		for k, v := range base {
			text = strings.ReplaceAll(text, k, v)
		}
		os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644)
	}
	if f, err := Read(dir); err != nil || len(f.Items) != 3 || f.Models[0].Theta[0] != 0.5 || f.Items[0].A[0] != 1.5 {
		t.Errorf("the unedited folder: %v", err)
	}
}
