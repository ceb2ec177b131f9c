// Package report renders what jeirt learned as a self-contained web page: a
// JE-IRT checkpoint (question and model embeddings, metrics), a cBMM fit
// (abilities, item parameters) and a router's cost-quality curve, drawn with
// gonum/plot. The page needs no network: styles and the table-sorting script
// are inline and figures are embedded as data URIs; each figure is also
// written beside the page as PNG and SVG.
package report

import (
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/checkpoint"
	"github.com/jeirt/jeirt/model/fileio"
	"github.com/jeirt/jeirt/model/progress"
	"github.com/jeirt/jeirt/model/read"
)

// Options say what to render. At least one of Checkpoint, Fit and RouteCSV
// must be set; the report shows what they allow.
type Options struct {
	Checkpoint string // folder written by jeirt train
	Fit        string // folder written by jeirt irt fit
	RouteCSV   string // CSV written by jeirt route eval --out
	// Data (and Items) override the responses the checkpoint was trained on,
	// used for item error rates and groups; by default they are read from the
	// paths in the checkpoint's config.
	Data, Items string
	// DataRead says how Data is read (its Format and Duplicates; the zero
	// value decides the format from the header and keeps majority labels).
	DataRead read.Options
	Label    int           // models to label in the ability figure; 0 means 8
	Curves   int           // item characteristic curves per end; 0 means 4
	Version  string        // the jeirt release, shown in the footer
	Log      progress.Logf // progress; nil is silent
}

// Report is a rendered report, ready to write.
type Report struct {
	Title   string
	Inputs  [][2]string // what was read, as (name, value)
	Notes   []string    // figures left out and why
	Figures []*Figure
	Tables  []*Table
	Version string
	Created string
}

// Table is a sortable table of the page.
type Table struct {
	ID      string
	Title   string
	Caption string
	Head    []string
	Rows    [][]Cell
}

// Cell is one table cell; Sort, when set, is the value the column sorts by.
type Cell struct {
	Text string
	Sort string
	Left bool // left-aligned, wrapping text
}

func num(v float64, digits int) Cell {
	if math.IsNaN(v) {
		return Cell{Text: "–", Sort: "-1e308"}
	}
	return Cell{Text: strconv.FormatFloat(v, 'f', digits, 64), Sort: strconv.FormatFloat(v, 'g', -1, 64)}
}

func integer(v int) Cell { return Cell{Text: strconv.Itoa(v), Sort: strconv.Itoa(v)} }

// Build reads the inputs and draws every figure they allow.
func Build(opt Options) (*Report, error) {
	if opt.Checkpoint == "" && opt.Fit == "" && opt.RouteCSV == "" {
		return nil, model.FieldErrorf("Checkpoint", "report: give {Checkpoint}, {Fit} or {RouteCSV} (or several)")
	}
	log := opt.Log
	if opt.Label <= 0 {
		opt.Label = 8
	}
	if opt.Curves <= 0 {
		opt.Curves = 4
	}
	rep := &Report{Version: opt.Version, Created: time.Now().UTC().Format("2006-01-02 15:04 UTC")}
	var titles []string
	// add(reason)(figure, err) keeps a figure, or notes reason when there
	// was too little data to draw it.
	add := func(reason string) func(*Figure, error) error {
		return func(f *Figure, err error) error {
			if err != nil {
				return err
			}
			if f == nil {
				rep.Notes = append(rep.Notes, reason)
				return nil
			}
			log.Printf("report: figure %s (%s.png, %s.svg)", f.Title, f.Name, f.Name)
			rep.Figures = append(rep.Figures, f)
			return nil
		}
	}

	var fit *Fit
	if opt.Fit != "" {
		var err error
		if fit, err = ReadFit(opt.Fit); err != nil {
			return nil, err
		}
		src := fitCommand(fit)
		fit.attachText(log)
		titles = append(titles, fmt.Sprintf("IRT fit of %s", dataName(fit.Data)))
		rep.Inputs = append(rep.Inputs, [2]string{"IRT fit", fmt.Sprintf("%s — %d models × %d items, rank %d, σ = %g, %d observed cells, %d iterations",
			opt.Fit, len(fit.Models), len(fit.Items), fit.Rank, fit.Sigma, fit.Observed, fit.Iter)})
		if line := fit.reliabilityLine(); line != "" {
			rep.Inputs = append(rep.Inputs, [2]string{"test reliability", line})
		}
		if line := fit.statsLine(); line != "" {
			rep.Inputs = append(rep.Inputs, [2]string{"fit statistics", line})
		}
		if err := add("no ability figure: the fit has no models with an accuracy")(abilityFigure(fit, opt.Label, src)); err != nil {
			return nil, err
		}
		if err := add("no item characteristic curves: every item was solved by all models or by none")(iccFigure(fit, opt.Curves, src)); err != nil {
			return nil, err
		}
		if err := add("no discrimination histogram: fewer than two items")(discriminationFigure(fit, src)); err != nil {
			return nil, err
		}
		if err := add("no test information figure: it is drawn at rank 1 (at rank > 1 the information is a matrix)")(informationFigure(fit, src)); err != nil {
			return nil, err
		}
		rep.Tables = append(rep.Tables, abilityTable(fit), itemTable(fit))
	}

	if opt.Checkpoint != "" {
		ck, err := checkpoint.Open(opt.Checkpoint, "", opt.Log)
		if err != nil {
			return nil, err
		}
		met, err := readCheckpointMetrics(opt.Checkpoint, ck)
		if err != nil {
			return nil, err
		}
		m := ck.Model
		src := fmt.Sprintf("jeirt train → checkpoint %s (encoder %s, d = %d); config in its manifest.json", opt.Checkpoint, ck.Manifest.Encoder.Spec, m.Dim)
		rep.Inputs = append(rep.Inputs, [2]string{"JE-IRT checkpoint", fmt.Sprintf("%s — %d models × %d items, d = %d, adapter %d→%d→%d, encoder %s",
			opt.Checkpoint, m.NumModels(), m.NumItems(), m.Dim, m.InputDim, m.Hidden, m.Dim, ck.Manifest.Encoder.Fingerprint)})
		data, dataSrc, why := loadCheckpointData(ck, opt.Data, opt.Items, opt.DataRead)
		if data != nil {
			titles = append(titles, fmt.Sprintf("JE-IRT on %s", dataName(strings.Split(dataSrc, ", ")[0])))
		} else {
			titles = append(titles, fmt.Sprintf("JE-IRT checkpoint %s", opt.Checkpoint))
		}
		errRate, rateSrc := map[string]float64{}, ""
		switch {
		case data != nil:
			acc := data.ItemAccuracy()
			for j, id := range data.Items {
				errRate[id] = 1 - acc[j]
			}
			rateSrc = "over all observed cells of " + dataSrc
			rep.Inputs = append(rep.Inputs, [2]string{"responses", fmt.Sprintf("%s — %d models × %d items, %d cells", dataSrc, data.NumModels(), data.NumItems(), data.Len())})
		case fit != nil:
			for _, it := range fit.Items {
				errRate[it.ID] = 1 - it.PCorrect
			}
			rateSrc = "p_correct of the IRT fit's items.csv"
			rep.Notes = append(rep.Notes, "training data: "+why+"; item error rates come from the IRT fit instead")
		default:
			rep.Notes = append(rep.Notes, "training data: "+why)
		}
		if len(errRate) > 0 {
			if err := add("no question-norm figure: fewer than three items have an error rate")(normErrorFigure(m, errRate, rateSrc, src)); err != nil {
				return nil, err
			}
		} else {
			rep.Notes = append(rep.Notes, "no question-norm figure: item error rates need the responses (--data) or an IRT fit (--fit) of the same items")
		}
		if err := add("no PCA figure: it needs at least 3 items and embedding dimension 2")(pcaFigure(m, itemGroups(m.Items, data), src)); err != nil {
			return nil, err
		}
		if met != nil {
			if err := add("no training curve: the checkpoint records fewer than two epochs")(trainingFigure(met, src)); err != nil {
				return nil, err
			}
			rep.Tables = append(rep.Tables, metricsTable(met))
		}
	}

	if opt.RouteCSV != "" {
		pts, err := ReadRouteCSV(opt.RouteCSV)
		if err != nil {
			return nil, err
		}
		rep.Inputs = append(rep.Inputs, [2]string{"routing curve", fmt.Sprintf("%s — %d points", opt.RouteCSV, len(pts))})
		if err := add("no cost-quality curve: the routing CSV has no costs (jeirt route eval --costs FILE writes them) or no finite points")(costQualityFigure(pts, fmt.Sprintf("jeirt route eval --out %s", opt.RouteCSV))); err != nil {
			return nil, err
		}
		rep.Tables = append(rep.Tables, routeTable(pts))
	} else if opt.Checkpoint != "" {
		rep.Notes = append(rep.Notes, "no cost-quality curve: pass --route-csv with the CSV of jeirt route eval")
	}
	rep.Title = "jeirt report: " + strings.Join(titles, "; ")
	if len(titles) == 0 {
		rep.Title = "jeirt report: routing"
	}
	return rep, nil
}

func dataName(p string) string {
	if p == "" {
		return "responses"
	}
	base := filepath.Base(p)
	if strings.HasPrefix(base, "response_matrix") {
		return filepath.Base(filepath.Dir(p))
	}
	return base
}

// fitCommand reconstructs the irt fit command line from fit.json.
func fitCommand(f *Fit) string {
	var b strings.Builder
	fmt.Fprintf(&b, "jeirt irt fit --data %s", f.Data)
	if f.Rank != 1 {
		fmt.Fprintf(&b, " --rank %d", f.Rank)
	}
	if f.Sigma != 1 {
		fmt.Fprintf(&b, " --sigma %g", f.Sigma)
	}
	if f.Boot > 0 {
		fmt.Fprintf(&b, " --bootstrap %d", f.Boot)
	}
	fmt.Fprintf(&b, " --out %s", f.Dir)
	return b.String()
}

func abilityTable(f *Fit) *Table {
	t := &Table{ID: "abilities", Title: "Models", Caption: "abilities.csv of the IRT fit. Click a column to sort. A model with too few answers (flag few_answers) is not ranked. lz*, infit and outfit are its person fit: lz* about N(0, 1) for answers that follow the model, strongly negative (flag person_misfit below −2.326) for answers against its ability.",
		Head: []string{"model", "ability", "SE", "rank", "rank interval", "accuracy", "accuracy rank", "rank move", "answers", "flag", "lz*", "infit", "outfit"}}
	for _, m := range f.Models {
		ci := Cell{Text: "–", Sort: "0"}
		if m.RankLo > 0 {
			ci = Cell{Text: fmt.Sprintf("%d–%d", m.RankLo, m.RankHi), Sort: strconv.Itoa(m.RankLo)}
		}
		rank, accRank, mv := Cell{Text: "–", Sort: "1e308"}, Cell{Text: "–", Sort: "1e308"}, Cell{Text: "–", Sort: "0"}
		if m.Rank > 0 {
			rank, accRank, mv = integer(m.Rank), integer(m.AccuracyRank), integer(m.Move())
			if m.Move() > 0 {
				mv.Text = "+" + mv.Text
			}
		}
		t.Rows = append(t.Rows, []Cell{{Text: m.Name}, num(m.Score, 3), num(m.SE, 3), rank, ci,
			num(m.Accuracy, 3), accRank, mv, integer(m.NObs), {Text: m.Flag}, num(m.LZStar, 2), num(m.Infit, 2), num(m.Outfit, 2)})
	}
	rows := make([][]Cell, len(f.Models))
	idx := make([]int, len(f.Models))
	for i := range idx {
		idx[i] = i
	}
	unranked := func(r int) int { // unranked models (rank 0) last
		if r == 0 {
			return math.MaxInt
		}
		return r
	}
	sort.SliceStable(idx, func(a, b int) bool { return unranked(f.Models[idx[a]].Rank) < unranked(f.Models[idx[b]].Rank) })
	for k, i := range idx {
		rows[k] = t.Rows[i]
	}
	t.Rows = rows
	return t
}

// attachText fills the items' text and group from the item-text CSV the fit
// was given (settings.items), when it can still be read.
func (f *Fit) attachText(log progress.Logf) {
	r := &model.Responses{}
	for _, it := range f.Items {
		r.Items = append(r.Items, it.ID)
	}
	if f.ItemFile != "" {
		t, err := read.Items(f.ItemFile)
		if err != nil {
			log.Printf("report: item texts of the fit: %v", err)
		} else {
			at := make(map[string]int, len(t.IDs))
			for k, id := range t.IDs {
				at[id] = k
			}
			r.ItemText = make([]string, len(r.Items))
			if t.Group != nil {
				r.ItemGroup = make([]string, len(r.Items))
			}
			for j, id := range r.Items {
				if k, ok := at[id]; ok {
					r.ItemText[j] = t.Text[k]
					if t.Group != nil {
						r.ItemGroup[j] = t.Group[k]
					}
				}
			}
		}
	}
	for j, g := range itemGroups(r.Items, r) {
		f.Items[j].Group = g
		if r.ItemText != nil {
			f.Items[j].Text = r.ItemText[j]
		}
	}
}

// snippet is the start of a question text on one line.
func snippet(s string, n int) string {
	return shorten(strings.Join(strings.Fields(s), " "), n)
}

// reliabilityLine is the fit's Cronbach's α and marginal reliability, or ""
// for a folder without them.
func (f *Fit) reliabilityLine() string {
	var parts []string
	if !math.IsNaN(f.Alpha) {
		parts = append(parts, fmt.Sprintf("Cronbach's α %.4f", f.Alpha))
	}
	if !math.IsNaN(f.MarginalRel) {
		parts = append(parts, fmt.Sprintf("marginal reliability %.4f", f.MarginalRel))
	}
	return strings.Join(parts, ", ")
}

func itemTable(f *Fit) *Table {
	t := &Table{ID: "items", Title: "Items", Caption: "items.csv of the IRT fit: discrimination a = ‖a‖/σ, intercept d/σ (the logit of an average model), difficulty b = −d/‖a‖ (higher is harder), share correct and flag.",
		Head: []string{"item", "a", "d", "b", "p correct", "observed", "flag"}}
	if f.HasDiagnostics {
		t.Caption = "items.csv of the IRT fit: discrimination a = ‖a‖/σ, intercept d/σ (the logit of an average model), difficulty b = −d/‖a‖ (higher is harder), share correct, the rest-score (corrected item-total) correlation, the infit and outfit mean squares (1 when the answers follow the model; 0.5–1.5 is the productive range) and the flags (fit.json states their rules)."
		t.Head = append(t.Head, "rest r", "infit", "outfit")
	}
	hasGroup, hasText := false, false
	for _, it := range f.Items {
		hasGroup = hasGroup || it.Group != ""
		hasText = hasText || it.Text != ""
	}
	if hasGroup {
		t.Head = append(t.Head, "group")
	}
	if hasText {
		t.Head = append(t.Head, "text")
	}
	idx := make([]int, len(f.Items))
	for j := range idx {
		idx[j] = j
	}
	sort.SliceStable(idx, func(a, b int) bool { return f.Discrimination(idx[a]) > f.Discrimination(idx[b]) })
	for _, j := range idx {
		it := f.Items[j]
		row := []Cell{{Text: it.ID}, num(f.Discrimination(j), 3), num(it.D/f.Sigma, 3), num(it.B, 3), num(it.PCorrect, 3),
			integer(it.NObs), {Text: strings.ReplaceAll(it.Flag, ";", ", "), Left: true}}
		if f.HasDiagnostics {
			row = append(row, num(it.ItemRest, 3), num(it.Infit, 3), num(it.Outfit, 3))
		}
		if hasGroup {
			row = append(row, Cell{Text: it.Group, Left: true})
		}
		if hasText {
			row = append(row, Cell{Text: snippet(it.Text, 90), Left: true})
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

func metricsTable(m *checkpoint.RunMetrics) *Table {
	t := &Table{ID: "metrics", Title: "Test cells: JE-IRT and baselines",
		Caption: fmt.Sprintf("metrics.json of the checkpoint: the held-out test cells (split by %s), scored by JE-IRT and by each baseline trained on the same training cells.", m.SplitBy),
		Head:    []string{"method", "n", "accuracy", "AUC", "log-loss", "Brier", "ECE"}}
	var notes []string
	row := func(name string, s model.Scores) []Cell {
		nc := Cell{Text: "–"}
		if s.N >= 0 {
			nc = integer(s.N)
		}
		why := s.Undefined()
		if why != "" && !slices.Contains(notes, why) {
			notes = append(notes, why)
			t.Caption += " n/a: " + why + "."
		}
		stat := func(v model.Float) Cell { // an undefined score reads n/a, a missing one –
			c := num(float64(v), 4)
			if math.IsNaN(float64(v)) && s.N >= 0 {
				c.Text = "n/a"
			}
			return c
		}
		return []Cell{{Text: name}, nc, stat(s.Accuracy), stat(s.AUC), stat(s.LogLoss), stat(s.Brier), stat(s.ECE)}
	}
	t.Rows = append(t.Rows, row("JE-IRT", m.Test), row("JE-IRT (validation)", m.Val))
	for _, name := range slices.Sorted(maps.Keys(m.Baselines)) {
		label := name
		if name == "knn" && m.KNNK > 0 {
			label = fmt.Sprintf("knn (k = %d)", m.KNNK)
		}
		t.Rows = append(t.Rows, row(label, m.Baselines[name]))
	}
	return t
}

func routeTable(pts []RoutePoint) *Table {
	t := &Table{ID: "route", Title: "Routing policies", Caption: "The CSV of jeirt route eval.",
		Head: []string{"policy", "rule", "param", "accuracy", "mean cost", "items"}}
	for _, p := range pts {
		t.Rows = append(t.Rows, []Cell{{Text: p.Policy}, {Text: p.Rule}, num(p.Param, 4), num(p.Accuracy, 4), num(p.MeanCost, 4), integer(p.Items)})
	}
	return t
}

// Write writes the report folder dir atomically: index.html and, for every
// figure, NAME.png and NAME.svg. An existing dir is replaced only when
// replace is true.
func (r *Report) Write(dir string, replace bool) error {
	return fileio.WriteDirAtomic(dir, replace, func(tmp string) error {
		for _, f := range r.Figures {
			if err := os.WriteFile(filepath.Join(tmp, f.Name+".png"), f.PNG, 0o644); err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(tmp, f.Name+".svg"), f.SVG, 0o644); err != nil {
				return err
			}
		}
		return fileio.WriteFileAtomic(filepath.Join(tmp, "index.html"), r.WriteHTML)
	})
}

// WriteHTML writes the page.
func (r *Report) WriteHTML(w io.Writer) error {
	return pageTemplate.Execute(w, r)
}

var pageTemplate = template.Must(template.New("page").Funcs(template.FuncMap{
	"datauri": func(b []byte) template.URL {
		return template.URL("data:image/png;base64," + base64.StdEncoding.EncodeToString(b))
	},
	"inc": func(i int) int { return i + 1 },
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
body { font: 15px/1.5 -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; color: #222; background: #fff; margin: 0; }
main { max-width: 1100px; margin: 0 auto; padding: 24px 32px 48px; }
h1 { font-size: 1.6em; margin: 0 0 0.4em; border-bottom: 3px solid #4e79a7; padding-bottom: 0.3em; }
h2 { font-size: 1.25em; margin: 1.8em 0 0.5em; color: #2c4f73; }
dl.inputs { display: grid; grid-template-columns: max-content 1fr; gap: 4px 16px; background: #f4f6f9; padding: 12px 16px; border-radius: 6px; }
dl.inputs dt { font-weight: 600; }
dl.inputs dd { margin: 0; font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 0.9em; word-break: break-all; }
ul.notes { color: #8a5a00; background: #fff8e6; padding: 8px 16px 8px 32px; border-radius: 6px; }
nav a { margin-right: 14px; }
figure { margin: 1.5em 0; padding: 12px; border: 1px solid #dde3ea; border-radius: 6px; }
figure img { width: 100%; height: auto; display: block; }
figcaption { margin-top: 8px; font-size: 0.92em; }
figcaption .src { display: block; margin-top: 4px; color: #555; }
figcaption code, .src code { background: #f1f3f5; padding: 1px 4px; border-radius: 3px; font-size: 0.92em; }
.scroll { max-height: 520px; overflow: auto; border: 1px solid #dde3ea; border-radius: 6px; }
table { border-collapse: collapse; width: 100%; font-size: 0.9em; }
th, td { padding: 4px 10px; border-bottom: 1px solid #eef0f3; text-align: right; white-space: nowrap; }
th:first-child, td:first-child { text-align: left; white-space: normal; word-break: break-all; }
td.t { text-align: left; white-space: normal; min-width: 6em; }
th { position: sticky; top: 0; background: #e9eef4; cursor: pointer; user-select: none; }
th[data-dir="asc"]::after { content: " ▲"; }
th[data-dir="desc"]::after { content: " ▼"; }
tbody tr:nth-child(even) { background: #fafbfc; }
p.tcap { font-size: 0.92em; color: #444; }
footer { margin-top: 3em; font-size: 0.85em; color: #777; }
</style>
</head>
<body>
<main>
<h1>{{.Title}}</h1>
<dl class="inputs">{{range .Inputs}}<dt>{{index . 0}}</dt><dd>{{index . 1}}</dd>{{end}}</dl>
{{if .Notes}}<ul class="notes">{{range .Notes}}<li>{{.}}</li>{{end}}</ul>{{end}}
<nav>{{range .Figures}}<a href="#{{.Name}}">{{.Title}}</a> {{end}}{{range .Tables}}<a href="#t-{{.ID}}">{{.Title}}</a> {{end}}</nav>
{{range $i, $f := .Figures}}
<h2 id="{{$f.Name}}">Figure {{inc $i}}. {{$f.Title}}</h2>
<figure>
<img src="{{datauri $f.PNG}}" alt="{{$f.Title}}">
<figcaption><b>Figure {{inc $i}}.</b> {{$f.Caption}}
<span class="src">Made from: <code>{{$f.Source}}</code> · files: <a href="{{$f.Name}}.png">{{$f.Name}}.png</a>, <a href="{{$f.Name}}.svg">{{$f.Name}}.svg</a></span></figcaption>
</figure>
{{end}}
{{range .Tables}}
<h2 id="t-{{.ID}}">{{.Title}}</h2>
<p class="tcap">{{.Caption}} ({{len .Rows}} rows; click a column heading to sort.)</p>
<div class="scroll"><table class="sortable" id="{{.ID}}">
<thead><tr>{{range .Head}}<th>{{.}}</th>{{end}}</tr></thead>
<tbody>
{{range .Rows}}<tr>{{range .}}<td{{if .Sort}} data-v="{{.Sort}}"{{end}}{{if .Left}} class="t"{{end}}>{{.Text}}</td>{{end}}</tr>
{{end}}</tbody>
</table></div>
{{end}}
<footer>Written by jeirt {{.Version}} (<code>jeirt report</code>) on {{.Created}}. This page is self-contained: it loads nothing from the network.</footer>
</main>
<script>
(function () {
  document.querySelectorAll("table.sortable th").forEach(function (th) {
    th.addEventListener("click", function () {
      var table = th.closest("table"), body = table.tBodies[0];
      var col = Array.prototype.indexOf.call(th.parentNode.children, th);
      var asc = th.getAttribute("data-dir") !== "asc";
      table.querySelectorAll("th").forEach(function (h) { h.removeAttribute("data-dir"); });
      th.setAttribute("data-dir", asc ? "asc" : "desc");
      var key = function (row) {
        var c = row.cells[col];
        return c.hasAttribute("data-v") ? c.getAttribute("data-v") : c.textContent;
      };
      var rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (a, b) {
        var x = key(a), y = key(b), nx = parseFloat(x), ny = parseFloat(y);
        var c = (!isNaN(nx) && !isNaN(ny)) ? nx - ny : x.localeCompare(y);
        return asc ? c : -c;
      });
      rows.forEach(function (r) { body.appendChild(r); });
    });
  });
})();
</script>
</body>
</html>
`))
