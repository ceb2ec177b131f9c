package analyze

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"image/png"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
)

// svgBox is a text's or a path's extent in the SVG's own coordinates.
type svgBox struct {
	text                   string
	minX, minY, maxX, maxY float64
}

func (b svgBox) overlaps(o svgBox) bool {
	return b.minX < o.maxX && o.minX < b.maxX && b.minY < o.maxY && o.minY < b.maxY
}

// affine is an SVG matrix(a b c d e f): x' = a x + c y + e, y' = b x + d y + f.
type affine [6]float64

func (m affine) mul(n affine) affine {
	return affine{m[0]*n[0] + m[2]*n[1], m[1]*n[0] + m[3]*n[1], m[0]*n[2] + m[2]*n[3], m[1]*n[2] + m[3]*n[3],
		m[0]*n[4] + m[2]*n[5] + m[4], m[1]*n[4] + m[3]*n[5] + m[5]}
}

func (m affine) apply(x, y float64) (float64, float64) {
	return m[0]*x + m[2]*y + m[4], m[1]*x + m[3]*y + m[5]
}

var svgTransform = regexp.MustCompile(`(scale|translate|rotate)\(([^)]*)\)`)

func parseTransform(t *testing.T, s string) affine {
	m := affine{1, 0, 0, 1, 0, 0}
	for _, f := range svgTransform.FindAllStringSubmatch(s, -1) {
		var v []float64
		for _, a := range strings.FieldsFunc(f[2], func(r rune) bool { return r == ',' || r == ' ' }) {
			x, err := strconv.ParseFloat(a, 64)
			if err != nil {
				t.Fatalf("transform %q: %v", s, err)
			}
			v = append(v, x)
		}
		switch {
		case f[1] == "scale" && len(v) == 2:
			m = m.mul(affine{v[0], 0, 0, v[1], 0, 0})
		case f[1] == "translate" && len(v) == 2:
			m = m.mul(affine{1, 0, 0, 1, v[0], v[1]})
		case f[1] == "rotate" && len(v) == 1:
			r := v[0] * math.Pi / 180
			m = m.mul(affine{math.Cos(r), math.Sin(r), -math.Sin(r), math.Cos(r), 0, 0})
		default:
			t.Fatalf("transform %q: not handled", s)
		}
	}
	return m
}

// wider is how much wider than Liberation Sans (Arial's widths) a
// machine's sans-serif may set a text: DejaVu Sans is about 10% wider.
const wider = 1.15

// svgExtents parses an SVG as gonum's vgsvg writes it, and returns its
// viewBox, its texts' estimated extents (the text's Liberation Sans width
// times wider; its ascent and descent) and its stroked paths' extents, by
// stroke colour, with the font families used.
func svgExtents(t *testing.T, b []byte) (view svgBox, texts []svgBox, paths map[string][]svgBox, families map[string]bool) {
	t.Helper()
	paths, families = map[string][]svgBox{}, map[string]bool{}
	dec := xml.NewDecoder(bytes.NewReader(b))
	stack := []affine{{1, 0, 0, 1, 0, 0}}
	box := func(m affine, pts [][2]float64, text string) svgBox {
		bx := svgBox{text: text, minX: math.Inf(1), minY: math.Inf(1), maxX: math.Inf(-1), maxY: math.Inf(-1)}
		for _, p := range pts {
			x, y := m.apply(p[0], p[1])
			bx.minX, bx.maxX, bx.minY, bx.maxY = math.Min(bx.minX, x), math.Max(bx.maxX, x), math.Min(bx.minY, y), math.Max(bx.maxY, y)
		}
		return bx
	}
	var open *xml.StartElement
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		switch e := tok.(type) {
		case xml.StartElement:
			attr := map[string]string{}
			for _, a := range e.Attr {
				attr[a.Name.Local] = a.Value
			}
			m := stack[len(stack)-1].mul(parseTransform(t, attr["transform"]))
			stack = append(stack, m)
			switch e.Name.Local {
			case "svg":
				f := strings.Fields(attr["viewBox"])
				w, _ := strconv.ParseFloat(f[2], 64)
				h, _ := strconv.ParseFloat(f[3], 64)
				view = svgBox{maxX: w, maxY: h}
			case "text":
				e := e.Copy()
				open = &e
			case "path":
				style := attr["style"]
				stroke := regexp.MustCompile(`stroke:(#[0-9A-Fa-f]{6})`).FindStringSubmatch(style)
				if stroke == nil || !strings.Contains(style, "fill:none") {
					continue
				}
				var pts [][2]float64
				for _, xy := range regexp.MustCompile(`[ML]([-0-9.e]+),([-0-9.e]+)`).FindAllStringSubmatch(attr["d"], -1) {
					x, _ := strconv.ParseFloat(xy[1], 64)
					y, _ := strconv.ParseFloat(xy[2], 64)
					pts = append(pts, [2]float64{x, y})
				}
				if len(pts) >= 3 { // a curve, not an axis, a tick or a legend's thumbnail
					paths[strings.ToUpper(stroke[1])] = append(paths[strings.ToUpper(stroke[1])], box(m, pts, ""))
				}
			}
		case xml.CharData:
			if open == nil {
				continue
			}
			attr := map[string]string{}
			for _, a := range open.Attr {
				attr[a.Name.Local] = a.Value
			}
			style := attr["style"]
			fam := regexp.MustCompile(`font-family:([^;]*);`).FindStringSubmatch(style)
			size := regexp.MustCompile(`font-size:([0-9.]+)px`).FindStringSubmatch(style)
			if fam == nil || size == nil {
				t.Fatalf("text %q: style %q", e, style)
			}
			families[fam[1]] = true
			px, _ := strconv.ParseFloat(size[1], 64)
			face := font.DefaultCache.Lookup(FigureFont, vg.Length(px))
			w := wider * float64(face.Width(string(e)))
			ext := face.Extents()
			x, _ := strconv.ParseFloat(attr["x"], 64)
			y, _ := strconv.ParseFloat(attr["y"], 64)
			// The text's own transform flips y: its glyphs stand above y.
			asc, desc := float64(ext.Ascent), float64(ext.Descent)
			texts = append(texts, box(stack[len(stack)-1], [][2]float64{{x, y - asc}, {x + w, y - asc}, {x, y + desc}, {x + w, y + desc}}, string(e)))
			open = nil
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		}
	}
	return view, texts, paths, families
}

// checkFigure checks an SVG figure: every text in the generic family and
// inside the canvas, and no text over a curve of the palette's colours
// that is not its own axis (legends beside the data, not over it).
func checkFigure(t *testing.T, name string, svg []byte, legend func(string) bool) {
	t.Helper()
	view, texts, paths, families := svgExtents(t, svg)
	if len(texts) == 0 || view.maxX == 0 {
		t.Fatalf("%s: no text or no viewBox", name)
	}
	for f := range families {
		if f != SVGFontFamily || !strings.HasSuffix(f, ",sans-serif") {
			t.Errorf("%s: font-family %q", name, f)
		}
	}
	const tol = 0.5
	for _, b := range texts {
		if b.minX < view.minX-tol || b.minY < view.minY-tol || b.maxX > view.maxX+tol || b.maxY > view.maxY+tol {
			t.Errorf("%s: text %q at [%.1f, %.1f] x [%.1f, %.1f] runs off the %gx%g canvas", name, b.text, b.minX, b.maxX, b.minY, b.maxY, view.maxX, view.maxY)
		}
	}
	curves := 0
	for _, c := range Palette {
		r, g, b, _ := c.RGBA()
		for _, p := range paths[fmt.Sprintf("#%02X%02X%02X", r>>8, g>>8, b>>8)] {
			curves++
			for _, tb := range texts {
				if legend(tb.text) && tb.overlaps(p) {
					t.Errorf("%s: legend %q over a curve at [%.1f, %.1f] x [%.1f, %.1f]", name, tb.text, p.minX, p.maxX, p.minY, p.maxY)
				}
			}
		}
	}
	if legend("") && curves == 0 {
		t.Errorf("%s: no curves found", name)
	}
}

// checkPNG checks a PNG figure: its size, something drawn, and nothing
// drawn on its outermost pixels (no label cut by the edge).
func checkPNG(t *testing.T, name string, b []byte) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	w, h := img.Bounds().Dx(), img.Bounds().Dy()
	if w != int(FigureWidth/vg.Inch*FigureDPI+0.5) || h != int(FigureHeight/vg.Inch*FigureDPI+0.5) {
		t.Errorf("%s: %dx%d", name, w, h)
	}
	white := func(x, y int) bool {
		r, g, b, _ := img.At(x, y).RGBA()
		return r>>8 >= 250 && g>>8 >= 250 && b>>8 >= 250
	}
	dark := 0
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			if !white(x, y) {
				dark++
				if x == 0 || y == 0 || x == w-1 || y == h-1 {
					t.Fatalf("%s: drawn at the edge pixel (%d, %d)", name, x, y)
				}
			}
		}
	}
	if dark < w*h/200 {
		t.Errorf("%s: only %d pixels drawn", name, dark)
	}
}

func sampleICC() *ICCResult {
	res := &ICCResult{Mid: []float64{-1.6, -0.7, 0, 0.7, 1.6}}
	for k := range 7 {
		it := ICCItem{ID: fmt.Sprintf("mmlu/high_school_macroeconomics/%d", 100+k), Flags: []string{"non_monotone"}, N: []int{5, 5, 5, 5, 5}}
		for b, x := range res.Mid {
			p := 1 / (1 + math.Exp(-(2*x - float64(k)/2 + 1.5)))
			it.Fitted = append(it.Fitted, p)
			it.Empirical = append(it.Empirical, math.Min(1, p+0.15*float64(b%2)))
		}
		res.Items = append(res.Items, it)
	}
	return res
}

func sampleDirections() *DirectionsResult {
	d := &DirectionsResult{K: 14, ARI: 0.512, NMI: 0.634}
	for k := range 14 {
		d.Clusters = append(d.Clusters, Cluster{Size: 60 - 4*k, Top: []Share{{Category: "high_school_macroeconomics_" + strings.Repeat("x", k), Value: 0.5 + 0.03*float64(k)}}})
	}
	return d
}

// The ICC and directions figures, as SVG and PNG: generic font family, every
// label inside the canvas, the legends beside the curves, not over them.
func TestFiguresStayInside(t *testing.T) {
	icc, dir := sampleICC(), sampleDirections()
	var svg, pngb bytes.Buffer
	if err := icc.WriteFigure(&svg, 6); err != nil {
		t.Fatal(err)
	}
	checkFigure(t, "icc.svg", svg.Bytes(), func(s string) bool { return s == "" || strings.HasSuffix(s, "(non_monotone)") })
	// The legend keeps the ends of the ids, where they differ.
	if !strings.Contains(svg.String(), ">mmlu/high_s…conomics/100 (non_monotone)<") || !strings.Contains(svg.String(), ">mmlu/high_s…conomics/105 (non_monotone)<") {
		t.Errorf("icc.svg: legend labels not as expected")
	}
	if err := icc.WriteFigurePNG(&pngb, 6); err != nil {
		t.Fatal(err)
	}
	checkPNG(t, "icc.png", pngb.Bytes())
	svg.Reset()
	pngb.Reset()
	if err := dir.WriteFigure(&svg); err != nil {
		t.Fatal(err)
	}
	checkFigure(t, "directions.svg", svg.Bytes(), func(s string) bool { return strings.HasSuffix(s, "categories") })
	if err := dir.WriteFigurePNG(&pngb); err != nil {
		t.Fatal(err)
	}
	checkPNG(t, "directions.png", pngb.Bytes())
}
