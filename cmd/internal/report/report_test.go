package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"image/png"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/checkpoint"
	"github.com/jeirt/jeirt/model/read"
	"github.com/jeirt/jeirt/train/eval"
)

// writeFitFixture writes a rank-1 `jeirt irt fit` folder with 6 models and
// 6 items whose values the tests check against.
func writeFitFixture(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "fit")
	os.MkdirAll(dir, 0o755)
	files := map[string]string{
		"fit.json": `{"jeirt_version": "0.1.0", "settings": {"data": "data/bench/response_matrix.csv", "items": "` + filepath.Join(dir, "texts.csv") + `", "rank": 1, "sigma": 1,
 "min_discrimination": 0.1, "bootstrap": 0}, "models": 6, "items": 6, "observed": 36, "iterations": 12,
 "kendall_tau_vs_accuracy": 0.6}`,
		"abilities.csv": `model,theta,se,lo,hi,rank,rank_lo,rank_hi,accuracy,accuracy_rank
alpha,1.5,,,,1,,,0.9,1
beta,0.9,,,,2,,,0.5,5
gamma,0.2,,,,3,,,0.8,2
delta,-0.1,,,,4,,,0.7,3
eps,-0.8,,,,5,,,0.6,4
zeta,-1.7,,,,6,,,0.1,6
`,
		"texts.csv": "item_id,text\ndjango__django-1,\"Fix the ORM bug\nin   QuerySet\"\n",
		"items.csv": `item,a,b,se_a,se_b,p_correct,n_obs,flag,a_lo,a_hi,b_lo,b_hi
django__django-1,2.5,0.3,,,0.5,6,,,,,
django__django-2,1.2,-0.4,,,0.33,6,,,,,
sympy__sympy-7,0.05,0.1,,,0.5,6,uninformative,,,,
sympy__sympy-8,0,-3,,,0,6,never_solved,,,,
astropy__astropy-3,0.8,1.1,,,0.67,6,,,,,
astropy__astropy-4,0.02,2,,,1,6,always_solved,,,,
`,
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestReadFit(t *testing.T) {
	dir := writeFitFixture(t)
	f, err := ReadFit(dir)
	if err != nil {
		t.Fatal(err)
	}
	if f.Rank != 1 || f.Sigma != 1 || f.MinA != 0.1 || f.Tau != 0.6 || len(f.Models) != 6 || len(f.Items) != 6 || f.Data != "data/bench/response_matrix.csv" {
		t.Fatalf("fit: %+v", f)
	}
	beta := f.Models[1]
	if beta.Name != "beta" || beta.Score != 0.9 || beta.Rank != 2 || beta.AccuracyRank != 5 || beta.Move() != 3 || !math.IsNaN(beta.SE) {
		t.Errorf("beta: %+v", beta)
	}
	it := f.Items[3]
	if it.ID != "sympy__sympy-8" || it.A[0] != 0 || it.D != -3 || !math.IsNaN(it.B) || it.PCorrect != 0 || it.NObs != 6 || it.Flag != "never_solved" {
		t.Errorf("item 3: %+v", it)
	}
	if d := f.Discrimination(0); d != 2.5 {
		t.Errorf("discrimination of item 0: %v", d)
	}

	os.WriteFile(filepath.Join(dir, "items.csv"), []byte("item,a,b,p_correct,n_obs,flag\nq1,0.5,x,0.5,3,\n"), 0o644)
	_, err = ReadFit(dir)
	if err == nil || err.Error() != filepath.Join(dir, "items.csv")+`:2: column "b": "x" is not a number` {
		t.Errorf("bad number: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "items.csv"), []byte("item,b,p_correct\nq1,0.5,0.5\n"), 0o644)
	_, err = ReadFit(dir)
	if err == nil || err.Error() != filepath.Join(dir, "items.csv")+`: no column "a"` {
		t.Errorf("missing column: %v", err)
	}
	if _, err := ReadFit(t.TempDir()); err == nil || !strings.HasSuffix(err.Error(), "is not a jeirt irt fit folder: no fit.json") {
		t.Errorf("empty folder: %v", err)
	}
}

func TestItemGroupsAndTopGroups(t *testing.T) {
	r := &model.Responses{Items: []string{"7", "8", "x"}, ItemText: []string{"[alpacaeval-easy] How do I", "no tag", "[b]"}}
	got := itemGroups([]string{"django__django-11099", "pydata__xarray-4094", "7", "8", "org/name", "plain"}, r)
	want := []string{"django", "xarray", "alpacaeval-easy", "", "org", ""}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("itemGroups: %q, want %q", got, want)
	}
	r.ItemGroup = []string{"math", "code", ""}
	if g := itemGroups([]string{"7", "x"}, r); !reflect.DeepEqual(g, []string{"math", "b"}) {
		t.Errorf("group column first: %q", g)
	}
	names, of := topGroups([]string{"a", "b", "a", "c", "d", "", "a", "b"}, 2)
	if !reflect.DeepEqual(names, []string{"a", "b", "other"}) || !reflect.DeepEqual(of, []int{0, 1, 0, 2, 2, 2, 0, 1}) {
		t.Errorf("topGroups: %v %v", names, of)
	}
	if names, _ := topGroups([]string{"a", "a", ""}, 5); names != nil {
		t.Errorf("one group should give none, got %v", names)
	}
}

func TestSpearman(t *testing.T) {
	if r := eval.Spearman([]float64{1, 2, 3, 4}, []float64{10, 20, 30, 40}); r != 1 {
		t.Errorf("monotone: %v", r)
	}
	if r := eval.Spearman([]float64{1, 2, 3, 4}, []float64{4, 3, 2, 1}); r != -1 {
		t.Errorf("reversed: %v", r)
	}
	// With ties: mid-ranks x = 1.5 1.5 3, y = 1 2 3; Pearson of the ranks is √3/2.
	if r := eval.Spearman([]float64{1, 1, 2}, []float64{1, 2, 3}); math.Abs(r-math.Sqrt(3)/2) > 1e-12 {
		t.Errorf("ties: %v", r)
	}
}

// writeCheckpointFixture writes a small JE-IRT checkpoint whose question norms
// grow with item difficulty, with the responses it names in its config.
func writeCheckpointFixture(t *testing.T) (dir string, r *model.Responses) {
	t.Helper()
	root := t.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	N, J, D, d, H := 10, 30, 6, 3, 5
	r = &model.Responses{}
	for i := 0; i < N; i++ {
		r.Models = append(r.Models, fmt.Sprintf("m%02d", i))
	}
	for j := 0; j < J; j++ {
		r.Items = append(r.Items, fmt.Sprintf("%s__%s-%d", []string{"django", "sympy", "astropy"}[j%3], []string{"django", "sympy", "astropy"}[j%3], j))
	}
	// Item j is solved by the models i >= j/3: error rate grows with j.
	for i := 0; i < N; i++ {
		for j := 0; j < J; j++ {
			y := uint8(0)
			if i >= j/3 {
				y = 1
			}
			r.Model, r.Item, r.Label = append(r.Model, int32(i)), append(r.Item, int32(j)), append(r.Label, y)
		}
	}
	data := filepath.Join(root, "responses.csv")
	if err := read.WriteLongCSV(data, r); err != nil {
		t.Fatal(err)
	}
	m := &model.JEIRT{InputDim: D, Hidden: H, Dim: d, Models: r.Models, Items: r.Items,
		W1: make([]float32, H*D), C1: make([]float32, H), W2: make([]float32, d*H), C2: make([]float32, d),
		M: make([]float32, N*d), Q: make([]float32, J*d)}
	for _, v := range [][]float32{m.W1, m.W2, m.M} {
		for k := range v {
			v[k] = float32(rng.NormFloat64())
		}
	}
	for j := 0; j < J; j++ {
		scale := float32(0.2 + 0.1*float64(j))
		for k := 0; k < d; k++ {
			m.Q[j*d+k] = scale * float32(1+rng.Float64())
		}
	}
	cfg, _ := json.Marshal(map[string]any{"data": map[string]any{"responses": data, "format": "auto"}, "model": map[string]any{"dim": d}})
	metrics := `{"test": {"n": 30, "accuracy": 0.8, "auc": 0.85, "log_loss": 0.4, "brier": 0.13, "ece": 0.02},
 "val": {"n": 30, "accuracy": 0.79, "auc": null, "log_loss": 0.41, "brier": 0.14, "ece": 0.03},
 "baselines": {"majority": {"n": 30, "accuracy": 0.55, "auc": 0.5, "log_loss": 0.69, "brier": 0.25, "ece": 0.05}},
 "best_epoch": 2, "epochs_run": 3, "split_by": "cell",
 "history": [{"epoch": 1, "train_loss": 0.7, "val_loss": 0.6}, {"epoch": 2, "train_loss": 0.5, "val_loss": 0.45}, {"epoch": 3, "train_loss": 0.4, "val_loss": 0.47}]}`
	ck := &checkpoint.Checkpoint{Model: m, Files: map[string][]byte{"metrics.json": []byte(metrics)},
		Manifest: checkpoint.Manifest{JEIRTVersion: "test", Encoder: checkpoint.EncoderInfo{Spec: "hash:6", Fingerprint: "hash/test", Dim: D}, Config: cfg}}
	dir = filepath.Join(root, "checkpoint")
	if err := ck.Write(dir, false); err != nil {
		t.Fatal(err)
	}
	return dir, r
}

func writeRouteFixture(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "curve.csv")
	os.WriteFile(p, []byte(`policy,rule,param,accuracy,total_cost,mean_cost,items,fallbacks
router,min-p,0.5,0.62,10,0.1,100,0
router,min-p,0.7,0.7,30,0.3,100,2
router,min-p,0.9,0.74,80,0.8,100,9
best-single,,,0.72,100,1,100,0
oracle,,,0.9,20,0.2,100,0
`), 0o644)
	return p
}

func figureNames(r *Report) []string {
	var out []string
	for _, f := range r.Figures {
		out = append(out, f.Name)
	}
	return out
}

func TestReportAllInputs(t *testing.T) {
	ckDir, _ := writeCheckpointFixture(t)
	fitDir := writeFitFixture(t)
	rep, err := Build(Options{Checkpoint: ckDir, Fit: fitDir, RouteCSV: writeRouteFixture(t), Label: 2, Curves: 2, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"abilities", "icc", "discrimination", "information", "norm-error", "pca", "training", "cost-quality"}
	if got := figureNames(rep); !reflect.DeepEqual(got, want) {
		t.Fatalf("figures %v, want %v (notes %v)", got, want, rep.Notes)
	}
	if len(rep.Notes) != 0 {
		t.Errorf("notes with every input given: %v", rep.Notes)
	}
	byName := map[string]*Figure{}
	for _, f := range rep.Figures {
		byName[f.Name] = f
		if f.Caption == "" || f.Source == "" {
			t.Errorf("figure %s has no caption or source", f.Name)
		}
	}
	// The two models whose rank moved most are labelled: beta (+3), then the first of the −1 moves (gamma).
	svg := string(byName["abilities"].SVG)
	if !strings.Contains(svg, "beta (+3)") || !strings.Contains(svg, "gamma (-1)") || strings.Contains(svg, "alpha (") {
		t.Errorf("ability labels: beta (+3) and one ±1 move expected, alpha not")
	}
	// Near-zero items: 0.05, 0 and 0.02 are below min-a 0.1.
	if !strings.Contains(byName["discrimination"].Caption, "3 items (50.0%) lie below 0.1") ||
		!strings.Contains(byName["discrimination"].Caption, "1 always solved, 1 never solved, 1 uninformative") {
		t.Errorf("discrimination caption: %s", byName["discrimination"].Caption)
	}
	// ICC: the 2 most (2.5, 1.2) and 2 least (0.05, 0.8 after dropping
	// never/always solved items: candidates 2.5 1.2 0.8 0.05) discriminating.
	icc := string(byName["icc"].SVG)
	for _, id := range []string{"django__django-1 ", "django__django-2 ", "sympy__sympy-7 ", "astropy__astropy-3 "} {
		if !strings.Contains(icc, id) {
			t.Errorf("icc lacks %s", id)
		}
	}
	if strings.Contains(icc, "sympy__sympy-8") || strings.Contains(icc, "astropy__astropy-4") {
		t.Errorf("icc shows never/always solved items")
	}
	// Norms grow with the error rate by construction: ρ = 1 within the mean-accuracy ties.
	if !regexp.MustCompile(`ρ = 0\.9[0-9]{2}|ρ = 1\.000`).MatchString(byName["norm-error"].Caption) {
		t.Errorf("norm-error caption: %s", byName["norm-error"].Caption)
	}
	if !strings.Contains(byName["pca"].Caption, "coloured by item group") || !strings.Contains(string(byName["pca"].SVG), "django (10)") {
		t.Errorf("pca groups: %s", byName["pca"].Caption)
	}
	if !strings.Contains(byName["abilities"].Source, "jeirt irt fit --data data/bench/response_matrix.csv --out "+fitDir) {
		t.Errorf("ability source: %s", byName["abilities"].Source)
	}

	out := filepath.Join(t.TempDir(), "report")
	if err := rep.Write(out, false); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(out, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	html := string(page)
	if n := strings.Count(html, `<img src="data:image/png;base64,`); n != len(want) {
		t.Errorf("%d embedded figures, want %d", n, len(want))
	}
	// Self-contained: nothing is fetched (links to the files beside it are fine).
	for _, bad := range []string{"http://", "https://", "<link", "<script src", "@import"} {
		if strings.Contains(html, bad) {
			t.Errorf("index.html contains %q", bad)
		}
	}
	for _, s := range []string{`<table class="sortable" id="abilities">`, `<table class="sortable" id="items">`, `<table class="sortable" id="metrics">`,
		`<table class="sortable" id="route">`, `<td class="t">django</td><td class="t">Fix the ORM bug in QuerySet</td>`, `<td class="t">sympy</td><td class="t"></td>`, `<th>group</th><th>text</th>`, `th.addEventListener("click"`, `<td data-v="1.5">1.500</td>`, "Made from: <code>jeirt irt fit"} {
		if !strings.Contains(html, s) {
			t.Errorf("index.html lacks %q", s)
		}
	}
	for _, name := range want {
		b, err := os.ReadFile(filepath.Join(out, name+".png"))
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%s.png: %v", name, err)
		}
		f := byName[name]
		if w := img.Bounds().Dx(); w != int(math.Round(float64(f.W/vg.Inch)*144)) {
			t.Errorf("%s.png is %d px wide, want %v in at 144 dpi", name, w, float64(f.W/vg.Inch))
		}
		svgFile, err := os.ReadFile(filepath.Join(out, name+".svg"))
		if err != nil || !bytes.Contains(svgFile, []byte("<svg")) {
			t.Errorf("%s.svg: %v", name, err)
		}
	}
	if err := rep.Write(out, false); err == nil {
		t.Errorf("writing over an existing report without replace succeeded")
	}
}

func TestReportPartialInputs(t *testing.T) {
	rep, err := Build(Options{Fit: writeFitFixture(t)})
	if err != nil {
		t.Fatal(err)
	}
	if got := figureNames(rep); !reflect.DeepEqual(got, []string{"abilities", "icc", "discrimination", "information"}) {
		t.Errorf("fit only: %v", got)
	}
	ckDir, _ := writeCheckpointFixture(t)
	os.Remove(filepath.Join(filepath.Dir(ckDir), "responses.csv"))
	rep, err = Build(Options{Checkpoint: ckDir})
	if err != nil {
		t.Fatal(err)
	}
	if got := figureNames(rep); !reflect.DeepEqual(got, []string{"pca", "training"}) {
		t.Errorf("checkpoint without its data: %v", got)
	}
	notes := strings.Join(rep.Notes, "\n")
	if !strings.Contains(notes, "could not read the training data") || !strings.Contains(notes, "no question-norm figure") {
		t.Errorf("notes: %s", notes)
	}
	// Item error rates fall back on the IRT fit when the data is gone (ids
	// differ here, so no figure, but the note says where rates came from).
	rep, err = Build(Options{Checkpoint: ckDir, Fit: writeFitFixture(t)})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(rep.Notes, "\n"), "item error rates come from the IRT fit instead") {
		t.Errorf("notes: %v", rep.Notes)
	}
	var fe *model.FieldError
	if _, err := Build(Options{}); err == nil || err.Error() != "report: give checkpoint, fit or route-csv (or several)" || !errors.As(err, &fe) {
		t.Errorf("no inputs: %v", err)
	}
}

// One model far outside the others is drawn at the edge of the abilities
// figure (and said so in the caption) instead of flattening the rest; a fit
// without such a model keeps its full range.
func TestAbilityFigureOutlier(t *testing.T) {
	f := &Fit{Tau: math.NaN()}
	for i := 0; i < 40; i++ {
		acc := float64(i) / 40
		f.Models = append(f.Models, FitModel{Name: fmt.Sprint("m", i), Score: 4*acc - 2, Accuracy: acc, Rank: 40 - i, AccuracyRank: 40 - i})
	}
	lo, hi := robustRange(f)
	if !math.IsInf(lo, -1) && (lo > -2 || hi < 2) {
		t.Errorf("range without outliers [%v, %v] cuts the data", lo, hi)
	}
	fig, err := abilityFigure(f, 4, "test")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(fig.Caption, "drawn at the top or bottom edge") {
		t.Errorf("caption notes clipping without an outlier: %s", fig.Caption)
	}
	f.Models[0].Score = -60 // a model that solved nothing
	lo, hi = robustRange(f)
	if !(lo > -10 && lo < -2 && hi > 2 && hi < 10) {
		t.Errorf("range with an outlier: [%v, %v]", lo, hi)
	}
	fig, err = abilityFigure(f, 4, "test")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(fig.Caption, "1 model(s) with an ability far outside the rest") {
		t.Errorf("caption does not note the clipped model: %s", fig.Caption)
	}
}

// A route eval curve written without --costs (empty cost columns) gives the
// routing table and a note, not an error.
func TestReportRouteCurveWithoutCosts(t *testing.T) {
	p := filepath.Join(t.TempDir(), "curve.csv")
	os.WriteFile(p, []byte(`policy,rule,param,accuracy,total_cost,mean_cost,items,fallbacks
router,max-p,,0.70,,,100,0
router,margin,0.05,0.72,,,100,0
best-single,best-single,,0.69,,,100,0
oracle,oracle,,0.9,,,100,0
`), 0o644)
	rep, err := Build(Options{RouteCSV: p, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Figures) != 0 || len(rep.Tables) != 1 || len(rep.Tables[0].Rows) != 4 {
		t.Errorf("figures %v, %d tables", figureNames(rep), len(rep.Tables))
	}
	if len(rep.Notes) != 1 || !strings.Contains(rep.Notes[0], "no costs") {
		t.Errorf("notes %v", rep.Notes)
	}
	if err := rep.Write(filepath.Join(t.TempDir(), "report"), false); err != nil {
		t.Fatal(err)
	}
}

// A fit with the item diagnostics shows them: rest-score r, infit and outfit
// columns in the items table (flags split), and α and the marginal
// reliability among the inputs' lines.
func TestItemTableDiagnostics(t *testing.T) {
	dir := writeFitFixture(t)
	os.WriteFile(filepath.Join(dir, "items.csv"), []byte(`item,a,d,b,p_correct,n_obs,flag,item_total_r,item_rest_r,infit,infit_zstd,outfit,outfit_zstd
q1,2.5,0.3,-0.12,0.5,6,,0.6,0.55,0.95,-0.2,1.1,0.4
q2,0.05,0.1,-2,0.5,6,uninformative;weak_item_total,0.1,-0.05,1.7,2.5,2.25,3.1
`), 0o644)
	fj := filepath.Join(dir, "fit.json")
	raw, _ := os.ReadFile(fj)
	raw = bytes.Replace(raw, []byte(`"items": 6,`), []byte(`"items": 2,`), 1) // the two rows above: irtfit.Read checks the count
	os.WriteFile(fj, bytes.Replace(raw, []byte(`"kendall_tau_vs_accuracy": 0.6}`),
		[]byte(`"kendall_tau_vs_accuracy": 0.6, "diagnostics": {"cronbach_alpha": 0.875, "marginal_reliability": 0.9375}}`), 1), 0o644)
	f, err := ReadFit(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.reliabilityLine(); got != "Cronbach's α 0.8750, marginal reliability 0.9375" {
		t.Errorf("reliability line %q", got)
	}
	tab := itemTable(f)
	if h := strings.Join(tab.Head, ","); h != "item,a,d,b,p correct,observed,flag,rest r,infit,outfit" {
		t.Fatalf("head %s", h)
	}
	var row []string
	for _, c := range tab.Rows[1] {
		row = append(row, c.Text)
	}
	if got := strings.Join(row, "|"); got != "q2|0.050|0.100|-2.000|0.500|6|uninformative, weak_item_total|-0.050|1.700|2.250" {
		t.Errorf("row of q2: %s", got)
	}
}

// Every axis gets 5 to 10 labelled round ticks (gonum's default gave figure
// 1 as few as three), with values a reader can place.
func TestReadableTicks(t *testing.T) {
	for _, c := range []struct {
		lo, hi float64
		first  string
	}{{0.004, 0.79, "0.1"}, {-3.9, 1.8, "-3"}, {0, 1, "0.0"}, {0.5, 0.62, "0.50"}, {1, 100, "20"}, {-1e-3, 4e-3, "-0.001"}, {0, 44, "0"}} {
		var labels []string
		for _, tk := range (readableTicks{}).Ticks(c.lo, c.hi) {
			if tk.Value < c.lo-1e-12 || tk.Value > c.hi+1e-12 {
				t.Errorf("[%v, %v]: tick %v outside", c.lo, c.hi, tk.Value)
			}
			if tk.Label != "" {
				labels = append(labels, tk.Label)
			}
		}
		if len(labels) < 5 || len(labels) > 10 || labels[0] != c.first {
			t.Errorf("[%v, %v]: labels %v, want 5 to 10 starting at %s", c.lo, c.hi, labels, c.first)
		}
	}
}

// A flat item's legend entry gives its P, not a difficulty −d/a that means
// nothing at a ≈ 0; the ICC legend is drawn beside the curves.
func TestICCLegend(t *testing.T) {
	f := &Fit{Sigma: 1, MinA: 0.1, Items: []FitItem{
		{ID: "steep", A: []float64{2}, D: 1, B: -0.5, PCorrect: 0.6, NObs: 10},
		{ID: "flat", A: []float64{0.001}, D: -0.4, B: 400, PCorrect: 0.4, NObs: 10},
	}}
	if got := iccLabel(f, 0); got != "steep  a=2.00 b=-0.50" {
		t.Errorf("steep: %q", got)
	}
	if got := iccLabel(f, 1); got != "flat  a=0.00 flat, P≈0.40" {
		t.Errorf("flat: %q", got)
	}
	fig, err := iccFigure(f, 1, "test")
	if err != nil || fig == nil {
		t.Fatal(err)
	}
	if !fig.LegendOutside || fig.W <= 7*vg.Inch {
		t.Errorf("ICC legend inside the plot (width %v)", fig.W)
	}
}

// The test information of a fit folder is its information.csv; a folder
// written before it gets the same computed from its items, Σ a²p(1 − p) at
// each θ; the figure draws it with the SE of θ, and the inputs list the fit
// statistics of fit.json.
func TestInformationFigure(t *testing.T) {
	dir := writeFitFixture(t)
	f, err := ReadFit(dir)
	if err != nil {
		t.Fatal(err)
	}
	a := []float64{2.5, 1.2, 0.05, 0, 0.8, 0.02}
	d := []float64{0.3, -0.4, 0.1, -3, 1.1, 2}
	p0 := f.Information[60]
	want := 0.0
	for j := range a {
		p := 1 / (1 + math.Exp(-d[j]))
		want += a[j] * a[j] * p * (1 - p)
	}
	if len(f.Information) != 121 || p0.Theta != 0 || math.Abs(p0.Information-want) > 1e-12 || math.Abs(p0.SE-1/math.Sqrt(want)) > 1e-12 {
		t.Fatalf("computed information at θ %v: %v se %v, want %v %v (%d points)", p0.Theta, p0.Information, p0.SE, want, 1/math.Sqrt(want), len(f.Information))
	}
	fig, err := informationFigure(f, "src")
	if err != nil || fig == nil || !bytes.Contains(fig.SVG, []byte("Test information (peak")) || len(fig.PNG) == 0 {
		t.Fatalf("figure: %v %v", fig, err)
	}
	// information.csv, when the folder has it, is what the report draws;
	// fit.json's fit_statistics is listed among the inputs.
	csv := "theta,information,se\n-1,4,0.5\n0,16,0.25\n1,4,0.5\n"
	os.WriteFile(filepath.Join(dir, "information.csv"), []byte(csv), 0o644)
	raw, _ := os.ReadFile(filepath.Join(dir, "fit.json"))
	stats := `, "fit_statistics": {"log_likelihood": -20.5, "log_prior": -1.25, "parameters": 18, "n": 36, "aic": 77, "bic": 105.5, "likelihood": "joint", "log_prior_terms": "t", "counting": "c"}}`
	os.WriteFile(filepath.Join(dir, "fit.json"), append(bytes.TrimRight(bytes.TrimSpace(raw), "}"), stats...), 0o644)
	rep, err := Build(Options{Fit: dir})
	if err != nil {
		t.Fatal(err)
	}
	var fromFile *Figure
	for _, g := range rep.Figures {
		if g.Name == "information" {
			fromFile = g
		}
	}
	if fromFile == nil || !bytes.Contains(fromFile.SVG, []byte("peak 16 at θ = 0")) {
		t.Errorf("information figure from information.csv: %v", fromFile)
	}
	found := false
	for _, in := range rep.Inputs {
		found = found || in[0] == "fit statistics" && in[1] == "log-likelihood -20.5, log-prior -1.25 (the loss is minus their sum); AIC 77, BIC 105.5 (k 18, n 36)"
	}
	if !found {
		t.Errorf("inputs: %v", rep.Inputs)
	}
}

// The models table shows abilities.csv's person fit (– where it is empty;
// -3.125 prints as strconv rounds it, to even).
func TestAbilityTablePersonFit(t *testing.T) {
	dir := writeFitFixture(t)
	os.WriteFile(filepath.Join(dir, "abilities.csv"), []byte("model,theta,se,lo,hi,rank,rank_lo,rank_hi,accuracy,accuracy_rank,n_obs,flag,lz_star,infit,outfit\n"+
		"alpha,1.5,,,,1,,,0.9,1,6,person_misfit,-3.125,1.5,1.75\nbeta,0.9,,,,2,,,0.5,2,6,,,,\n"), 0o644)
	doc, _ := os.ReadFile(filepath.Join(dir, "fit.json")) // two models now: fit.json says so, as a fit would
	os.WriteFile(filepath.Join(dir, "fit.json"), []byte(strings.Replace(string(doc), `"models": 6`, `"models": 2`, 1)), 0o644)
	f, err := ReadFit(dir)
	if err != nil {
		t.Fatal(err)
	}
	tab := abilityTable(f)
	if h := strings.Join(tab.Head[9:], ","); h != "flag,lz*,infit,outfit" {
		t.Errorf("head %s", h)
	}
	var got []string
	for _, row := range tab.Rows {
		for _, c := range row[9:] {
			got = append(got, c.Text)
		}
	}
	if s := strings.Join(got, " "); s != "person_misfit -3.12 1.50 1.75  – – –" {
		t.Errorf("person fit cells %q", s)
	}
}
