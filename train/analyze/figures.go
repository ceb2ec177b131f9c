package analyze

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Palette is the colours of the analyses' figures, in order.
var Palette = []color.Color{
	color.RGBA{0x4e, 0x79, 0xa7, 255}, color.RGBA{0xe1, 0x57, 0x59, 255}, color.RGBA{0x59, 0xa1, 0x4f, 255},
	color.RGBA{0xf2, 0x8e, 0x2b, 255}, color.RGBA{0xb0, 0x7a, 0xa1, 255}, color.RGBA{0x76, 0xb7, 0xb2, 255},
}

// WriteFigure draws the empirical curves (solid, with points) and fitted
// 2PL curves (dashed) of up to n flagged items, as SVG (WriteSVG).
func (res *ICCResult) WriteFigure(w io.Writer, n int) error {
	p, err := res.Plot(n)
	if err != nil {
		return err
	}
	return WriteSVG(w, p)
}

// WriteFigurePNG draws WriteFigure's figure as PNG (WritePNG).
func (res *ICCResult) WriteFigurePNG(w io.Writer, n int) error {
	p, err := res.Plot(n)
	if err != nil {
		return err
	}
	return WritePNG(w, p)
}

// Plot is WriteFigure's figure, its legend an item's id and first flag per
// curve.
func (res *ICCResult) Plot(n int) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = "Flagged items: empirical (solid) vs fitted 2PL (dashed)"
	p.X.Label.Text = "ability θ (median of the bin)"
	p.Y.Label.Text = "proportion correct"
	p.Y.Min, p.Y.Max = 0, 1
	p.Add(plotter.NewGrid())
	k := 0
	for _, it := range res.Items {
		if len(it.Flags) == 0 || k >= n {
			continue
		}
		var emp, fit plotter.XYs
		for b := range it.N {
			if math.IsNaN(it.Empirical[b]) {
				continue
			}
			emp = append(emp, plotter.XY{X: res.Mid[b], Y: it.Empirical[b]})
			fit = append(fit, plotter.XY{X: res.Mid[b], Y: it.Fitted[b]})
		}
		if len(emp) < 2 {
			continue
		}
		c := Palette[k%len(Palette)]
		le, pts, err := plotter.NewLinePoints(emp)
		if err != nil {
			return nil, err
		}
		le.Color, pts.Color = c, c
		lf, err := plotter.NewLine(fit)
		if err != nil {
			return nil, err
		}
		lf.Color, lf.Dashes = c, []vg.Length{vg.Points(5), vg.Points(3)}
		p.Add(le, pts, lf)
		p.Legend.Add(fmt.Sprintf("%s (%s)", middleLabel(it.ID, 24), it.Flags[0]), le)
		k++
	}
	p.Legend.TextStyle.Font.Size = vg.Points(9)
	return p, nil
}

func shortID(s string) string { return shortLabel(s, 28) }

// middleLabel is s cut to n runes with an ellipsis in the middle, keeping
// its start and its end (where item ids differ: "mmlu/high_s…onomics/100").
func middleLabel(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	head := (n - 1) / 2
	return string(r[:head]) + "…" + string(r[len(r)-(n-1-head):])
}

// shortLabel is s cut to n runes, the last an ellipsis.
func shortLabel(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// WriteFigure draws each cluster of question directions as a bar of its
// size, split into its most frequent category (dark) and the rest (light),
// labelled with that category and its share, as SVG (WriteSVG): a taxonomy
// that follows the categories shows tall dark bars.
func (res *DirectionsResult) WriteFigure(w io.Writer) error {
	p, err := res.Plot()
	if err != nil {
		return err
	}
	return WriteSVG(w, p)
}

// WriteFigurePNG draws WriteFigure's figure as PNG (WritePNG).
func (res *DirectionsResult) WriteFigurePNG(w io.Writer) error {
	p, err := res.Plot()
	if err != nil {
		return err
	}
	return WritePNG(w, p)
}

// Plot is WriteFigure's figure; a cluster's label, under its bar, is read
// upwards.
func (res *DirectionsResult) Plot() (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Clusters of question directions (ARI %.3f, NMI %.3f)", res.ARI, res.NMI)
	p.X.Label.Text = "cluster (largest first)"
	p.Y.Label.Text = "questions"
	p.Add(plotter.NewGrid())
	order := make([]int, len(res.Clusters))
	for k := range order {
		order[k] = k
	}
	sort.SliceStable(order, func(a, b int) bool { return res.Clusters[order[a]].Size > res.Clusters[order[b]].Size })
	top, rest := make(plotter.Values, len(order)), make(plotter.Values, len(order))
	var names []string
	for n, k := range order {
		c := res.Clusters[k]
		share, label := 0.0, "—"
		if len(c.Top) > 0 {
			share, label = c.Top[0].Value, fmt.Sprintf("%s %.0f%%", shortID(c.Top[0].Category), 100*c.Top[0].Value)
		}
		top[n] = share * float64(c.Size)
		rest[n] = float64(c.Size) - top[n]
		names = append(names, label)
	}
	width := vg.Points(math.Max(4, 300/float64(max(len(order), 1))))
	bt, err := plotter.NewBarChart(top, width)
	if err != nil {
		return nil, err
	}
	br, err := plotter.NewBarChart(rest, width)
	if err != nil {
		return nil, err
	}
	bt.Color, br.Color = Palette[0], color.RGBA{0xb8, 0xc9, 0xdc, 255}
	bt.LineStyle.Width, br.LineStyle.Width = 0, 0
	br.StackOn(bt)
	p.Add(bt, br)
	p.Legend.Add("most frequent category", bt)
	p.Legend.Add("other categories", br)
	p.Legend.TextStyle.Font.Size = vg.Points(9)
	if len(names) <= 30 {
		p.NominalX(names...)
		p.X.Tick.Label.Rotation = math.Pi / 2
		p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = draw.XRight, draw.YCenter
		p.X.Tick.Label.Font.Size = vg.Points(8)
	}
	return p, nil
}

// WriteFigure draws each model's projection on the axis against its
// accuracy on A minus its accuracy on B (with responses), or the sorted
// projections (without), as SVG (WriteSVG).
func (res *ProbeResult) WriteFigure(w io.Writer) error {
	p, err := res.Plot()
	if err != nil {
		return err
	}
	return WriteSVG(w, p)
}

// WriteFigurePNG draws WriteFigure's figure as PNG (WritePNG).
func (res *ProbeResult) WriteFigurePNG(w io.Writer) error {
	p, err := res.Plot()
	if err != nil {
		return err
	}
	return WritePNG(w, p)
}

// Plot is WriteFigure's figure.
func (res *ProbeResult) Plot() (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Models on the %s − %s axis", shortID(res.A), shortID(res.B))
	p.Add(plotter.NewGrid())
	var xy plotter.XYs
	gap := !math.IsNaN(res.AccuracyGapSpearman)
	ms := append([]ProbeModel(nil), res.Models...)
	sort.Slice(ms, func(a, b int) bool { return ms[a].Projection < ms[b].Projection })
	for k, m := range ms {
		switch {
		case gap && !math.IsNaN(m.AccA) && !math.IsNaN(m.AccB):
			xy = append(xy, plotter.XY{X: m.Projection, Y: m.AccA - m.AccB})
		case !gap:
			xy = append(xy, plotter.XY{X: m.Projection, Y: float64(k + 1)})
		}
	}
	p.X.Label.Text = "projection m·axis"
	p.Y.Label.Text = "model (by projection)"
	if gap {
		p.Y.Label.Text = fmt.Sprintf("accuracy on %s − accuracy on %s (Spearman %.3f)", shortID(res.A), shortID(res.B), res.AccuracyGapSpearman)
	}
	if len(xy) > 0 {
		s, err := plotter.NewScatter(xy)
		if err != nil {
			return nil, err
		}
		s.GlyphStyle.Color, s.GlyphStyle.Radius, s.GlyphStyle.Shape = Palette[0], vg.Points(2.5), draw.CircleGlyph{}
		p.Add(s)
	}
	return p, nil
}
