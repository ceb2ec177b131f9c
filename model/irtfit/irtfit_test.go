package irtfit

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/model"
)

func TestOutNames(t *testing.T) {
	got, err := OutNames([]string{"d/swe/response_matrix.csv", "d/rb/response_matrix.csv", "d/lsat/LSAT7.csv", "x/LSAT7.csv", "y/a.b.csv", "a.b"}, nil)
	want := "swe rb lsat x a.b a"
	if err != nil || strings.Join(got, " ") != want {
		t.Errorf("OutNames: %v %v, want %s", got, err, want)
	}
	got, _ = OutNames([]string{"r.csv", "r.csv", "p/r.csv", "q/p/r.csv"}, nil)
	if strings.Join(got, " ") != "r r-2 p p-2" {
		t.Errorf("the same file twice: %v", got)
	}
}

// A folder written and read back is the same folder, with and without a
// bootstrap, at rank 1 and rank 2; the files are byte-identical when written
// again.
func TestWriteReadRoundTrip(t *testing.T) {
	nan := math.NaN()
	for _, tc := range []struct {
		rank  int
		boot  bool
		guess bool // a 3PL with trials per cell: items.csv's c, se_c and trials
	}{{1, false, false}, {1, true, false}, {2, false, false}, {2, true, false}, {1, true, true}, {2, false, true}} {
		set := Settings{Method: "cbmm", Data: "r.csv", Rank: tc.rank, Sigma: 1}
		if tc.guess {
			set.Model, set.Guess, set.GuessPrior = "3pl", "n_options", []float64{5, 17}
		}
		f := &Folder{Doc: Doc{Version: "0.1.0", Settings: set,
			Models: 2, Items: 2, Observed: 4, LossHistory: []float64{3, 2.5}, Loss: 2.5, Iterations: 2,
			KendallTau: model.Float(nan), RankMoves: []RankMove{}, FlagCounts: map[string]int{"never_solved": 1, "uninformative": 1, "weak_item_total": 1}, Gauge: GaugeJML,
			Diagnostics: &Diagnostics{CronbachAlpha: 0.75, AlphaMissing: "person-mean", MarginalReliability: 0.5, EmpiricalReliability: 0.625,
				ExtremeModels: 1, Flags: map[string]string{"misfit": "rule"}, Columns: "words"},
			// The starts and the certificate (train/irtguard).
			MaxGradient: 2.5e-4, Nested: "1pl", NestedLoss: 2.75, StartsAgree: new(bool), StartsNote: "the starts reached different optima",
			Starts: []Start{{Name: "svd", StartLoss: 4, Loss: 2.5, Iterations: 2, MaxGradient: 2.5e-4, Converged: true, Chosen: true},
				{Name: "1pl", StartLoss: 2.75, Loss: 2.625, Iterations: 7, MaxGradient: 1e-3, MaxProbDiff: 0.125}}}}
		f.Doc.Settings.GradTol = 1e-3
		f.Doc.FitStatistics = &FitStatistics{LogLikelihood: -1.5, LogPrior: -0.25, Parameters: 6, N: 4, AIC: 15, BIC: model.Float(3 + 6*math.Log(4)),
			Likelihood: "joint", LogPriorText: "none", Counting: "k"}
		if tc.rank == 1 {
			f.Information = []InformationPoint{{Theta: -0.5, Information: 0.25, SE: 2}, {Theta: 0, Information: 0, SE: nan}}
		}
		vec := func(x float64) []float64 {
			v := make([]float64, tc.rank)
			for d := range v {
				v[d] = x + float64(d)/8
			}
			return v
		}
		nanVec := func() []float64 {
			if tc.rank == 1 {
				return []float64{nan} // rank 1 reads an empty se column as NaN
			}
			v := make([]float64, tc.rank)
			for d := range v {
				v[d] = nan
			}
			return v
		}
		for i, name := range []string{"gpt, \"x\"", "m2"} {
			m := Model{Name: name, Theta: vec(0.5 - float64(i)), Score: 0.5 - float64(i), Rank: i + 1, Accuracy: 0.75 - 0.5*float64(i), AccuracyRank: i + 1}
			if tc.rank == 1 {
				m.Score = m.Theta[0]
			}
			if i == 0 { // the second row's person fit is empty (a row placed by add-model)
				m.PersonFit = &PersonFit{LZStar: -2.5, Infit: 1.125, Outfit: 1.75}
			}
			if tc.boot {
				m.SE, m.Lo, m.Hi, m.RankLo, m.RankHi = vec(0.1), vec(-1), vec(1), 1, 2
			} else {
				m.SE, m.Lo, m.Hi = nanVec(), nanVec(), nanVec()
			}
			f.Models = append(f.Models, m)
		}
		for j, id := range []string{"q1", "q2"} {
			it := Item{ID: id, A: vec(1.25), D: 0.5 - 0.5*float64(j), PCorrect: 0.5, NObs: 2, Flag: []string{"uninformative;weak_item_total", "never_solved"}[j],
				SED: nan, SEB: nan, SEA: nanVec(), ALo: nan, AHi: nan, DLo: nan, DHi: nan, BLo: nan, BHi: nan,
				ItemTotal: 0.25, ItemRest: -0.125, Infit: 1.0625, InfitZ: 0.5, Outfit: 1.75, OutfitZ: 2.5}
			if j == 1 {
				it.ItemTotal, it.ItemRest, it.Infit, it.InfitZ, it.Outfit, it.OutfitZ = nan, nan, nan, nan, nan, nan
			}
			it.B = model.Difficulty(it.A, it.D)
			if tc.guess {
				it.C, it.SEC, it.Trials = 0.25-0.05*float64(j), nan, float64(7+j)
				if tc.boot {
					it.SEC = 0.0625
				}
			}
			if tc.boot {
				it.SEA, it.SED, it.SEB = vec(0.2), 0.3, 0.25
				if tc.rank == 1 {
					it.ALo, it.AHi, it.DLo, it.DHi, it.BLo, it.BHi = 1, 1.5, -1, 0, -0.5, 0.75
				}
			}
			f.Items = append(f.Items, it)
		}
		dir := t.TempDir()
		if err := Write(dir, f); err != nil {
			t.Fatal(err)
		}
		got, err := Read(dir)
		if err != nil {
			t.Fatal(err)
		}
		if !math.IsNaN(float64(got.Doc.KendallTau)) {
			t.Errorf("rank %d: τ %v, want NaN (null)", tc.rank, got.Doc.KendallTau)
		}
		got.Doc.KendallTau, f.Doc.KendallTau = 0, 0
		if !reflect.DeepEqual(got.Doc, f.Doc) {
			t.Errorf("rank %d boot %v: doc\n got %+v\nwant %+v", tc.rank, tc.boot, got.Doc, f.Doc)
		}
		// NaN != NaN: compare the tables by writing them again.
		again := t.TempDir()
		got.Doc.KendallTau = model.Float(nan)
		if err := Write(again, got); err != nil {
			t.Fatal(err)
		}
		if pf := got.Models[0].PersonFit; pf == nil || *pf != *f.Models[0].PersonFit || got.Models[1].PersonFit != nil {
			t.Errorf("rank %d boot %v: person fit read back as %v, %v", tc.rank, tc.boot, pf, got.Models[1].PersonFit)
		}
		if tc.rank == 1 && (len(got.Information) != 2 || got.Information[0] != f.Information[0] || got.Information[1].Information != 0 || !math.IsNaN(got.Information[1].SE)) ||
			tc.rank > 1 && got.Information != nil {
			t.Errorf("rank %d: information read back as %v", tc.rank, got.Information)
		}
		for _, name := range []string{"abilities.csv", "items.csv", "fit.json", "information.csv"} {
			a, _ := os.ReadFile(filepath.Join(dir, name))
			b, _ := os.ReadFile(filepath.Join(again, name))
			if string(a) != string(b) {
				t.Errorf("rank %d boot %v: %s differs when written again:\n%s\n%s", tc.rank, tc.boot, name, a, b)
			}
		}
		if it := got.Items[0]; it.ItemTotal != 0.25 || it.ItemRest != -0.125 || it.Infit != 1.0625 || it.InfitZ != 0.5 || it.Outfit != 1.75 || it.OutfitZ != 2.5 ||
			!reflect.DeepEqual(it.Flags(), []string{"uninformative", "weak_item_total"}) || !math.IsNaN(got.Items[1].Infit) {
			t.Errorf("rank %d boot %v: diagnostics read back as %+v", tc.rank, tc.boot, it)
		}
		if tc.guess {
			fit := got.IRT()
			if fit.Family != "3pl" || !reflect.DeepEqual(fit.C, []float64{0.25, 0.2}) || got.Items[1].Trials != 8 ||
				!reflect.DeepEqual(got.TrialsPerAnswer(), []float64{3.5, 4}) || tc.boot && got.Items[0].SEC != 0.0625 {
				t.Errorf("rank %d boot %v: 3PL read back as %s, c %v, trials %v", tc.rank, tc.boot, fit.Family, fit.C, got.TrialsPerAnswer())
			}
		}
		if got.Models[0].Name != f.Models[0].Name || got.Models[1].RankLo != f.Models[1].RankLo || got.Items[1].Flag != "never_solved" ||
			!reflect.DeepEqual(got.Models[0].Theta, f.Models[0].Theta) || !reflect.DeepEqual(got.IRT(), f.IRT()) {
			t.Errorf("rank %d boot %v: read back %+v", tc.rank, tc.boot, got.Models)
		}
	}
	if _, err := Read(t.TempDir()); err == nil || !strings.HasSuffix(err.Error(), "is not a jeirt irt fit folder: no fit.json") {
		t.Errorf("empty folder: %v", err)
	}
}

// A folder written before items.csv had a "d" column: its "b" is the
// intercept, read into D, and the difficulty is derived.
func TestReadOldItemsIntercept(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"fit.json":      `{"settings": {"rank": 1, "sigma": 1}}`,
		"abilities.csv": "model,theta,rank,accuracy,accuracy_rank\nm1,0.5,1,0.75,1\n",
		"items.csv":     "item,a,b,se_a,se_b,p_correct,n_obs,flag,a_lo,a_hi,b_lo,b_hi\nq1,2,1,,0.25,0.8,5,,,,0.5,1.5\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	it := f.Items[0]
	if it.D != 1 || it.SED != 0.25 || it.DLo != 0.5 || it.DHi != 1.5 || it.B != -0.5 || !math.IsNaN(it.SEB) {
		t.Errorf("old items.csv read as %+v", it)
	}
	if m := f.IRT(); m.B[0] != 1 {
		t.Errorf("IRT() intercept %v, want 1", m.B[0])
	}
}

func TestDifficulty(t *testing.T) {
	for _, tc := range []struct {
		a    []float64
		d, b float64
	}{{[]float64{2}, 1, -0.5}, {[]float64{0.5}, -1, 2}, {[]float64{3, 4}, -10, 2}, {[]float64{-3, 4}, 5, -1}} {
		if got := model.Difficulty(tc.a, tc.d); math.Abs(got-tc.b) > 1e-15 {
			t.Errorf("Difficulty(%v, %v) = %v, want %v", tc.a, tc.d, got, tc.b)
		}
	}
	if !math.IsNaN(model.Difficulty([]float64{0}, 1)) || !math.IsNaN(model.Difficulty([]float64{0, 0}, 1)) {
		t.Error("zero slope: difficulty not NaN")
	}
}

// A folder written before the certificate has no max_gradient: it reads as
// NaN (unknown), not as a certified 0, and has no starts.
func TestReadBeforeCertificate(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "fit.json"), []byte(`{"settings": {"rank": 1, "sigma": 1}, "converged": true}`), 0o644)
	os.WriteFile(filepath.Join(dir, "abilities.csv"), []byte("model,theta,accuracy\nm1,0.5,0.75\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "items.csv"), []byte("item,a,d\nq1,1,0\n"), 0o644)
	f, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !math.IsNaN(float64(f.Doc.MaxGradient)) || f.Doc.Starts != nil || f.Doc.StartsAgree != nil || f.Doc.Settings.GradTol != 0 {
		t.Errorf("max_gradient %v, starts %v, agree %v, grad_tol %v", f.Doc.MaxGradient, f.Doc.Starts, f.Doc.StartsAgree, f.Doc.Settings.GradTol)
	}
}
