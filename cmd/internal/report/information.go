package report

import (
	"fmt"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/jeirt/jeirt/model/irtfit"
	"github.com/jeirt/jeirt/train/irtstat/fitstat"
)

// fitInformation is the test information of the fit folder src: its
// information.csv, or (folders written before it) the same computed from
// its items (fitstat.TestInformation); nil at rank > 1.
func fitInformation(src *irtfit.Folder) []irtfit.InformationPoint {
	if src.Information != nil || src.Rank() != 1 {
		return src.Information
	}
	pts, err := fitstat.TestInformation(src.IRT(), src.TrialsPerAnswer())
	if err != nil {
		return nil
	}
	out := make([]irtfit.InformationPoint, len(pts))
	for g, p := range pts {
		out[g] = irtfit.InformationPoint{Theta: p.Theta, Information: p.Information, SE: p.SE}
	}
	return out
}

// informationFigure draws the test information I(θ) (top) and the standard
// error of θ, 1/√I(θ) (bottom), over the models' range of θ (a unit beyond
// it each side), with the models' θ as ticks under the information curve;
// nil at rank > 1 or without information.
func informationFigure(f *Fit, source string) (*Figure, error) {
	if f.Rank != 1 || len(f.Information) < 2 {
		return nil, nil
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, m := range f.Models {
		if !math.IsNaN(m.Score) && !math.IsInf(m.Score, 0) {
			lo, hi = math.Min(lo, m.Score), math.Max(hi, m.Score)
		}
	}
	first, last := f.Information[0].Theta, f.Information[len(f.Information)-1].Theta
	if lo > hi { // no model with a θ: the whole grid
		lo, hi = first, last
	}
	lo, hi = math.Max(first, lo-1), math.Min(last, hi+1)
	var info, se plotter.XYs
	peak, peakAt, seTop := 0.0, 0.0, 0.0
	for _, p := range f.Information {
		if p.Theta < lo || p.Theta > hi {
			continue
		}
		info = append(info, plotter.XY{X: p.Theta, Y: p.Information})
		if p.Information > peak {
			peak, peakAt = p.Information, p.Theta
		}
		if !math.IsNaN(p.SE) {
			se = append(se, plotter.XY{X: p.Theta, Y: p.SE})
			seTop = math.Max(seTop, p.SE)
		}
	}
	if len(info) < 2 || len(se) < 2 {
		return nil, nil
	}
	top := newPlot(fmt.Sprintf("Test information (peak %.3g at θ = %.2g)", peak, peakAt), "", "information I(θ)")
	li, err := plotter.NewLine(info)
	if err != nil {
		return nil, err
	}
	li.Color, li.Width = palette[0], vg.Points(1.5)
	top.Add(li)
	top.Y.Min, top.Y.Max = 0, peak*1.1
	// The models' θ: short ticks along the bottom of the information panel.
	var rug plotter.XYs
	for _, m := range f.Models {
		if m.Score >= lo && m.Score <= hi {
			rug = append(rug, plotter.XY{X: m.Score, Y: peak * 0.02})
		}
	}
	if len(rug) > 0 {
		s, err := plotter.NewScatter(rug)
		if err != nil {
			return nil, err
		}
		s.GlyphStyle.Shape, s.GlyphStyle.Color, s.GlyphStyle.Radius = draw.PlusGlyph{}, palette[2], vg.Points(2.5)
		top.Add(s)
		top.Legend.Add(fmt.Sprintf("models' θ (%d)", len(rug)), s)
		top.Legend.Top = true
	}
	bottom := newPlot("", "ability θ", "SE of θ = 1/√I(θ)")
	ls, err := plotter.NewLine(se)
	if err != nil {
		return nil, err
	}
	ls.Color, ls.Width = palette[1], vg.Points(1.5)
	bottom.Add(ls)
	bottom.Y.Min, bottom.Y.Max = 0, math.Min(seTop, 5)*1.05
	for _, p := range []*plot.Plot{top, bottom} {
		p.X.Min, p.X.Max = lo, hi
	}
	fig := &Figure{Name: "information", Title: "Test information and the standard error of θ", W: 7 * vg.Inch, H: 6 * vg.Inch,
		Caption: fmt.Sprintf("Top: the test information I(θ) = Σ_j I_j(θ) of the %d items along the ability θ (information.csv), with each model's θ as a tick; bottom: the standard error of θ there, 1/√I(θ), for a model that answered every item (values above 5 run off the top). The test measures best where the information peaks and separates models there; far from the peak two models' θ are told apart by fewer items. Under a prior on θ the posterior's SE is 1/√(I(θ) + 1/sd²), a little smaller.", len(f.Items)),
		Source:  source}
	return fig, renderWith(fig, func(c draw.Canvas) {
		tiles := draw.Tiles{Rows: 2, Cols: 1, PadTop: 4, PadBottom: 4, PadLeft: 4, PadRight: 8, PadY: 6}
		cs := plot.Align([][]*plot.Plot{{top}, {bottom}}, tiles, c)
		top.Draw(cs[0][0])
		bottom.Draw(cs[1][0])
	})
}

// statsLine is fit.json's fit_statistics in words: "log-likelihood
// −18662.4, log-prior −547.5; AIC 39592.8, BIC 49926.3 (k 1134, n 67000)";
// "" in folders written before them.
func (f *Fit) statsLine() string {
	s := f.Stats
	if s == nil {
		return ""
	}
	return fmt.Sprintf("log-likelihood %.6g, log-prior %.6g (the loss is minus their sum); AIC %.6g, BIC %.6g (k %d, n %d)",
		s.LogLikelihood, s.LogPrior, s.AIC, s.BIC, s.Parameters, s.N)
}
