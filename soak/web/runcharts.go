package web

import (
	"fmt"
	"image/color"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/units"
	"github.com/soakd/soakd/soak/verdict"
)

// chartFunc builds one chart of a run; ok is false when the run holds no
// data for it.
type chartFunc func(rep *model.Report, a axes) (c chart, ok bool, err error)

// runCharts renders every chart the run has data for, in page order.
func runCharts(rep *model.Report) ([]chart, error) {
	a := newAxes(rep.Records)
	var out []chart
	for _, f := range []chartFunc{memoryByRequests, memoryByTime, fdChart, countChart, cpuChart, throughputChart, latencyChart} {
		c, ok, err := f(rep, a)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, c)
		}
	}
	return out, nil
}

func memoryByRequests(rep *model.Report, a axes) (chart, bool, error) {
	recs := rep.Records
	ms := memorySeries(recs)
	if len(ms) == 0 {
		return chart{}, false, nil
	}
	ys := byteScale("memory", maxOf(recs, ms[0].value))
	p := newPlot(a.req.label, ys.label)
	addPhases(p, 0, a.warmReq, -1, 0)
	desc := "Memory of the target's process tree against completed requests."
	if res, ok := rep.Resources["rss"]; ok && a.soakStart >= 0 && fitted(res) {
		if err := addFit(p, rep, res, a, ys); err != nil {
			return chart{}, false, err
		}
		desc += fmt.Sprintf(" The fitted RSS slope over the soak phase is %s per request (95 %% confidence band %s to %s); verdict: %s.",
			units.Amount(res.PerRequest, res.Unit), units.Amount(res.CI95[0], res.Unit),
			units.Amount(res.CI95[1], res.Unit), res.Verdict)
	}
	for i, m := range ms {
		xy := pick(recs, a.xReq, scaled(m.value, ys))
		if err := addLine(p, m.name, xy, memColors[i%len(memColors)], i); err != nil {
			return chart{}, false, err
		}
	}
	addRestarts(p, a.restartsReq)
	p.Y.Min = 0
	c, err := render(p, "chart-memory-requests", "Memory against requests, with the fitted RSS slope", desc+restartNote(a))
	return c, err == nil, err
}

var memColors = []color.Color{colBlue, colGreen, colPurple, colSky}

// addFit draws the fitted RSS line and its 95 % confidence band over the
// soak phase of the incarnation that the verdict fitted: after a restart,
// the one whose soak covered the most requests (verdict.AnalyzeResource),
// so the line is never laid over a segment it was not fitted to. The line
// starts at the soak's start level (the lower envelope the verdict fitted)
// and rises at the fitted slope; the band spreads between the CI's slopes
// from the same point.
func addFit(p *plot.Plot, rep *model.Report, res verdict.Resource, a axes, ys scale) error {
	segs := fittedSegment(soakSegments(rep.Records))
	for i, seg := range segs {
		x0, x1 := float64(seg.first.Requests), float64(seg.last.Requests)
		y0 := float64(seg.first.RSS)
		if res.Start > 0 {
			y0 = res.Start
		}
		at := func(slope, x float64) plotter.XY { return plotter.XY{X: a.req.of(x), Y: ys.of(y0 + slope*(x-x0))} }
		poly, err := plotter.NewPolygon(plotter.XYs{at(res.CI95[0], x0), at(res.CI95[1], x1), at(res.CI95[0], x1)})
		if err != nil {
			return fmt.Errorf("confidence band: %w", err)
		}
		poly.Color, poly.LineStyle.Width = colBand, 0
		line, err := plotter.NewLine(plotter.XYs{at(res.PerRequest, x0), at(res.PerRequest, x1)})
		if err != nil {
			return fmt.Errorf("fitted line: %w", err)
		}
		line.Color, line.Width = colRed, vg.Points(2)
		p.Add(poly, line)
		if i == 0 {
			p.Legend.Add("RSS fit, 95 % band", line, poly)
		}
	}
	return nil
}

// fittedSegment keeps the segment that covered the most requests, the one
// the verdict fits when the target restarted.
func fittedSegment(segs []segment) []segment {
	if len(segs) < 2 {
		return segs
	}
	best := segs[0]
	for _, s := range segs[1:] {
		if s.last.Requests-s.first.Requests > best.last.Requests-best.first.Requests {
			best = s
		}
	}
	return []segment{best}
}

// segment is the soak-phase stretch of one incarnation.
type segment struct{ first, last model.Record }

// soakSegments splits the soak phase at restarts.
func soakSegments(recs []model.Record) []segment {
	var out []segment
	for _, r := range recs {
		if r.Phase != verdict.Soak || !r.Alive {
			continue
		}
		if n := len(out); n > 0 && out[n-1].last.Incarnation == r.Incarnation {
			out[n-1].last = r
			continue
		}
		out = append(out, segment{first: r, last: r})
	}
	return out
}

// scaled wraps a value function with a unit.
func scaled(f func(model.Record) (float64, bool), s scale) func(model.Record) (float64, bool) {
	return func(r model.Record) (float64, bool) {
		v, ok := f(r)
		return s.of(v), ok
	}
}

func restartNote(a axes) string {
	switch n := len(a.restartsSec); n {
	case 0:
		return ""
	case 1:
		return " A dashed vertical line marks the target's restart."
	default:
		return fmt.Sprintf(" Dashed vertical lines mark the target's %d restarts.", n)
	}
}

func memoryByTime(rep *model.Report, a axes) (chart, bool, error) {
	recs := rep.Records
	ms := memorySeries(recs)
	if len(ms) == 0 {
		return chart{}, false, nil
	}
	ys := byteScale("memory", maxOf(recs, ms[0].value))
	p := newPlot(a.sec.label, ys.label)
	addPhases(p, a.baseSec, a.warmSec, a.coolSec, a.endSec)
	for i, m := range ms {
		if err := addLine(p, m.name, pick(recs, a.xSec, scaled(m.value, ys)), memColors[i%len(memColors)], i); err != nil {
			return chart{}, false, err
		}
	}
	addRestarts(p, a.restartsSec)
	p.Y.Min = 0
	desc := "Memory of the target's process tree over time; the shaded stretches are the idle baseline before the load, the warm-up, and the cool-down after it."
	c, err := render(p, "chart-memory-time", "Memory over time, with the warm-up and cool-down shaded", desc+restartNote(a))
	return c, err == nil, err
}

func fdLimit(r model.Record) (float64, bool) { return float64(r.FDLimit), r.FDsValid && r.FDLimit > 0 }

// allFDs is the tree's whole fd count where the verdict judges it net of
// the load's connections (model.Record.FDsNet): the chart draws both.
func allFDs(r model.Record) (float64, bool) {
	return float64(r.FDs), r.FDsValid && r.FDsNetValid && r.Alive
}

func fdChart(rep *model.Report, a axes) (chart, bool, error) {
	recs := rep.Records
	series := chartSeries(recs, model.ChartFDs)
	if len(series) == 0 {
		return chart{}, false, nil
	}
	fds := pick(recs, a.xReq, series[0].value)
	limit := pick(recs, a.xReq, fdLimit)
	p := newPlot(a.req.label, "open file descriptors")
	addPhases(p, 0, a.warmReq, -1, 0)
	if err := addLine(p, series[0].name, fds, colBlue, 0); err != nil {
		return chart{}, false, err
	}
	desc := "Open file descriptors of the target's process tree against completed requests, with the root process's soft limit."
	if all := pick(recs, a.xReq, allFDs); len(all) > 0 {
		if err := addLine(p, "all open fds", all, colGrey, 2); err != nil {
			return chart{}, false, err
		}
		desc += " The verdict judges the count less the connections soakd's load holds open to the tree; the grey line is all of them."
	}
	if err := addLine(p, "fd limit (RLIMIT_NOFILE)", limit, colRed, 1); err != nil {
		return chart{}, false, err
	}
	addRestarts(p, a.restartsReq)
	if useLogY(p, 20, fds, limit) {
		p.Y.Label.Text = "open file descriptors (log scale)"
		desc += " The y axis is logarithmic so that the count and its far-off limit both show."
	} else {
		p.Y.Min = 0
	}
	c, err := render(p, "chart-fds", "Open file descriptors against their limit", desc+restartNote(a))
	return c, err == nil, err
}

// countChart draws the counted resources (threads, CLOSE_WAIT sockets and
// any other of model.Resources on the counts chart).
func countChart(rep *model.Report, a axes) (chart, bool, error) {
	recs := rep.Records
	series := chartSeries(recs, model.ChartCounts)
	if len(series) == 0 {
		return chart{}, false, nil
	}
	p := newPlot(a.req.label, "count")
	addPhases(p, 0, a.warmReq, -1, 0)
	var names []string
	for i, s := range series {
		if err := addLine(p, s.name, pick(recs, a.xReq, s.value), countColors[i%len(countColors)], i); err != nil {
			return chart{}, false, err
		}
		names = append(names, s.name)
	}
	addRestarts(p, a.restartsReq)
	p.Y.Min = 0
	desc := "Counts of the target's process tree against completed requests: " + strings.Join(names, ", ") +
		" (a CLOSE_WAIT socket is one the peer closed and the target did not)."
	c, err := render(p, "chart-threads", "Threads and CLOSE_WAIT sockets against requests", desc+restartNote(a))
	return c, err == nil, err
}

var countColors = []color.Color{colBlue, colOrange, colGreen, colPurple}

func cpuChart(rep *model.Report, a axes) (chart, bool, error) {
	user, total := cpuRates(rep.Records, a)
	if len(total) == 0 {
		return chart{}, false, nil
	}
	p := newPlot(a.sec.label, "CPU (cores)")
	addPhases(p, a.baseSec, a.warmSec, a.coolSec, a.endSec)
	sys, err := plotter.NewLine(total)
	if err != nil {
		return chart{}, false, fmt.Errorf("cpu chart: %w", err)
	}
	sys.Color, sys.Width, sys.FillColor = colOrange, vg.Points(0.8), color.NRGBA{0xE6, 0x9F, 0x00, 0xC0}
	usr, err := plotter.NewLine(user)
	if err != nil {
		return chart{}, false, fmt.Errorf("cpu chart: %w", err)
	}
	usr.Color, usr.Width, usr.FillColor = colBlue, vg.Points(0.8), color.NRGBA{0x00, 0x72, 0xB2, 0xD0}
	p.Add(edgeLine{sys}, edgeLine{usr})
	p.Legend.Add("system (top band)", sys)
	p.Legend.Add("user (bottom band)", usr)
	addRestarts(p, a.restartsSec)
	p.Y.Min = 0
	desc := "The target's CPU use in cores (CPU seconds per second), user time below and system time stacked on top; the top edge is the total."
	c, err := render(p, "chart-cpu", "Target CPU, user and system stacked, over time", desc+restartNote(a))
	return c, err == nil, err
}

func throughputChart(rep *model.Report, a axes) (chart, bool, error) {
	xy := requestRates(rep.Records, a)
	if len(xy) == 0 {
		return chart{}, false, nil
	}
	p := newPlot(a.sec.label, "throughput (requests/s)")
	addPhases(p, a.baseSec, a.warmSec, a.coolSec, a.endSec)
	if err := addLine(p, "requests/s", xy, colGreen, 0); err != nil {
		return chart{}, false, err
	}
	addRestarts(p, a.restartsSec)
	p.Y.Min = 0
	desc := "Completed requests per second, from the change in the request count between samples, over windows of at least 2 s."
	c, err := render(p, "chart-throughput", "Throughput over time", desc+restartNote(a))
	return c, err == nil, err
}

// p50Value and p99Value skip the records taken before the load's first
// progress interval, which carry no latency yet, and those of the idle
// phases (baseline, cool-down), which repeat the load's last interval and
// would draw a flat line where no request ran.
func p50Value(r model.Record) (float64, bool) {
	return 1000 * r.P50, r.P50 > 0 && r.Rate > 0 && underLoad(r)
}
func p99Value(r model.Record) (float64, bool) {
	return 1000 * r.P99, r.P99 > 0 && r.Rate > 0 && underLoad(r)
}

func underLoad(r model.Record) bool { return r.Phase == verdict.Warmup || r.Phase == verdict.Soak }

func latencyChart(rep *model.Report, a axes) (chart, bool, error) {
	p50, p99 := pick(rep.Records, a.xSec, p50Value), pick(rep.Records, a.xSec, p99Value)
	if len(p50) == 0 && len(p99) == 0 {
		return chart{}, false, nil
	}
	p := newPlot(a.sec.label, "latency (ms)")
	addPhases(p, a.baseSec, a.warmSec, a.coolSec, a.endSec)
	if err := addLine(p, "p50", p50, colBlue, 0); err != nil {
		return chart{}, false, err
	}
	if err := addLine(p, "p99", p99, colRed, 1); err != nil {
		return chart{}, false, err
	}
	addRestarts(p, a.restartsSec)
	desc := "Median (p50) and 99th percentile (p99) latency of each progress interval's requests, in milliseconds."
	if useLogY(p, 30, p50, p99) {
		p.Y.Label.Text = "latency (ms, log scale)"
		desc += " The y axis is logarithmic."
	} else {
		p.Y.Min = 0
	}
	c, err := render(p, "chart-latency", "Latency over time: p50 and p99", desc+restartNote(a))
	return c, err == nil, err
}

// fitted reports whether the verdict fitted a slope: an inconclusive
// resource with too few points has none, and a flat line would mislead.
func fitted(res verdict.Resource) bool {
	return res.PerRequest != 0 || res.CI95 != [2]float64{}
}
