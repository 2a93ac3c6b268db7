package web

import (
	"fmt"
	"io"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/soakd/soakd/soak/sweep"
	"github.com/soakd/soakd/soak/units"
)

// sweepPage is the sweep report's content.
type sweepPage struct {
	frame
	Rep    *sweep.Report
	Rows   []sweepRow
	Charts []chart
}

// sweepRow is a level's row of the table.
type sweepRow struct {
	sweep.Level
	RSSText string
}

// SweepReport writes a sweep's page: the knee and its cause, the charts
// (throughput and p99 against the clients with the USL's curve, memory
// and fds against the connections with their fits) and the levels' table.
func SweepReport(w io.Writer, rep *sweep.Report) error {
	if rep == nil {
		return fmt.Errorf("sweep report: no report")
	}
	var cs []chart
	for _, f := range []func(*sweep.Report) (chart, bool, error){throughputUSLChart, p99Chart, perConnChart(false), perConnChart(true)} {
		c, ok, err := f(rep)
		if err != nil {
			return err
		}
		if ok {
			cs = append(cs, c)
		}
	}
	d := sweepPage{frame: newFrame("", "soakd sweep report", nil), Rep: rep, Charts: cs}
	for _, l := range rep.Levels {
		d.Rows = append(d.Rows, sweepRow{l, units.Amount(float64(l.RSS), "bytes")})
	}
	return pages.ExecuteTemplate(w, "sweep.html", d)
}

// WriteSweepFile writes the sweep's page to dir/report.html, through a
// temporary file renamed into place.
func WriteSweepFile(dir string, rep *sweep.Report) error {
	return writeHTMLFile(dir, func(w io.Writer) error { return SweepReport(w, rep) })
}

// levelPoints are the levels' (concurrency, y) points where y is known.
func levelPoints(rep *sweep.Report, y func(sweep.Level) (float64, bool)) plotter.XYs {
	var pts plotter.XYs
	for _, l := range rep.Levels {
		if v, ok := y(l); ok {
			pts = append(pts, plotter.XY{X: float64(l.Concurrency), Y: v})
		}
	}
	return pts
}

// logClients puts the clients on a log axis: a ladder spans decades.
func logClients(p *plot.Plot, pts plotter.XYs) {
	p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, plot.LogTicks{}
	p.X.Min = math.Max(pts[0].X/1.5, 0.5)
	p.X.Max = pts[len(pts)-1].X * 1.5
}

// addPoints adds a series as marked points joined by a line.
func addPoints(p *plot.Plot, name string, pts plotter.XYs, c, dash int) error {
	cols := []draw.GlyphStyle{{Color: colBlue, Radius: vg.Points(3), Shape: draw.CircleGlyph{}},
		{Color: colOrange, Radius: vg.Points(3), Shape: draw.TriangleGlyph{}}}
	if err := addLine(p, name, pts, cols[c].Color, dash); err != nil {
		return err
	}
	sc, err := plotter.NewScatter(pts)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	sc.GlyphStyle = cols[c]
	p.Add(sc)
	return nil
}

func throughputUSLChart(rep *sweep.Report) (chart, bool, error) {
	pts := levelPoints(rep, func(l sweep.Level) (float64, bool) { return l.Throughput, l.Throughput > 0 })
	if len(pts) == 0 {
		return chart{}, false, nil
	}
	p := newPlot("clients (log)", "requests per second")
	logClients(p, pts)
	if err := addPoints(p, "measured", pts, 0, 0); err != nil {
		return chart{}, false, err
	}
	desc := fmt.Sprintf("Throughput at each level of the ladder; the knee is at %d clients (%s).", rep.Knee.Concurrency, rep.Knee.Cause)
	if u := rep.USL; u.OK {
		var curve plotter.XYs
		for x := p.X.Min; x <= p.X.Max; x *= 1.05 {
			curve = append(curve, plotter.XY{X: x, Y: u.At(x)})
		}
		if err := addLine(p, "USL fit", curve, colGreen, 1); err != nil {
			return chart{}, false, err
		}
		desc += fmt.Sprintf(" The dashed curve is the Universal Scalability Law fitted to it: σ %.3g, κ %.3g, r² %.3f.", u.Sigma, u.Kappa, u.R2)
	}
	c, err := render(p, "sweep-throughput", "Throughput against clients", desc)
	return c, err == nil, err
}

func p99Chart(rep *sweep.Report) (chart, bool, error) {
	pts := levelPoints(rep, func(l sweep.Level) (float64, bool) { return 1000 * l.P99, l.P99 > 0 })
	if len(pts) == 0 {
		return chart{}, false, nil
	}
	p := newPlot("clients (log)", "p99 latency (ms)")
	logClients(p, pts)
	if err := addPoints(p, "p99", pts, 1, 0); err != nil {
		return chart{}, false, err
	}
	if mx := levelPoints(rep, func(l sweep.Level) (float64, bool) { return 1000 * l.Max, l.Max > 0 }); len(mx) > 0 {
		if err := addLine(p, "max", mx, colGrey, 2); err != nil {
			return chart{}, false, err
		}
	}
	c, err := render(p, "sweep-p99", "p99 latency against clients", "The 99th percentile and the maximum latency at each level; a maximum near 1 s or 3 s is the mark of SYN retransmits after the accept queue overflowed.")
	return c, err == nil, err
}

// perConnChart charts the target's RSS (or fds) against the connections
// it accepted, with the per-connection fit.
func perConnChart(fds bool) func(*sweep.Report) (chart, bool, error) {
	return func(rep *sweep.Report) (chart, bool, error) {
		var pts plotter.XYs
		for _, l := range rep.Levels {
			if l.Accepted <= 0 || l.FDs == 0 {
				continue
			}
			y := float64(l.RSS) / (1 << 20)
			if fds {
				y = float64(l.FDs)
			}
			pts = append(pts, plotter.XY{X: l.Accepted, Y: y})
		}
		if len(pts) == 0 {
			return chart{}, false, nil
		}
		ylabel, id, title, name := "RSS (MiB)", "sweep-rss", "Memory against connections", "RSS"
		if fds {
			ylabel, id, title, name = "open fds", "sweep-fds", "File descriptors against connections", "fds"
		}
		p := newPlot("connections accepted", ylabel)
		if err := addPoints(p, name, pts, 0, 0); err != nil {
			return chart{}, false, err
		}
		pc := rep.PerConnection
		slope := pc.RSSBytes / (1 << 20)
		if fds {
			slope = pc.FDs
		}
		if pc.Levels >= 3 {
			x0, y0 := pts[0].X, pts[0].Y
			end := pts[len(pts)-1].X
			if fds && pc.CeilingConnections > end {
				end = pc.CeilingConnections
			}
			fit := plotter.XYs{{X: x0, Y: y0}, {X: end, Y: y0 + slope*(end-x0)}}
			if err := addLine(p, "per-connection fit", fit, colGreen, 1); err != nil {
				return chart{}, false, err
			}
		}
		if fds && pc.FDLimit > 0 && pc.FDLimit < 1<<16 {
			lim := plotter.XYs{{X: 0, Y: float64(pc.FDLimit)}, {X: math.Max(pts[len(pts)-1].X, pc.CeilingConnections), Y: float64(pc.FDLimit)}}
			if err := addLine(p, "fd limit", lim, colRed, 3); err != nil {
				return chart{}, false, err
			}
		}
		c, err := render(p, id, title, pc.Text)
		return c, err == nil, err
	}
}
