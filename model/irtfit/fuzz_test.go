package irtfit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzRead feeds an irt fit folder (fit.json, abilities.csv, items.csv) to
// Read: every input gives a folder whose models and items carry rank values
// each, or a short error.
func FuzzRead(f *testing.F) {
	f.Add([]byte(`{"settings": {"rank": 1, "sigma": 1}}`), []byte("model,theta,rank,accuracy,accuracy_rank\nm1,0.5,1,0.75,1\n"),
		[]byte("item,a,b,se_a,se_b,p_correct,n_obs,flag,a_lo,a_hi,b_lo,b_hi\nq1,2,1,,0.25,0.8,5,,,,0.5,1.5\n"))
	f.Add([]byte(`{"settings": {"rank": 2}}`), []byte("model,theta_1,theta_2,score,accuracy\nm1,0.5,1,0.7,0.75\n"),
		[]byte("item,a_1,a_2,d\nq1,2,1,0.5\n"))
	f.Add([]byte(`{"settings": {"rank": 2000000000}}`), []byte("model,theta\nm1,0.5\n"), []byte("item,a,d\nq1,1,0\n"))
	// n_obs and flag of abilities.csv, a null τ with its note, a convergence note.
	f.Add([]byte(`{"settings": {"rank": 1, "min_answers": 5}, "converged": false, "convergence_note": "degenerate data", "kendall_tau_vs_accuracy": null, "kendall_tau_note": "θ is the same for all 2"}`),
		[]byte("model,theta,se,lo,hi,rank,rank_lo,rank_hi,accuracy,accuracy_rank,n_obs,flag\nm1,0.5,,,,1,,,0.75,1,40,\nlucky,3.8,,,,,,,1,,1,few_answers\n"),
		[]byte("item,a,d,b,se_a,se_d,se_b,p_correct,n_obs,flag\nq1,2,1,-0.5,,,,0.8,5,\nq2,0,9,,,,,1,2,few_answers\n"))
	// A 3PL fit with lower asymptotes and trials per item.
	f.Add([]byte(`{"settings": {"rank": 1, "model": "3pl", "guess": "n_options"}}`), []byte("model,theta,accuracy\nm1,0.5,0.75\n"),
		[]byte("item,a,d,b,c,se_a,se_d,se_b,se_c,p_correct,n_obs,trials,flag\nq1,2,1,-0.5,0.25,,,,,0.8,5,12,\n"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, fit, abilities, items []byte) {
		for name, b := range map[string][]byte{"fit.json": fit, "abilities.csv": abilities, "items.csv": items} {
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		fo, err := Read(dir)
		if err != nil {
			if len(err.Error()) > 4096 {
				t.Errorf("error of %d bytes", len(err.Error()))
			}
			return
		}
		rk := fo.Rank()
		for _, m := range fo.Models {
			if len(m.Theta) != rk {
				t.Fatalf("model %q: %d abilities at rank %d", m.Name, len(m.Theta), rk)
			}
		}
		for _, it := range fo.Items {
			if len(it.A) != rk {
				t.Fatalf("item %q: %d discriminations at rank %d", it.ID, len(it.A), rk)
			}
		}
	})
}

// settings.rank is at most 65,536, and a rank above 1 needs its columns.
func TestReadRankLimit(t *testing.T) {
	for rank, want := range map[string]string{
		"2000000000": "fit.json: settings.rank 2000000000 is not a rank (1 to 65536)",
		"3":          "abilities.csv: no column theta_3 for settings.rank 3",
	} {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "fit.json"), []byte(`{"settings": {"rank": `+rank+`}}`), 0o644)
		os.WriteFile(filepath.Join(dir, "abilities.csv"), []byte("model,theta_1,theta_2,score,accuracy\nm1,0.5,1,0.7,0.75\n"), 0o644)
		os.WriteFile(filepath.Join(dir, "items.csv"), []byte("item,a_1,a_2,d\nq1,2,1,0.5\n"), 0o644)
		if _, err := Read(dir); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("rank %s: got %v, want %s", rank, err, want)
		}
	}
}
