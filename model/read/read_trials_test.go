package read

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/model"
)

func writeFile(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// The four ways to give cells of several trials read to the same responses:
// successes,trials columns, k,n columns, a label column counted by a trials
// column, repeated 0/1 rows with --duplicates trials, and k/n cells of a wide
// file; and so does each one's Parquet copy.
func TestTrialsFourWays(t *testing.T) {
	dir := t.TempDir()
	files := map[string]struct {
		body string
		opt  Options
	}{
		"succ-trials.csv": {"model,item,successes,trials\nm1,q1,2,3\nm1,q2,0,1\nm2,q1,1,1\nm2,q2,4,4\n", Options{}},
		"k-n.csv":         {"model_name,question_id,k,n\nm1,q1,2,3\nm2,q2,4,4\nm1,q2,0,1\nm2,q1,1,1\n", Options{}},
		"correct-n.csv":   {"model,item,correct,trials\nm1,q1,2,3\nm1,q2,0,1\nm2,q1,1,1\nm2,q2,4,4\nm3,q1,,0\n", Options{}},
		"repeated.csv": {"model,item,correct\nm1,q1,1\nm1,q2,0\nm2,q2,1\nm1,q1,0\nm2,q1,1\nm2,q2,1\nm1,q1,1\nm2,q2,1\nm2,q2,1\n",
			Options{Duplicates: "trials"}},
		"wide.csv": {"model,q1,q2\nm1,2/3,0\nm2,1,4/4\n", Options{}},
	}
	var want *model.Responses
	for name, f := range files {
		p := writeFile(t, dir, name, f.body)
		r, rep, err := File(p, f.opt)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if name == "correct-n.csv" {
			if rep.Blank != 1 || !strings.Contains(rep.Why, `successes column "correct" and trials column "trials"`) {
				t.Errorf("%s: blank %d, why %q", name, rep.Blank, rep.Why)
			}
			r.Models = r.Models[:2] // m3 has no cell
		}
		if want == nil {
			want = r
			if !slices.Equal(r.Trials, []int32{3, 1, 1, 4}) || !slices.Equal(r.Successes, []float64{2, 0, 1, 4}) ||
				!slices.Equal(r.Label, []uint8{1, 0, 1, 1}) {
				t.Fatalf("%s: trials %v successes %v labels %v", name, r.Trials, r.Successes, r.Label)
			}
		}
		sameResponses(t, r, want)
		if name == "repeated.csv" {
			if rep.DuplicateCells != 2 || rep.DuplicateRows != 5 || rep.Conflicts != 1 {
				t.Errorf("repeated rows: %+v", rep)
			}
		}
		if strings.HasPrefix(name, "wide") {
			continue
		}
		pq := filepath.Join(dir, name+".parquet")
		if _, err := ConvertToParquet(p, pq, 2); err != nil {
			t.Fatal(err)
		}
		rp, _, err := File(pq, f.opt)
		if err != nil {
			t.Fatalf("%s as Parquet: %v", name, err)
		}
		if name == "correct-n.csv" {
			rp.Models = rp.Models[:2]
		}
		sameResponses(t, rp, want)
	}
	if MeanOf := want.MeanCorrect(); MeanOf != 7.0/9 {
		t.Errorf("mean correct %v, want 7/9 (successes over trials)", MeanOf)
	}
	if acc := want.ModelAccuracy(); acc[0] != 0.5 || acc[1] != 1 {
		t.Errorf("model accuracy %v", acc)
	}
}

// Fractions are graded scores only with --graded; exact 0s and 1s stay 0/1
// answers, so a file of only those is binary.
func TestGradedLabels(t *testing.T) {
	dir := t.TempDir()
	body := "model,item,score\nm1,q1,0\nm1,q2,0.25\nm2,q1,1\nm2,q2,0.5\n"
	long := writeFile(t, dir, "g.csv", strings.Replace(body, "score", "label", 1))
	_, _, err := File(long, Options{})
	if err == nil || err.Error() != long+`:3: column "label": "0.25" is not a 0/1 label (for graded scores in [0, 1] use --graded)` {
		t.Fatalf("without --graded: %v", err)
	}
	r, _, err := File(long, Options{Graded: true})
	if err != nil {
		t.Fatal(err)
	}
	if r.Trials != nil || !slices.Equal(r.Successes, []float64{0, 0.25, 1, 0.5}) || !slices.Equal(r.Label, []uint8{0, 0, 1, 1}) {
		t.Fatalf("graded: trials %v successes %v labels %v", r.Trials, r.Successes, r.Label)
	}
	if r.GradedCells() != 2 {
		t.Errorf("graded cells %d, want 2", r.GradedCells())
	}
	wide := writeFile(t, dir, "w.csv", "model,q1,q2\nm1,0,0.25\nm2,1.0,.5\n")
	rw, _, err := File(wide, Options{Graded: true})
	if err != nil {
		t.Fatal(err)
	}
	sameResponses(t, rw, r)
	py := writeFile(t, dir, "g.jsonl", `{"subject_id":"m1","responses":{"q1":0,"q2":0.25}}`+"\n"+`{"subject_id":"m2","responses":{"q1":true,"q2":"0.5"}}`+"\n")
	rpy, _, err := File(py, Options{Graded: true})
	if err != nil {
		t.Fatal(err)
	}
	sameResponses(t, rpy, r)
	pq := filepath.Join(dir, "w.parquet")
	if _, err := ConvertToParquet(wide, pq, 0); err != nil {
		t.Fatal(err)
	}
	rpq, _, err := File(pq, Options{Graded: true})
	if err != nil {
		t.Fatal(err)
	}
	sameResponses(t, rpq, r)
	if _, _, err := File(pq, Options{}); err == nil || !strings.Contains(err.Error(), "use --graded") {
		t.Errorf("Parquet without --graded: %v", err)
	}
	binary := writeFile(t, dir, "b.csv", "model,item,label\nm1,q1,0\nm1,q2,1.0\n")
	rb, _, err := File(binary, Options{Graded: true})
	if err != nil || rb.Weighted() {
		t.Errorf("0/1 labels with --graded: %v, weighted %v", err, rb != nil && rb.Weighted())
	}
	// Repeated graded rows: --duplicates trials adds the scores up.
	rep := writeFile(t, dir, "rep.csv", "model,item,label\nm1,q1,0.25\nm1,q1,0.5\nm1,q1,1\n")
	rr, _, err := File(rep, Options{Graded: true, Duplicates: "trials"})
	if err != nil || !slices.Equal(rr.Successes, []float64{1.75}) || !slices.Equal(rr.Trials, []int32{3}) {
		t.Fatalf("repeated scores: %v %v", err, rr)
	}
	if _, _, err := File(rep, Options{Graded: true}); err == nil || !strings.Contains(err.Error(), "--duplicates majority resolves 0/1 answers only") {
		t.Errorf("majority over scores: %v", err)
	}
	rf, _, err := File(rep, Options{Graded: true, Duplicates: "first"})
	if err != nil || !slices.Equal(rf.Successes, []float64{0.25}) {
		t.Errorf("first over scores: %v %v", err, rf)
	}
}

func TestTrialsBadInput(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ body, want string }{
		{"model,item,k,n\nm,q,4,3\n", `:2: column "k": 4 successes in 3 trials: more successes than trials`},
		{"model,item,k,n\nm,q,1.5,3\n", `:2: column "k": "1.5" is a fractional number of successes (use --graded for graded scores)`},
		{"model,item,k,n\nm,q,1,2.5\n", `:2: column "n": "2.5" is not a number of trials (a whole number, at least 0)`},
		{"model,item,k,n\nm,q,1,\n", `:2: column "n": "1" successes with no trials`},
		{"model,item,k,n\nm,q,,2\n", `:2: column "k": no successes given for 2 trials`},
		{"model,q1\nm,4/3\n", `:2: column "q1": "4/3" is not k successes in n trials with 0 ≤ k ≤ n`},
		{"model,q1,q2\nm,-1,0.5\n", `:2: column "q2": "0.5" is a score or a count of trials, but line 2 has -1: scores are in [0, 1] and wrong answers 0`},
		{"model,q1\nm,1.5\n", `:2: column "q1": "1.5" is not a 0/1 label, a score in [0, 1] or k/n`},
	} {
		p := writeFile(t, dir, "bad.csv", c.body)
		_, _, err := File(p, Options{Graded: strings.Contains(c.want, "score") && !strings.Contains(c.want, "--graded")})
		if err == nil || err.Error() != p+c.want {
			t.Errorf("%q: got %v, want %s", c.body, err, p+c.want)
		}
	}
}

// The response cache keeps trials and successes, and --graded is part of its key.
func TestTrialsCache(t *testing.T) {
	dir := t.TempDir()
	p := writeFile(t, dir, "r.csv", "model,item,label\nm1,q1,0.5\nm1,q1,1\nm2,q2,1\nm2,q1,2/5\n")
	opt := Options{CacheDir: filepath.Join(dir, "cache"), CacheMin: -1, Graded: true, Duplicates: "trials"}
	want, rep, err := File(p, opt)
	if err != nil || rep.Cache != "written" {
		t.Fatalf("%v %q", err, rep.Cache)
	}
	got, rep, err := File(p, opt)
	if err != nil || rep.Cache != "loaded" {
		t.Fatalf("%v %q", err, rep.Cache)
	}
	sameResponses(t, got, want)
	if !slices.Equal(got.Trials, []int32{2, 5, 1}) || !slices.Equal(got.Successes, []float64{1.5, 2, 1}) {
		t.Errorf("cached trials %v successes %v", got.Trials, got.Successes)
	}
	opt.Graded = false
	if _, _, err := File(p, opt); err == nil {
		t.Error("the cache of a --graded read was used without --graded")
	}
}

// WriteLongCSV writes successes and trials, and reads back to the same cells.
func TestTrialsWriteRoundTrip(t *testing.T) {
	dir := t.TempDir()
	for _, body := range []string{
		"model,item,k,n\nm1,q1,2,3\nm1,q2,0,1\nm2,q1,1,1\n",
		"model,item,label\nm1,q1,0.1\nm1,q2,0\nm2,q1,0.7\n",
	} {
		p := writeFile(t, dir, "in.csv", body)
		r, _, err := File(p, Options{Graded: true})
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, "out.csv")
		if err := WriteLongCSV(out, r); err != nil {
			t.Fatal(err)
		}
		back, _, err := File(out, Options{Graded: true})
		if err != nil {
			t.Fatal(err)
		}
		sameResponses(t, back, r)
	}
}
