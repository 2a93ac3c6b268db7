package web

import (
	"fmt"
	"image/color"

	"gonum.org/v1/plot/plotter"

	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/units"
)

// rssValue reads RSS as the resource table declares it: a record whose
// RSS was not read (a dead target, an unreadable /proc) holds no point.
func rssValue(r model.Record) (float64, bool) {
	def, _ := model.ResourceNamed("rss")
	return def.Value(r)
}

// compareChart draws both runs' RSS against requests, each with its fitted
// slope over its soak phase.
func compareChart(a, b *model.Report, av, bv RunView) (chart, error) {
	maxReq := 0.0
	maxRSS := 0.0
	for _, rep := range []*model.Report{a, b} {
		if n := len(rep.Records); n > 0 {
			maxReq = max(maxReq, float64(rep.Records[n-1].Requests))
		}
		maxRSS = max(maxRSS, maxOf(rep.Records, rssValue))
	}
	xs, ys := requestScale(maxReq), byteScale("RSS", maxRSS)
	p := newPlot(xs.label, ys.label)
	desc := "RSS of both runs against completed requests, each with its fitted slope over its soak phase."
	for i, s := range []struct {
		rep  *model.Report
		view RunView
	}{{a, av}, {b, bv}} {
		name := fmt.Sprintf("run %d", s.view.ID)
		col := []color.Color{colBlue, colOrange}[i]
		x := func(r model.Record) float64 { return xs.of(float64(r.Requests)) }
		if err := addLine(p, name+" RSS", pick(s.rep.Records, x, scaled(rssValue, ys)), col, i); err != nil {
			return chart{}, err
		}
		res, ok := s.rep.Resources["rss"]
		if !ok || !fitted(res) {
			continue
		}
		if fit := fitLine(s.rep, res.PerRequest, res.Start, xs, ys); len(fit) > 0 {
			if err := addLine(p, fmt.Sprintf("%s fit, %s/request", name, units.Amount(res.PerRequest, "bytes")), fit, col, 2+i); err != nil {
				return chart{}, err
			}
		}
		desc += fmt.Sprintf(" Run %d: %s per request (%s).", s.view.ID, units.Amount(res.PerRequest, "bytes"), res.Verdict)
	}
	p.Y.Min = 0
	return render(p, "chart-compare", "RSS against requests, both runs", desc)
}

// fitLine is the fitted line over the soak phase, from the first soak
// record's request count, at the soak's start level.
func fitLine(rep *model.Report, slope, start float64, xs, ys scale) plotter.XYs {
	segs := soakSegments(rep.Records)
	if len(segs) == 0 {
		return nil
	}
	x0, x1 := float64(segs[0].first.Requests), float64(segs[len(segs)-1].last.Requests)
	if start <= 0 {
		start = float64(segs[0].first.RSS)
	}
	return plotter.XYs{{X: xs.of(x0), Y: ys.of(start)}, {X: xs.of(x1), Y: ys.of(start + slope*(x1-x0))}}
}
