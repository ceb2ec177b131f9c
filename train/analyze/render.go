package analyze

import (
	"bytes"
	"image/color"
	"io"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// The figures are FigureWidth x FigureHeight, drawn in FigureFont: Liberation
// Sans, whose letters are as wide as Arial's and Helvetica's, so that the
// layout measured with it holds where the SVG is shown in the font family
// SVGFontFamily names, ending in the generic sans-serif that every machine
// has.
var (
	FigureWidth, FigureHeight = 7 * vg.Inch, 4.5 * vg.Inch
	FigureFont                = font.Font{Typeface: "Liberation", Variant: "Sans"}
	SVGFontFamily             = "'Liberation Sans',Arial,Helvetica,sans-serif"
)

// FigureDPI is the resolution of the PNG figures.
const FigureDPI = 144

// legendGap is the space between a plot and its legend beside it, and
// margin the blank border around a figure.
const legendGap, margin = 3 * vg.Millimeter, 2 * vg.Millimeter

// fontSlack is the room left for a sans-serif up to 15% wider than
// Liberation Sans (DejaVu Sans is about 10% wider) where a text's end is
// free: the legend's.
const fontSlack = 0.15

// sans sets every text of p in FigureFont, at the sizes p has.
func sans(p *plot.Plot) {
	for _, f := range []*font.Font{&p.Title.TextStyle.Font, &p.X.Label.TextStyle.Font, &p.Y.Label.TextStyle.Font,
		&p.X.Tick.Label.Font, &p.Y.Tick.Label.Font, &p.Legend.TextStyle.Font} {
		f.Typeface, f.Variant = FigureFont.Typeface, FigureFont.Variant
	}
}

// drawFigure draws p on dc inside a margin: its title centred over the
// whole figure, and its legend, if it has one, beside the plot on the right
// rather than over the data.
func drawFigure(dc draw.Canvas, p *plot.Plot) {
	sans(p)
	dc = draw.Crop(dc, margin, -margin, margin, -margin)
	if title := p.Title.Text; title != "" {
		sty := p.Title.TextStyle
		sty.XAlign, sty.YAlign = draw.XCenter, draw.YTop
		dc.FillText(sty, vg.Point{X: dc.Center().X, Y: dc.Max.Y}, title)
		dc = draw.Crop(dc, 0, 0, 0, -(sty.Height(title) + p.Title.Padding))
		p.Title.Text = ""
		defer func() { p.Title.Text = title }()
	}
	leg := p.Legend
	w := leg.Rectangle(dc).Size().X
	if w == 0 {
		p.Draw(dc)
		return
	}
	w *= 1 + fontSlack
	p.Legend = plot.NewLegend()
	p.Draw(draw.Crop(dc, 0, -(w + legendGap), 0, 0))
	p.Legend = leg
	leg.Top, leg.Left, leg.XOffs, leg.YOffs = true, true, 0, 0
	leg.Draw(draw.Crop(dc, dc.Max.X-dc.Min.X-w, 0, 0, 0))
}

// WriteSVG draws p as a FigureWidth x FigureHeight SVG, its legend beside
// the plot, its text in SVGFontFamily.
func WriteSVG(w io.Writer, p *plot.Plot) error {
	c := vgsvg.New(FigureWidth, FigureHeight)
	drawFigure(draw.New(c), p)
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return err
	}
	_, err := w.Write(bytes.ReplaceAll(b.Bytes(), []byte("font-family:Liberation Sans;"), []byte("font-family:"+SVGFontFamily+";")))
	return err
}

// WritePNG draws p as WriteSVG does, as a PNG of FigureDPI dots per inch on
// white.
func WritePNG(w io.Writer, p *plot.Plot) error {
	c := vgimg.NewWith(vgimg.UseWH(FigureWidth, FigureHeight), vgimg.UseDPI(FigureDPI), vgimg.UseBackgroundColor(color.White))
	drawFigure(draw.New(c), p)
	_, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(w)
	return err
}
