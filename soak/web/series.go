package web

import (
	"gonum.org/v1/plot/plotter"

	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/verdict"
)

// scale is an axis unit: values are divided by div and the label names the
// unit.
type scale struct {
	label string
	div   float64
}

func (s scale) of(v float64) float64 { return v / s.div }

// requestScale picks a unit for a request count up to max.
func requestScale(max float64) scale {
	switch {
	case max >= 1e7:
		return scale{"requests (millions)", 1e6}
	case max >= 1e4:
		return scale{"requests (thousands)", 1e3}
	}
	return scale{"requests", 1}
}

// timeScale picks a unit for seconds since the run started (the idle
// baseline's start, or the load's without one) up to max.
func timeScale(max float64) scale {
	switch {
	case max >= 3*3600:
		return scale{"time since the run started (h)", 3600}
	case max >= 300:
		return scale{"time since the run started (min)", 60}
	}
	return scale{"time since the run started (s)", 1}
}

// byteScale picks a unit for bytes up to max, naming the quantity.
func byteScale(what string, max float64) scale {
	switch {
	case max >= 4<<30:
		return scale{what + " (GiB)", 1 << 30}
	case max >= 4<<20:
		return scale{what + " (MiB)", 1 << 20}
	case max >= 4<<10:
		return scale{what + " (KiB)", 1 << 10}
	}
	return scale{what + " (bytes)", 1}
}

// axes holds the x units of a run's charts and the positions of its phases
// and restarts on each x axis.
type axes struct {
	req, sec         scale
	baseSec          float64 // end of the idle baseline, 0 without one
	warmReq, warmSec float64 // end of the warm-up
	coolSec, endSec  float64 // start of the cool-down (-1: none), last sample
	restartsReq      []float64
	restartsSec      []float64
	soakStart        int // index of the first soak record, -1 if none
}

func newAxes(recs []model.Record) axes {
	a := axes{coolSec: -1, soakStart: -1}
	if len(recs) == 0 {
		a.req, a.sec = requestScale(0), timeScale(0)
		return a
	}
	last := recs[len(recs)-1]
	a.req, a.sec = requestScale(float64(last.Requests)), timeScale(last.Elapsed)
	a.endSec = a.sec.of(last.Elapsed)
	prevInc := 0
	for i, r := range recs {
		switch {
		case r.Phase == verdict.Baseline:
			a.baseSec = a.sec.of(r.Elapsed)
		case r.Phase == verdict.Warmup:
			a.warmReq, a.warmSec = a.req.of(float64(r.Requests)), a.sec.of(r.Elapsed)
		case r.Phase == verdict.Soak && a.soakStart < 0:
			a.soakStart = i
		case r.Phase == verdict.Cooldown && a.coolSec < 0:
			a.coolSec = a.sec.of(recs[max(i-1, 0)].Elapsed)
		}
		if r.Incarnation > 0 {
			if prevInc > 0 && r.Incarnation != prevInc {
				a.restartsReq = append(a.restartsReq, a.req.of(float64(r.Requests)))
				a.restartsSec = append(a.restartsSec, a.sec.of(r.Elapsed))
			}
			prevInc = r.Incarnation
		}
	}
	return a
}

// pick extracts one series: x from the record, y from the value function
// (ok false skips the record), both scaled; then decimates for display.
func pick(recs []model.Record, x func(model.Record) float64, y func(model.Record) (float64, bool)) plotter.XYs {
	out := make(plotter.XYs, 0, len(recs))
	for _, r := range recs {
		if v, ok := y(r); ok {
			out = append(out, plotter.XY{X: x(r), Y: v})
		}
	}
	return decimate(out, displayBuckets)
}

func (a axes) xReq(r model.Record) float64 { return a.req.of(float64(r.Requests)) }
func (a axes) xSec(r model.Record) float64 { return a.sec.of(r.Elapsed) }

// memSeries names one series of a record.
type memSeries struct {
	name  string
	value func(model.Record) (float64, bool)
}

// chartSeries returns the series of the resources (model.Resources) that
// the chart draws and the records hold a reading of, in the table's order.
// Readings of a dead target are left out.
func chartSeries(recs []model.Record, c model.Chart) []memSeries {
	var out []memSeries
	for _, res := range model.Resources {
		if res.Chart != c {
			continue
		}
		value := func(r model.Record) (float64, bool) {
			v, ok := res.Value(r)
			return v, ok && r.Alive
		}
		for _, r := range recs {
			if v, ok := value(r); ok && (v > 0 || c != model.ChartMemory) {
				out = append(out, memSeries{res.LabelOf(r), value})
				break
			}
		}
	}
	return out
}

// memorySeries are the memory chart's series.
func memorySeries(recs []model.Record) []memSeries { return chartSeries(recs, model.ChartMemory) }

func maxOf(recs []model.Record, f func(model.Record) (float64, bool)) float64 {
	var m float64
	for _, r := range recs {
		if v, ok := f(r); ok {
			m = max(m, v)
		}
	}
	return m
}

// cpuWindows is the number of windows the CPU rate is computed over, at
// most: CPU time is counted in 10 ms ticks, so per-sample rates are noise.
const cpuWindows = 150

// cpuRates returns the target's CPU use in cores, user and user+system, as
// Δcpu/Δt over windows of at least 1/cpuWindows of the run and 2 s, never
// across a restart, where the counters start again.
func cpuRates(recs []model.Record, a axes) (user, total plotter.XYs) {
	if len(recs) < 2 {
		return nil, nil
	}
	minWindow := max((recs[len(recs)-1].Elapsed-recs[0].Elapsed)/cpuWindows, 2)
	s := 0
	for i := 1; i < len(recs); i++ {
		if recs[i].Incarnation != recs[s].Incarnation {
			s = i
			continue
		}
		dt := recs[i].Elapsed - recs[s].Elapsed
		if dt <= 0 || dt < minWindow {
			continue
		}
		u := max(recs[i].CPUUser-recs[s].CPUUser, 0) / dt
		sy := max(recs[i].CPUSystem-recs[s].CPUSystem, 0) / dt
		x := a.sec.of((recs[i].Elapsed + recs[s].Elapsed) / 2)
		user = append(user, plotter.XY{X: x, Y: u})
		total = append(total, plotter.XY{X: x, Y: u + sy})
		s = i
	}
	return user, total
}

// requestRates returns the throughput in requests per second as
// Δrequests/Δt over windows of at least 1/cpuWindows of the run and 2 s,
// like cpuRates. The request count is soakd's own, so it never resets at a
// restart; a window spans neither the start of the load nor the start of
// the cool-down, so that both show as steps. The records' Rate is not used: it is
// the load's last completed interval, which the first samples precede.
func requestRates(recs []model.Record, a axes) plotter.XYs {
	if len(recs) < 2 {
		return nil
	}
	minWindow := max((recs[len(recs)-1].Elapsed-recs[0].Elapsed)/cpuWindows, 2)
	var out plotter.XYs
	emit := func(s, i int) {
		if dt := recs[i].Elapsed - recs[s].Elapsed; dt > 0 {
			dn := float64(recs[i].Requests - min(recs[s].Requests, recs[i].Requests))
			out = append(out, plotter.XY{X: a.sec.of((recs[i].Elapsed + recs[s].Elapsed) / 2), Y: dn / dt})
		}
	}
	s := 0
	for i := 1; i < len(recs); i++ {
		if idle(recs[i]) != idle(recs[i-1]) && s < i-1 {
			emit(s, i-1) // the last, maybe short, window of the phase
			s = i - 1
		}
		if recs[i].Elapsed-recs[s].Elapsed < minWindow {
			continue
		}
		emit(s, i)
		s = i
	}
	return decimate(out, displayBuckets)
}

// idle says whether a record is from a phase without load.
func idle(r model.Record) bool { return r.Phase == verdict.Baseline || r.Phase == verdict.Cooldown }
