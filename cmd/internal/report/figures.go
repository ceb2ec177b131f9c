package report

import (
	"bytes"
	"fmt"
	"image/color"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/checkpoint"
	"github.com/jeirt/jeirt/train/eval"
)

// Figure is one plot of the report, rendered as PNG and SVG.
type Figure struct {
	Name    string // file stem: NAME.png, NAME.svg
	Title   string
	Caption string // what the figure shows
	Source  string // the command that made its data
	W, H    vg.Length
	// LegendOutside draws the legend beside the plot, on its right, where
	// it covers no data (the figure is made wider for it).
	LegendOutside bool
	PNG           []byte
	SVG           []byte
}

// palette is Tableau 10, which stays distinguishable for colour-blind readers
// better than gonum's default.
var palette = []color.Color{
	rgb(0x4e79a7), rgb(0xf28e2b), rgb(0xe15759), rgb(0x76b7b2), rgb(0x59a14f),
	rgb(0xedc948), rgb(0xb07aa1), rgb(0xff9da7), rgb(0x9c755f), rgb(0xbab0ac),
}

func rgb(v uint32) color.Color {
	return color.RGBA{R: uint8(v >> 16), G: uint8(v >> 8), B: uint8(v), A: 255}
}

var (
	grey  = color.RGBA{R: 0x99, G: 0x99, B: 0x99, A: 255}
	black = color.RGBA{A: 255}
)

// render draws p into the figure's PNG (144 dpi) and SVG.
func render(f *Figure, p *plot.Plot) error {
	if f.W == 0 {
		f.W, f.H = 7*vg.Inch, 4.5*vg.Inch
	}
	legend := p.Legend
	if f.LegendOutside {
		// The plot is drawn without its legend, in the width the legend
		// leaves; the legend goes in the strip on the right, level with
		// the top of the data.
		p.Legend = plot.NewLegend()
		legend.Top, legend.Left, legend.XOffs, legend.YOffs = true, true, 0, 0
		width := legend.Rectangle(draw.Canvas{}).Size().X + 24
		f.W += width
		title := vg.Length(0)
		if p.Title.Text != "" {
			title = p.Title.TextStyle.Rectangle(p.Title.Text).Size().Y + p.Title.Padding
		}
		draws := func(c draw.Canvas) {
			p.Draw(draw.Crop(c, 0, -width, 0, 0))
			legend.Draw(draw.Crop(c, c.Max.X-c.Min.X-width+6, 0, 0, -title-6))
		}
		return renderWith(f, draws)
	}
	return renderWith(f, p.Draw)
}

// renderWith draws the figure with draws into its PNG (144 dpi) and SVG.
func renderWith(f *Figure, draws func(draw.Canvas)) error {
	c := vgimg.NewWith(vgimg.UseWH(f.W, f.H), vgimg.UseDPI(144), vgimg.UseBackgroundColor(color.White))
	draws(draw.New(c))
	var png bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(&png); err != nil {
		return fmt.Errorf("figure %s: %w", f.Name, err)
	}
	s := vgsvg.New(f.W, f.H)
	draws(draw.New(s))
	var svg bytes.Buffer
	if _, err := s.WriteTo(&svg); err != nil {
		return fmt.Errorf("figure %s: %w", f.Name, err)
	}
	f.PNG, f.SVG = png.Bytes(), svg.Bytes()
	return nil
}

func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Add(plotter.NewGrid())
	// One legend size for every figure, a little smaller than the axis labels.
	p.Legend.TextStyle.Font.Size = vg.Points(8)
	p.X.Tick.Marker, p.Y.Tick.Marker = readableTicks{}, readableTicks{}
	return p
}

// readableTicks labels an axis at 5 to 10 round values (1, 2 or 5
// times a power of ten apart), with unlabelled ticks between them: gonum's
// default labels as few as two or three.
type readableTicks struct{}

func (readableTicks) Ticks(lo, hi float64) []plot.Tick {
	span := hi - lo
	if !(span > 0) || math.IsInf(span, 0) {
		return plot.DefaultTicks{}.Ticks(lo, hi)
	}
	var step float64
	var minor int
	for e := math.Floor(math.Log10(span)) - 1; step == 0; e-- {
		for _, m := range []struct {
			f float64
			n int
		}{{5, 5}, {2, 4}, {1, 5}} {
			s := m.f * math.Pow(10, e+1)
			if n := math.Floor(hi/s) - math.Ceil(lo/s) + 1; n >= 5 {
				step, minor = s, m.n
				break
			}
		}
	}
	decimals := max(0, int(math.Ceil(-math.Log10(step)-1e-9)))
	var ticks []plot.Tick
	for k := math.Ceil(lo/step) * float64(minor); k*step/float64(minor) <= hi+1e-12*span; k++ {
		v := k * step / float64(minor)
		t := plot.Tick{Value: v}
		if int(math.Round(k))%minor == 0 {
			if math.Abs(v) < 1e-12*span {
				v = 0
			}
			t.Label = strconv.FormatFloat(v, 'f', decimals, 64)
		}
		ticks = append(ticks, t)
	}
	return ticks
}

func scatter(xy plotter.XYs, c color.Color, r vg.Length, shape draw.GlyphDrawer) (*plotter.Scatter, error) {
	s, err := plotter.NewScatter(xy)
	if err != nil {
		return nil, err
	}
	s.GlyphStyle.Color = c
	s.GlyphStyle.Radius = r
	if shape != nil {
		s.GlyphStyle.Shape = shape
	}
	return s, nil
}

// shortenHead keeps the end of s, where model names differ most
// (org/family-size-variant).
func shortenHead(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return "…" + string(r[len(r)-n+1:])
}

func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// abilityFigure plots θ (the score at rank > 1) against mean accuracy and
// labels the models whose IRT rank differs most from their accuracy rank.
func abilityFigure(f *Fit, label int, source string) (*Figure, error) {
	ylab := "ability θ"
	if f.Rank > 1 {
		ylab = "ability score (rank-1 summary of θ)"
	}
	order := make([]int, len(f.Models))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		ma, mb := f.Models[order[a]].Move(), f.Models[order[b]].Move()
		return abs(ma) > abs(mb)
	})
	labelled := map[int]bool{}
	for _, i := range order {
		if len(labelled) == label || f.Models[i].Move() == 0 {
			break
		}
		labelled[i] = true
	}
	var rest, moved plotter.XYs
	var names []string
	xmin, xmax, ymin, ymax := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	lo, hi := robustRange(f)
	clipped := 0
	for i, m := range f.Models {
		if math.IsNaN(m.Accuracy) || math.IsNaN(m.Score) {
			continue
		}
		pt := plotter.XY{X: m.Accuracy, Y: m.Score}
		// A model far outside the others (a perfect or empty score) would
		// flatten everyone else into a line: it is drawn at the edge.
		if pt.Y < lo || pt.Y > hi {
			pt.Y = math.Max(lo, math.Min(hi, pt.Y))
			clipped++
		}
		xmin, xmax = math.Min(xmin, pt.X), math.Max(xmax, pt.X)
		ymin, ymax = math.Min(ymin, pt.Y), math.Max(ymax, pt.Y)
		if labelled[i] {
			moved = append(moved, pt)
			names = append(names, fmt.Sprintf("%s (%+d)", shortenHead(m.Name, 32), m.Move()))
		} else {
			rest = append(rest, pt)
		}
	}
	title := "Ability vs mean accuracy"
	title += fmt.Sprintf(" (Kendall τ = %.3f)", model.Float(f.Tau))
	p := newPlot(title, "mean accuracy over the model's observed items", ylab)
	s, err := scatter(rest, palette[0], 2.5, draw.CircleGlyph{})
	if err != nil {
		return nil, err
	}
	p.Add(s)
	p.Legend.Add("model", s)
	if len(moved) > 0 {
		// Moved models often sit close together: stack their labels downwards,
		// at least 5% of the y range apart, each joined to its point by a line.
		order := make([]int, len(moved))
		for k := range order {
			order[k] = k
		}
		sort.Slice(order, func(a, b int) bool { return moved[order[a]].Y > moved[order[b]].Y })
		gap, dx := 0.05*(ymax-ymin), 0.03*(xmax-xmin)
		lab := plotter.XYLabels{XYs: make(plotter.XYs, len(moved)), Labels: make([]string, len(moved))}
		prev := moved[order[0]].Y
		for n, k := range order {
			y := math.Min(moved[k].Y, prev-gap)
			prev = y
			lab.XYs[n] = plotter.XY{X: moved[k].X + dx, Y: y}
			lab.Labels[n] = names[k]
			lead, err := plotter.NewLine(plotter.XYs{moved[k], lab.XYs[n]})
			if err != nil {
				return nil, err
			}
			lead.Color = palette[2]
			lead.Width = vg.Points(0.5)
			p.Add(lead)
		}
		s2, err := scatter(moved, palette[2], 3.5, draw.CircleGlyph{})
		if err != nil {
			return nil, err
		}
		l, err := plotter.NewLabels(lab)
		if err != nil {
			return nil, err
		}
		for k := range l.TextStyle {
			l.TextStyle[k].Font.Size = vg.Points(7)
			l.TextStyle[k].Color = color.RGBA{R: 0xa0, G: 0x20, B: 0x20, A: 255}
			l.TextStyle[k].YAlign = text.YCenter
		}
		l.Offset = vg.Point{X: 2}
		p.Add(s2, l)
		p.Legend.Add(fmt.Sprintf("%d largest rank moves", len(moved)), s2)
	}
	p.Legend.Top, p.Legend.Left = true, true
	note := ""
	if clipped > 0 {
		p.Y.Min, p.Y.Max = lo, hi
		note = fmt.Sprintf(" %d model(s) with an ability far outside the rest are drawn at the top or bottom edge (the tables give their values).", clipped)
	}
	fig := &Figure{Name: "abilities", Title: "Abilities against mean accuracy",
		Caption: fmt.Sprintf("Each point is a model (%d): its fitted ability against its raw mean accuracy. Accuracy ignores which items a model was scored on and how hard they are; θ does not. Labelled in red: the %d models whose ability rank differs most from their accuracy rank (the number is accuracy rank − ability rank: positive means IRT ranks the model higher).%s",
			len(f.Models), len(moved), note),
		Source: source}
	return fig, render(fig, p)
}

// robustRange is the y range of the abilities figure: the scores' 5th to
// 95th percentile widened by its span on each side (a long natural tail
// stays inside; a score tens of units off does not).
func robustRange(f *Fit) (lo, hi float64) {
	var ys []float64
	for _, m := range f.Models {
		if !math.IsNaN(m.Accuracy) && !math.IsNaN(m.Score) {
			ys = append(ys, m.Score)
		}
	}
	if len(ys) < 10 {
		return math.Inf(-1), math.Inf(1)
	}
	sort.Float64s(ys)
	q := func(p float64) float64 { return ys[int(p*float64(len(ys)-1))] }
	span := q(0.95) - q(0.05)
	if span <= 0 {
		return math.Inf(-1), math.Inf(1)
	}
	return q(0.05) - span, q(0.95) + span
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// iccFigure draws the item characteristic curves P(θ) = σ((a·θ + b)/σ) of the
// k most and k least discriminating items that some but not all models
// solved.
func iccFigure(f *Fit, k int, source string) (*Figure, error) {
	var cand []int
	for j, it := range f.Items {
		if strings.Contains(it.Flag, "never_solved") || strings.Contains(it.Flag, "always_solved") || it.NObs == 0 && !math.IsNaN(it.PCorrect) {
			continue
		}
		if math.IsNaN(f.Discrimination(j)) || math.IsNaN(it.D) {
			continue
		}
		cand = append(cand, j)
	}
	if len(cand) == 0 {
		return nil, nil
	}
	sort.SliceStable(cand, func(a, b int) bool { return f.Discrimination(cand[a]) > f.Discrimination(cand[b]) })
	k = min(k, len(cand)/2)
	if k == 0 {
		k = 1
	}
	most, least := cand[:k], cand[len(cand)-k:]
	xlab := "ability θ"
	if f.Rank > 1 {
		xlab = "ability along the item's direction, θ·a/‖a‖"
	}
	p := newPlot("Item characteristic curves", xlab, "P(correct)")
	p.X.Min, p.X.Max = -3, 3
	p.Y.Min, p.Y.Max = 0, 1
	// Items with the same curve (to the legend's precision) share one curve
	// and one legend entry naming them all: drawn apart, one would hide the
	// other.
	type curve struct {
		items  []int
		color  color.Color
		dashed bool
	}
	var curves []*curve
	byShape := map[string]*curve{}
	add := func(j int, c color.Color, dashed bool) {
		it := f.Items[j]
		shape := fmt.Sprintf("%.2f %.2f %.2f", f.Discrimination(j), it.D, it.C)
		if cv := byShape[shape]; cv != nil {
			cv.items = append(cv.items, j)
			return
		}
		cv := &curve{items: []int{j}, color: c, dashed: dashed}
		byShape[shape] = cv
		curves = append(curves, cv)
	}
	for n, j := range most {
		add(j, palette[[]int{2, 1, 5, 6}[n%4]], false)
	}
	for n, j := range least {
		add(j, palette[[]int{0, 3, 4, 9}[n%4]], true)
	}
	for _, cv := range curves {
		j := cv.items[0]
		it := f.Items[j]
		a := f.Discrimination(j) * f.Sigma
		b, sigma := it.D, f.Sigma
		c3 := it.C // the 3PL's floor (0 for the 1PL and 2PL)
		fn := plotter.NewFunction(func(t float64) float64 { return c3 + (1-c3)*model.Sigmoid((a*t+b)/sigma) })
		fn.Samples = 200
		fn.Color = cv.color
		fn.Width = vg.Points(1.6)
		if cv.dashed {
			fn.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		}
		p.Add(fn)
		p.Legend.Add(iccLabel(f, j), fn)
		for _, other := range cv.items[1:] {
			// The same curve: its own line in the legend, no second thumb.
			p.Legend.Add(fmt.Sprintf("%s  (the same curve)", shorten(f.Items[other].ID, iccIDWidth)))
		}
	}
	fig := &Figure{Name: "icc", Title: "Item characteristic curves", LegendOutside: true, W: 5.5 * vg.Inch, H: 4.5 * vg.Inch,
		Caption: fmt.Sprintf("Probability of a correct answer against ability for the %d most discriminating items (solid) and the %d least discriminating (dashed), among the %d items some but not all models solved. Legend: item id, discrimination a = ‖a‖/σ and difficulty b = −d/‖a‖ (items.csv's b: the ability at which P = 0.5). An item with a below the fit's min-a (%.2g) is flat: its P hardly changes with ability, so it has no meaningful difficulty, and the legend gives its P instead. A steep curve separates models around where it crosses 0.5; a flat one tells them apart hardly at all.",
			len(most), len(least), len(cand), f.MinA),
		Source: source}
	return fig, render(fig, p)
}

// iccLabel is an item's legend entry: its id, discrimination and
// difficulty, or for a flat item (discrimination below the fit's min-a, where
// −d/a runs off to wherever a small a sends it) its nearly constant P.
func iccLabel(f *Fit, j int) string {
	it := f.Items[j]
	a := f.Discrimination(j)
	if a < f.MinA || math.IsNaN(it.B) || math.IsInf(it.B, 0) {
		return fmt.Sprintf("%s  a=%.2f flat, P≈%.2f", shorten(it.ID, iccIDWidth), a, model.Sigmoid(it.D/f.Sigma))
	}
	return fmt.Sprintf("%s  a=%.2f b=%.2f", shorten(it.ID, iccIDWidth), a, it.B)
}

// iccIDWidth is the longest item id the ICC legend shows whole (the
// legend strip widens to fit; benchmark ids such as
// "scikit-learn__scikit-learn-25747" fit).
const iccIDWidth = 60

// discriminationFigure is the histogram of ‖a_j‖/σ with the near-zero items
// (below the fit's min-a) counted.
func discriminationFigure(f *Fit, source string) (*Figure, error) {
	var vals plotter.Values
	near := 0
	flags := map[string]int{}
	for j, it := range f.Items {
		d := f.Discrimination(j)
		if math.IsNaN(d) {
			continue
		}
		vals = append(vals, d)
		if d < f.MinA {
			near++
			for _, fl := range strings.Split(it.Flag, ";") {
				if fl != "" {
					flags[fl]++
				}
			}
		}
	}
	if len(vals) < 2 {
		return nil, nil
	}
	h, err := plotter.NewHist(vals, 40)
	if err != nil {
		return nil, err
	}
	h.FillColor = palette[0]
	h.LineStyle.Color = color.White
	p := newPlot(fmt.Sprintf("Discrimination: %d of %d items below %.2g", near, len(vals), f.MinA), "discrimination a = ‖a‖/σ", "items")
	p.Add(h)
	top := 0.0
	for _, b := range h.Bins {
		top = math.Max(top, b.Weight)
	}
	// Room above the tallest bar (often the first: the near-zero items), so
	// it is not cut by the frame nor hidden under the legend.
	p.Y.Min, p.Y.Max = 0, top*1.15
	cut, err := plotter.NewLine(plotter.XYs{{X: f.MinA, Y: 0}, {X: f.MinA, Y: top}})
	if err != nil {
		return nil, err
	}
	cut.Color = palette[2]
	cut.Width = vg.Points(1.5)
	cut.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	p.Add(cut)
	p.Legend.Add(fmt.Sprintf("min-a = %.2g", f.MinA), cut)
	p.Legend.Top = true
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(flags)) {
		parts = append(parts, fmt.Sprintf("%d %s", flags[k], strings.ReplaceAll(k, "_", " ")))
	}
	why := ""
	if len(parts) > 0 {
		why = " Of these, " + strings.Join(parts, ", ") + " (items.csv flag column)."
	}
	fig := &Figure{Name: "discrimination", Title: "Discrimination histogram",
		Caption: fmt.Sprintf("Distribution of item discrimination over %d items. %d items (%.1f%%) lie below %.2g (dashed line): they barely separate strong from weak models and can be dropped with little loss (jeirt irt select).%s",
			len(vals), near, 100*float64(near)/float64(len(vals)), f.MinA, why),
		Source: source}
	return fig, render(fig, p)
}

// normErrorFigure plots ‖q_j‖ against item j's error rate.
func normErrorFigure(m *model.JEIRT, errRate map[string]float64, rateSource, source string) (*Figure, error) {
	var xy plotter.XYs
	var xs, ys []float64
	for j, id := range m.Items {
		e, ok := errRate[id]
		if !ok || math.IsNaN(e) {
			continue
		}
		n := model.Norm(m.ItemEmbedding(j))
		xy = append(xy, plotter.XY{X: e, Y: n})
		xs, ys = append(xs, e), append(ys, n)
	}
	if len(xy) < 3 {
		return nil, nil
	}
	rho := model.Float(eval.Spearman(xs, ys))
	rhoText := fmt.Sprintf("ρ = %.3f", rho)
	if why := eval.CorrelationNote("the error rate", xs, "|q|", ys); why != "" {
		rhoText = "ρ n/a: " + why
	}
	p := newPlot(fmt.Sprintf("Question-embedding norm vs error rate (Spearman %s)", rhoText), "item error rate (1 − mean correct)", "‖q_j‖")
	s, err := scatter(xy, color.NRGBA{R: 0x4e, G: 0x79, B: 0xa7, A: 160}, 2, draw.CircleGlyph{})
	if err != nil {
		return nil, err
	}
	p.Add(s)
	fig := &Figure{Name: "norm-error", Title: "Question-embedding norm against item error rate",
		Caption: fmt.Sprintf("Each point is one of %d items: the norm of its JE-IRT question embedding q_j against the fraction of models that got it wrong (%s). In JE-IRT P(correct) = σ(q·m/‖q‖ − ‖q‖), so the norm acts as difficulty: harder items should have larger norms (%s).",
			len(xy), rateSource, rhoText),
		Source: source}
	return fig, render(fig, p)
}

// pcaFigure projects the directions of the question and model embeddings
// (each scaled to unit length) on the first two principal components of the
// question directions. Directions, not raw vectors: a question's norm is its
// difficulty and a model's norm its overall strength, and the raw model
// vectors lie so far from the questions that the questions collapse into a
// strip; the direction is what P(correct) compares (q·m/‖q‖ = ‖m‖ cos).
func pcaFigure(m *model.JEIRT, groups []string, source string) (*Figure, error) {
	J, d := m.NumItems(), m.Dim
	if J < 3 || d < 2 {
		return nil, nil
	}
	unit := func(v []float32) []float64 {
		var n float64
		for _, x := range v {
			n += float64(x) * float64(x)
		}
		u := make([]float64, len(v))
		if n = math.Sqrt(n); n > 0 {
			for k, x := range v {
				u[k] = float64(x) / n
			}
		}
		return u
	}
	mean := make([]float64, d)
	for j := 0; j < J; j++ {
		for k, v := range unit(m.ItemEmbedding(j)) {
			mean[k] += v / float64(J)
		}
	}
	X := mat.NewDense(J, d, nil)
	for j := 0; j < J; j++ {
		for k, v := range unit(m.ItemEmbedding(j)) {
			X.Set(j, k, v-mean[k])
		}
	}
	var svd mat.SVD
	if !svd.Factorize(X, mat.SVDThinV) {
		return nil, fmt.Errorf("figure pca: SVD of the question embeddings did not converge")
	}
	var V mat.Dense
	svd.VTo(&V)
	sv := svd.Values(nil)
	var total float64
	for _, s := range sv {
		total += s * s
	}
	explained := func(c int) float64 {
		if total == 0 || c >= len(sv) {
			return 0
		}
		return 100 * sv[c] * sv[c] / total
	}
	project := func(v []float32) plotter.XY {
		u := unit(v)
		var x, y float64
		for k := 0; k < d; k++ {
			c := u[k] - mean[k]
			x += c * V.At(k, 0)
			y += c * V.At(k, 1)
		}
		return plotter.XY{X: x, Y: y}
	}
	p := newPlot("Question and model directions, PCA of the question directions",
		fmt.Sprintf("PC1 (%.1f%% of question variance)", explained(0)), fmt.Sprintf("PC2 (%.1f%%)", explained(1)))
	names, of := topGroups(groups, 9)
	if names == nil {
		names, of = []string{"question"}, make([]int, J)
	}
	pts := make([]plotter.XYs, len(names))
	for j := 0; j < J; j++ {
		if of[j] >= 0 {
			pts[of[j]] = append(pts[of[j]], project(m.ItemEmbedding(j)))
		}
	}
	// "other" is drawn first, under the named groups; the legend keeps size order.
	drawn := make([]plot.Plotter, 0, len(names))
	for g, name := range names {
		if len(pts[g]) == 0 {
			continue
		}
		c := palette[g%len(palette)]
		if name == "other" {
			c = grey
		}
		s, err := scatter(pts[g], c, 2, draw.CircleGlyph{})
		if err != nil {
			return nil, err
		}
		if name == "other" {
			drawn = append([]plot.Plotter{s}, drawn...)
		} else {
			drawn = append(drawn, s)
		}
		p.Legend.Add(fmt.Sprintf("%s (%d)", shorten(name, 24), len(pts[g])), s)
	}
	p.Add(drawn...)
	var mp plotter.XYs
	for i := 0; i < m.NumModels(); i++ {
		mp = append(mp, project(m.ModelEmbedding(i)))
	}
	s, err := scatter(mp, black, 3, draw.TriangleGlyph{})
	if err != nil {
		return nil, err
	}
	p.Add(s)
	p.Legend.Add(fmt.Sprintf("model (%d)", len(mp)), s)
	p.Legend.Top = true
	colouring := "item group"
	if len(names) == 1 {
		colouring = "one colour (the data has no item groups)"
	}
	fig := &Figure{Name: "pca", Title: "2-D PCA of the embedding space", W: 7 * vg.Inch, H: 5.5 * vg.Inch,
		Caption: fmt.Sprintf("The directions of the %d question embeddings q_j/‖q_j‖ (dots, coloured by %s) and of the %d model embeddings m_i/‖m_i‖ (black triangles), projected on the first two principal components of the question directions (centred on their mean; together %.1f%% of their variance). Directions only: a question's norm is its difficulty and a model's norm its overall strength. Questions on similar topics sit together; a model points towards the questions it solves.",
			J, colouring, m.NumModels(), explained(0)+explained(1)),
		Source: source}
	return fig, render(fig, p)
}

// costQualityFigure draws accuracy against mean cost per question for every
// policy of `jeirt route eval`.
func costQualityFigure(pts []RoutePoint, source string) (*Figure, error) {
	type series struct {
		name string
		xy   plotter.XYs
	}
	var order []string
	by := map[string]*series{}
	for _, pt := range pts {
		if math.IsNaN(pt.MeanCost) || math.IsNaN(pt.Accuracy) {
			continue
		}
		name := pt.Policy
		if pt.Rule != "" && pt.Rule != pt.Policy {
			name += " " + pt.Rule
		}
		s, ok := by[name]
		if !ok {
			s = &series{name: name}
			by[name] = s
			order = append(order, name)
		}
		s.xy = append(s.xy, plotter.XY{X: pt.MeanCost, Y: pt.Accuracy})
	}
	if len(order) == 0 {
		return nil, nil
	}
	p := newPlot("Cost-quality curve of the router", "mean cost per question", "accuracy")
	p.Y.Min, p.Y.Max = 0, 1.02
	for k, name := range order {
		s := by[name]
		sort.Slice(s.xy, func(a, b int) bool { return s.xy[a].X < s.xy[b].X })
		c := palette[k%len(palette)]
		sc, err := scatter(s.xy, c, 3, []draw.GlyphDrawer{draw.CircleGlyph{}, draw.TriangleGlyph{}, draw.SquareGlyph{}, draw.PyramidGlyph{}, draw.RingGlyph{}}[k%5])
		if err != nil {
			return nil, err
		}
		if len(s.xy) > 1 {
			ln, err := plotter.NewLine(s.xy)
			if err != nil {
				return nil, err
			}
			ln.Color = c
			p.Add(ln)
			p.Legend.Add(name, ln, sc)
		} else {
			p.Legend.Add(name, sc)
		}
		p.Add(sc)
	}
	p.Legend.Top, p.Legend.Left = false, false
	fig := &Figure{Name: "cost-quality", Title: "Cost-quality curve",
		Caption: fmt.Sprintf("Accuracy on held-out questions against the mean cost per question for each routing policy (%d points). Lines join the router's settings of one rule (min-p or λ); single points are the reference policies (best single model, random, oracle, cheapest). Up and to the left is better.", len(pts)),
		Source:  source}
	return fig, render(fig, p)
}

// trainingFigure plots the training and validation loss per epoch.
func trainingFigure(met *checkpoint.RunMetrics, source string) (*Figure, error) {
	if met == nil || len(met.History) < 2 {
		return nil, nil
	}
	var tr, va plotter.XYs
	for _, e := range met.History {
		if !math.IsNaN(e.TrainLoss) {
			tr = append(tr, plotter.XY{X: float64(e.Epoch), Y: e.TrainLoss})
		}
		if !math.IsNaN(e.ValLoss) {
			va = append(va, plotter.XY{X: float64(e.Epoch), Y: e.ValLoss})
		}
	}
	p := newPlot("Training curve", "epoch", "log-loss")
	for k, s := range []struct {
		name string
		xy   plotter.XYs
	}{{"train (with dropout)", tr}, {"validation", va}} {
		if len(s.xy) == 0 {
			continue
		}
		ln, err := plotter.NewLine(s.xy)
		if err != nil {
			return nil, err
		}
		ln.Color = palette[k]
		ln.Width = vg.Points(1.5)
		p.Add(ln)
		p.Legend.Add(s.name, ln)
	}
	if met.BestEpoch > 0 {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, xy := range append(append(plotter.XYs{}, tr...), va...) {
			lo, hi = math.Min(lo, xy.Y), math.Max(hi, xy.Y)
		}
		best, err := plotter.NewLine(plotter.XYs{{X: float64(met.BestEpoch), Y: lo}, {X: float64(met.BestEpoch), Y: hi}})
		if err != nil {
			return nil, err
		}
		best.Color = grey
		best.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(best)
		p.Legend.Add(fmt.Sprintf("kept: epoch %d", met.BestEpoch), best)
	}
	p.Legend.Top = true
	fig := &Figure{Name: "training", Title: "Training curve", W: 6 * vg.Inch, H: 3.5 * vg.Inch,
		Caption: fmt.Sprintf("Mean log-loss per epoch on the training cells (with dropout) and on the validation cells. The checkpoint keeps epoch %d of %d, the lowest validation loss.", met.BestEpoch, met.EpochsRun),
		Source:  source}
	return fig, render(fig, p)
}
