package web

import (
	"bytes"
	"fmt"
	"html"
	"html/template"
	"image/color"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// chart is one rendered chart: an inline SVG with its title and a one-line
// description for screen readers and the caption.
type chart struct {
	ID    string
	Title string
	Desc  string
	SVG   template.HTML
}

// displayBuckets is the number of x buckets a series is reduced to for
// display: about one per horizontal pixel of a chart.
const displayBuckets = 600

// chart size in points; the SVG scales to the page width. The legend
// takes a strip on the right, so that it never hides data.
const (
	chartWidth  = 9.5 * vg.Inch
	chartHeight = 3.4 * vg.Inch
	legendWidth = 2.3 * vg.Inch
)

// Okabe–Ito colours, told apart by people with colour-vision deficiencies;
// series also differ by dash pattern, so colour is never the only cue.
var (
	colBlue   = color.RGBA{0x00, 0x72, 0xB2, 0xFF}
	colOrange = color.RGBA{0xE6, 0x9F, 0x00, 0xFF}
	colGreen  = color.RGBA{0x00, 0x9E, 0x73, 0xFF}
	colRed    = color.RGBA{0xD5, 0x5E, 0x00, 0xFF}
	colPurple = color.RGBA{0xCC, 0x79, 0xA7, 0xFF}
	colSky    = color.RGBA{0x56, 0xB4, 0xE9, 0xFF}
	colGrey   = color.RGBA{0x55, 0x55, 0x55, 0xFF}
	// Translucent fills are NRGBA: color.RGBA is alpha-premultiplied.
	colShade = color.NRGBA{0x00, 0x00, 0x00, 0x16}
	colCool  = color.NRGBA{0x00, 0x72, 0xB2, 0x24}
	colBand  = color.NRGBA{0xD5, 0x5E, 0x00, 0x50}
)

var dashes = [][]vg.Length{nil, {vg.Points(6), vg.Points(3)}, {vg.Points(2), vg.Points(2)}, {vg.Points(8), vg.Points(2), vg.Points(2), vg.Points(2)}}

// newPlot makes a plot with sans-serif text, a grid and the legend at the
// top left. The title is left out: the page shows it above the chart.
func newPlot(xLabel, yLabel string) *plot.Plot {
	p := plot.New()
	p.X.Label.Text, p.Y.Label.Text = xLabel, yLabel
	p.X.Min = 0 // requests and seconds start at 0
	for _, st := range []*draw.TextStyle{&p.X.Label.TextStyle, &p.Y.Label.TextStyle, &p.X.Tick.Label, &p.Y.Tick.Label, &p.Legend.TextStyle} {
		st.Font.Variant = "Sans"
	}
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.TextStyle.Font.Size = vg.Points(10)
	p.X.Tick.Marker, p.Y.Tick.Marker = plainTicks{}, plainTicks{}
	p.Add(plotter.NewGrid())
	return p
}

// addLine adds a series as a line with the given colour and dash pattern
// (index into dashes), and a legend entry. A dense series (one that
// decimation reduced) is drawn solid: dashes on a jagged line are noise.
func addLine(p *plot.Plot, name string, xys plotter.XYs, c color.Color, dash int) error {
	if len(xys) == 0 {
		return nil
	}
	l, err := plotter.NewLine(xys)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	l.Color, l.Width = c, vg.Points(1.2)
	if len(xys) < displayBuckets {
		l.Dashes = dashes[dash%len(dashes)]
	}
	p.Add(edgeLine{l})
	p.Legend.Add(name, l)
	return nil
}

// edgeLine is a plotter.Line that gives the plot the glyph boxes of its
// outermost points only. The plot asks for glyph boxes to pad its edges
// so that nothing drawn sticks out, where only the outermost count, and
// plotter.Line makes one per point, for each of several passes: half the
// bytes a live page view allocated (BenchmarkRunReportLive: 12.7 MB a
// view before, 6.3 MB after). The chart is drawn the same.
type edgeLine struct{ *plotter.Line }

// GlyphBoxes implements plot.GlyphBoxer: of the points the plot keeps
// (those inside both axes' ranges, when the line has a width), the boxes
// of the leftmost, rightmost, lowest and highest; every point's box is
// the same size.
func (l edgeLine) GlyphBoxes(p *plot.Plot) []plot.GlyphBox {
	r := 0.5 * l.LineStyle.Width
	if r <= 0 {
		return nil // boxes without a size pad nothing
	}
	rect := vg.Rectangle{Min: vg.Point{X: -r, Y: -r}, Max: vg.Point{X: r, Y: r}}
	var ext []plot.GlyphBox // least x, most x, least y, most y
	for _, pt := range l.XYs {
		x, y := p.X.Norm(pt.X), p.Y.Norm(pt.Y)
		if !(x >= 0 && x <= 1 && y >= 0 && y <= 1) { // NaN too
			continue
		}
		b := plot.GlyphBox{X: x, Y: y, Rectangle: rect}
		if ext == nil {
			ext = []plot.GlyphBox{b, b, b, b}
			continue
		}
		if x < ext[0].X {
			ext[0] = b
		}
		if x > ext[1].X {
			ext[1] = b
		}
		if y < ext[2].Y {
			ext[2] = b
		}
		if y > ext[3].Y {
			ext[3] = b
		}
	}
	return ext
}

// render draws the plot into an SVG element with role="img", a <title>
// and a <desc>, without the XML prolog and with its fixed size removed so
// that CSS scales it. Title and desc are escaped here; the rest of the SVG
// is gonum's, which escapes the text it draws.
func render(p *plot.Plot, id, title, desc string) (chart, error) {
	c := vgsvg.New(chartWidth, chartHeight)
	dc := draw.New(c)
	addHeadroom(p)
	leg := p.Legend
	p.Legend = plot.NewLegend() // empty: the plot draws none
	p.Draw(draw.Crop(dc, 0, -legendWidth, 0, 0))
	leg.Draw(draw.Crop(dc, chartWidth-legendWidth+vg.Points(8), 0, 0, -vg.Points(6)))
	b := svgBufs.Get().(*bytes.Buffer)
	defer func() { b.Reset(); svgBufs.Put(b) }()
	if _, err := c.WriteTo(b); err != nil {
		return chart{}, fmt.Errorf("chart %s: %w", id, err)
	}
	svg, err := inlineSVG(b.Bytes(), id, title, desc)
	if err != nil {
		return chart{}, err
	}
	return chart{ID: id, Title: title, Desc: desc, SVG: template.HTML(svg)}, nil
}

// headroom is the share of the y range left free above the highest value,
// so that a peak is not drawn on (and half hidden by) the top edge.
const headroom = 0.06

// addHeadroom raises the top of the y axis by headroom of its range, in
// log terms on a log axis.
func addHeadroom(p *plot.Plot) {
	lo, hi := p.Y.Min, p.Y.Max
	if math.IsInf(lo, 0) || math.IsInf(hi, 0) || hi <= lo {
		return
	}
	if _, ok := p.Y.Scale.(plot.LogScale); ok && lo > 0 {
		p.Y.Max = hi * math.Pow(hi/lo, headroom)
		return
	}
	p.Y.Max = hi + headroom*(hi-lo)
}

const svgFonts = "font-family:'Liberation Sans',Arimo,Arial,Helvetica,sans-serif;"

var sizeAttrs = regexp.MustCompile(`\s(width|height)="[^"]*"`)

// svgBufs holds the buffers charts are drawn into (tens of KB each, seven
// charts a page): the SVG text is copied once, into the chart's string.
var svgBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

var gonumFont = []byte("font-family:Liberation Sans;")

func inlineSVG(doc []byte, id, title, desc string) (string, error) {
	i := bytes.Index(doc, []byte("<svg"))
	if i < 0 {
		return "", fmt.Errorf("chart %s: no <svg> element in the rendered output", id)
	}
	doc = doc[i:]
	j := bytes.IndexByte(doc, '>')
	open := sizeAttrs.ReplaceAllString(string(doc[:j]), "")
	var b strings.Builder
	b.Grow(len(doc) + 512)
	fmt.Fprintf(&b, `%s role="img" aria-labelledby="%s-title %s-desc" class="chart" preserveAspectRatio="xMidYMid meet">`,
		open, id, id)
	fmt.Fprintf(&b, "\n<title id=\"%s-title\">%s</title>\n<desc id=\"%s-desc\">%s</desc>", id, html.EscapeString(title), id, html.EscapeString(desc))
	// gonum measured the text with Liberation Sans; where it is not
	// installed, fonts with the same metrics come next.
	for rest := doc[j+1:]; len(rest) > 0; {
		k := bytes.Index(rest, gonumFont)
		if k < 0 {
			b.Write(rest)
			break
		}
		b.Write(rest[:k])
		b.WriteString(svgFonts)
		rest = rest[k+len(gonumFont):]
	}
	return b.String(), nil
}

// decimate reduces a series sorted by x to at most about 2·n points: in each
// of n equal x buckets it keeps the lowest and the highest point, in x
// order, so that spikes survive. It is for display only.
func decimate(pts plotter.XYs, n int) plotter.XYs {
	if len(pts) <= 2*n || n <= 0 {
		return pts
	}
	lo, hi := pts[0].X, pts[len(pts)-1].X
	width := (hi - lo) / float64(n)
	bucket := func(x float64) int {
		if width <= 0 {
			return 0
		}
		return min(max(int((x-lo)/width), 0), n-1)
	}
	out := make(plotter.XYs, 0, 2*n+2)
	for i := 0; i < len(pts); {
		b := bucket(pts[i].X)
		lo, hi := i, i
		j := i + 1
		for ; j < len(pts) && bucket(pts[j].X) == b; j++ {
			if pts[j].Y < pts[lo].Y {
				lo = j
			}
			if pts[j].Y > pts[hi].Y {
				hi = j
			}
		}
		out = appendOrdered(out, pts, lo, hi)
		i = j
	}
	return out
}

func appendOrdered(out, pts plotter.XYs, a, b int) plotter.XYs {
	switch {
	case a == b:
		return append(out, pts[a])
	case a > b:
		a, b = b, a
	}
	return append(out, pts[a], pts[b])
}

// band shades an x interval over the whole height of the plot, for a phase.
// It has no data range, so it never widens the axes.
type band struct {
	x0, x1 float64
	color  color.Color
}

// Plot implements plot.Plotter.
func (b band) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	x0 := max(trX(max(b.x0, p.X.Min)), c.Min.X)
	x1 := min(trX(min(b.x1, p.X.Max)), c.Max.X)
	if x1 <= x0 {
		return
	}
	c.FillPolygon(b.color, []vg.Point{{X: x0, Y: c.Min.Y}, {X: x1, Y: c.Min.Y}, {X: x1, Y: c.Max.Y}, {X: x0, Y: c.Max.Y}})
}

// Thumbnail implements plot.Thumbnailer for the legend.
func (b band) Thumbnail(c *draw.Canvas) {
	c.FillPolygon(b.color, []vg.Point{c.Min, {X: c.Max.X, Y: c.Min.Y}, c.Max, {X: c.Min.X, Y: c.Max.Y}})
}

// vline marks an x position (a restart) over the whole height of the plot.
type vline struct {
	x     float64
	style draw.LineStyle
}

// Plot implements plot.Plotter.
func (v vline) Plot(c draw.Canvas, p *plot.Plot) {
	if v.x < p.X.Min || v.x > p.X.Max {
		return
	}
	trX, _ := p.Transforms(&c)
	x := trX(v.x)
	c.StrokeLine2(v.style, x, c.Min.Y, x, c.Max.Y)
}

// Thumbnail implements plot.Thumbnailer for the legend.
func (v vline) Thumbnail(c *draw.Canvas) {
	x := (c.Min.X + c.Max.X) / 2
	c.StrokeLine2(v.style, x, c.Min.Y, x, c.Max.Y)
}

var restartStyle = draw.LineStyle{Color: color.Black, Width: vg.Points(1.5), Dashes: []vg.Length{vg.Points(6), vg.Points(2), vg.Points(1), vg.Points(2)}}

// addRestarts marks each restart position on the x axis, with one legend
// entry.
func addRestarts(p *plot.Plot, xs []float64) {
	for i, x := range xs {
		v := vline{x: x, style: restartStyle}
		p.Add(v)
		if i == 0 {
			p.Legend.Add("restart", v)
		}
	}
}

// addPhases shades the idle baseline ([start, base]), the warm-up ([base,
// warm]) and the cool-down ([cool, end]); base 0 and cool < 0 mean none.
func addPhases(p *plot.Plot, base, warm, cool, end float64) {
	from := math.Inf(-1)
	if base > 0 {
		b := band{x0: from, x1: base, color: colCool}
		p.Add(b)
		p.Legend.Add("idle baseline (shaded)", b)
		from = base
	}
	if warm > from {
		b := band{x0: from, x1: warm, color: colShade}
		p.Add(b)
		p.Legend.Add("warm-up (shaded)", b)
	}
	if cool >= 0 && end > cool {
		b := band{x0: cool, x1: math.Inf(1), color: colCool}
		p.Add(b)
		p.Legend.Add("cool-down (shaded)", b)
	}
}

// useLogY switches the y axis to a log scale when the positive values span
// more than ratio and none is zero or below; it reports whether it did.
func useLogY(p *plot.Plot, ratio float64, series ...plotter.XYs) bool {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range series {
		for _, pt := range s {
			if pt.Y <= 0 {
				return false
			}
			lo, hi = min(lo, pt.Y), max(hi, pt.Y)
		}
	}
	if math.IsInf(lo, 0) || hi/lo < ratio {
		return false
	}
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	return true
}

// plainTicks are gonum's default ticks labelled with the shortest decimal
// form (25, not 25.00).
type plainTicks struct{}

// Ticks implements plot.Ticker.
func (plainTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = strconv.FormatFloat(ts[i].Value, 'g', 6, 64)
		}
	}
	return ts
}
