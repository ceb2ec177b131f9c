package analyze

import (
	"fmt"
	"image/color"
	"io"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

var palette = []color.Color{
	color.RGBA{0x4e, 0x79, 0xa7, 255}, color.RGBA{0xe1, 0x57, 0x59, 255}, color.RGBA{0x59, 0xa1, 0x4f, 255},
	color.RGBA{0xf2, 0x8e, 0x2b, 255}, color.RGBA{0xb0, 0x7a, 0xa1, 255}, color.RGBA{0x76, 0xb7, 0xb2, 255},
}

func writeSVG(w io.Writer, p *plot.Plot) error {
	c := vgsvg.New(7*vg.Inch, 4.5*vg.Inch)
	p.Draw(draw.New(c))
	_, err := c.WriteTo(w)
	return err
}

// WriteFigure draws the empirical curves (solid, with points) and fitted
// 2PL curves (dashed) of up to n flagged items, as SVG.
func (res *ICCResult) WriteFigure(w io.Writer, n int) error {
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
		c := palette[k%len(palette)]
		le, pts, err := plotter.NewLinePoints(emp)
		if err != nil {
			return err
		}
		le.Color, pts.Color = c, c
		lf, err := plotter.NewLine(fit)
		if err != nil {
			return err
		}
		lf.Color, lf.Dashes = c, []vg.Length{vg.Points(5), vg.Points(3)}
		p.Add(le, pts, lf)
		p.Legend.Add(fmt.Sprintf("%s (%s)", shortID(it.ID), it.Flags[0]), le)
		k++
	}
	p.Legend.Top = true
	return writeSVG(w, p)
}

// WriteDimsFigure draws test accuracy and log loss of the best run against
// the embedding dimension (log₂ axis), as SVG.
func WriteDimsFigure(w io.Writer, rows []DimRow) error {
	p := plot.New()
	p.Title.Text = "Test scores against the embedding dimension d"
	p.X.Label.Text = "log₂ d"
	p.Y.Label.Text = "test accuracy / log loss"
	p.Add(plotter.NewGrid())
	var acc, ll plotter.XYs
	for _, r := range rows {
		x := math.Log2(float64(r.Dim))
		acc = append(acc, plotter.XY{X: x, Y: r.BestAccuracy})
		ll = append(ll, plotter.XY{X: x, Y: r.BestLogLoss})
	}
	for k, s := range []struct {
		name string
		xy   plotter.XYs
	}{{"accuracy", acc}, {"log loss", ll}} {
		l, pts, err := plotter.NewLinePoints(s.xy)
		if err != nil {
			return err
		}
		l.Color, pts.Color = palette[k], palette[k]
		p.Add(l, pts)
		p.Legend.Add(s.name, l)
	}
	return writeSVG(w, p)
}

func shortID(s string) string {
	r := []rune(s)
	if len(r) <= 28 {
		return s
	}
	return string(r[:27]) + "…"
}
