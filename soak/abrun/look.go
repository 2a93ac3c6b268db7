package abrun

import (
	"fmt"
	"math"

	"github.com/soakd/soakd/soak/compare"
)

// Judge is the sequential test over the looks of one run: every metric's
// confidence sequence, intersected over the looks, judged as soakd
// compare judges an interval (compare.Judge), and its verdict, kept once
// decided.
type Judge struct {
	margins compare.Margins
	names   map[string]string // how a reader sets each margin: compare.Options.MarginNames
	alpha   float64
	bounds  map[string][2]float64     // running intersection, on the test's scale
	decided map[string]compare.Metric // the decided metrics, as decided
	at      map[string]int            // the pairs at the look that decided each
}

// WithMarginNames sets how a reader sets each margin (by its key, as
// compare.Options.MarginNames): the result shows it beside each margin.
func (j *Judge) WithMarginNames(names map[string]string) *Judge {
	j.names = names
	return j
}

// NewJudge is a sequential judge with margins whose false-alarm rate,
// over all looks, is at most alpha/2 per metric: the chance that a
// metric whose truth is at its margin reads regressed at any look.
func NewJudge(m compare.Margins, alpha float64) *Judge {
	if !(alpha > 0 && alpha < 1) {
		alpha = DefaultAlpha
	}
	return &Judge{margins: m, alpha: alpha, bounds: map[string][2]float64{},
		decided: map[string]compare.Metric{}, at: map[string]int{}}
}

// DefaultAlpha is the two-sided error of each metric's confidence
// sequence: 1 % on each side.
const DefaultAlpha = 0.02

// Look judges every metric on the tally so far. A decided metric keeps
// its verdict.
//
// A latency, CPU per request or throughput that would read regressed or
// improved while the builds' contention differed or the machine was busy
// (compare.ContentionDeclines: A's and B's threads' waits for a core, per
// CPU second they ran) reads inconclusive, with the figures, and stays
// undecided: two processes of one build whose threads share cores with
// the load and other jobs differ by that, not by the build (identical
// builds whose threads waited 2.95 and 2.52 s per CPU second read CPU per
// request +22 %, throughput −23 %, regressed, in 9 s).
func (j *Judge) Look(t *Tally, pairs int) compare.Result {
	res := compare.Result{Metrics: map[string]compare.Metric{}, Columns: &Columns}
	c := t.Contention()
	for _, def := range defs {
		if m, ok := j.decided[def.name]; ok {
			res.Metrics[def.name] = m
			continue
		}
		m := j.look(def, estimateOf(def, t, j.margins))
		if why := compare.ContentionDeclines(c[A], c[B]); why != "" && compare.ContentionBound(def.name, m.Verdict) {
			m.Reason = fmt.Sprintf("%s, but %s (A's threads waited %.2f s for a core per CPU second they ran, B's %.2f s): the difference may be where each process ran, not the build; run it on a quieter machine",
				m.Verdict, why, c[A], c[B])
			m.Verdict = compare.Inconclusive
		}
		if m.Verdict != compare.Inconclusive {
			j.decided[def.name], j.at[def.name] = m, pairs
		}
		res.Metrics[def.name] = m
	}
	res.WithContention(c[A], c[B])
	res.Verdict = compare.Overall(res.Metrics)
	return res
}

// DecidedAt is the pairs at the look that decided each decided metric.
func (j *Judge) DecidedAt() map[string]int {
	out := make(map[string]int, len(j.at))
	for k, v := range j.at {
		out[k] = v
	}
	return out
}

// look narrows def's running interval by this look's and judges it.
func (j *Judge) look(def metricDef, e estimate) compare.Metric {
	hw := HalfWidth(e.se, tauOf[def.kind]*e.margin, j.alpha, e.nu)
	lo, hi := e.d-hw, e.d+hw
	// A slope's looks are not intersected: its warm-up share moves with
	// the requests, so each look estimates the slope after a later
	// warm-up, and an early look's interval would pin a warm-up's bias.
	// When the intersection is empty the looks disagree: the noise is not
	// what the test assumes, and the gap between two disagreeing ends
	// (which the test once took for the interval) proves nothing. The
	// hull of both stands, and the intersection starts again from it.
	if b, ok := j.bounds[def.name]; ok && def.kind != slope {
		if l, h := math.Max(lo, b[0]), math.Min(hi, b[1]); l <= h {
			lo, hi = l, h
		} else {
			lo, hi = math.Min(lo, b[0]), math.Max(hi, b[1])
		}
	}
	if !math.IsInf(hw, 1) {
		j.bounds[def.name] = [2]float64{lo, hi}
	}
	m := compare.Metric{Unit: def.unit, Old: e.a, New: e.b, Difference: e.d, CI95: [2]float64{lo, hi},
		Margin: e.margin0, MarginOf: e.marginOf, MarginBy: j.names[e.marginOf], Verdict: compare.Judge([2]float64{lo, hi}, e.margin), HigherIsBetter: def.better}
	switch {
	case def.kind == logRatio && def.better: // ln A/B back to B/A − 1
		m.Relative, m.Difference = true, math.Expm1(-e.d)
		m.CI95 = [2]float64{math.Expm1(-hi), math.Expm1(-lo)}
	case def.kind == logRatio:
		m.Relative, m.Difference = true, math.Expm1(e.d)
		m.CI95 = [2]float64{math.Expm1(lo), math.Expm1(hi)}
	}
	m.Reason = reason(m)
	if held := heldBack(m.Verdict, e); held != "" {
		m.Verdict, m.Reason = compare.Inconclusive, held
	}
	return m
}

// reason says what decided the metric, or what would.
func reason(m compare.Metric) string {
	if m.Verdict == compare.Inconclusive {
		return "the interval over every look is still wider than the margin allows: the run stopped before it narrowed (raise -n/-d)"
	}
	side := map[string]string{compare.Regressed: "above the margin", compare.Same: "inside ±margin",
		compare.Improved: "below −margin"}[m.Verdict]
	return fmt.Sprintf("the interval over every look lies %s", side)
}

// Decided tells whether the comparison can stop: its overall verdict is
// final (a metric regressed, or every metric is same or improved), and
// every resource slope is decided too. A leak is what a soak is for: a
// leaky build that also costs more CPU per request, decided first, would
// otherwise stop the run before its leak is shown.
func Decided(res compare.Result) bool {
	if res.Verdict == compare.Inconclusive || res.Verdict == "" {
		return false
	}
	for _, d := range defs {
		if m, ok := res.Metrics[d.name]; d.kind == slope && (!ok || m.Verdict == compare.Inconclusive) {
			return false
		}
	}
	return true
}

// tauOf is the mixing spread of each kind of metric, in margins: the
// confidence sequence is narrowest where the standard error is near it.
// Leaks that matter are several times the 16 B floor, so slopes mix
// wider; 4 margins took the median requests to decide a 120 B/request
// leak from 96 000 to 80 000 in simulation, at the same false-alarm rate
// (TestSimNoFalseAlarm).
var tauOf = map[kind]float64{slope: 4, logRatio: 2, diff: 2}

// heldBack says why a slope's regressed or improved must wait: the build
// that grew faster does not read a leak on its own fit, by the rules of
// `soakd run` (the floors, the shape, the transient rule). Two clean
// processes of one runtime size their heaps differently over their first
// requests (two Go processes of one build: 65 and 13 B/request over their
// first 20 000, a difference that held to the last third), a real
// difference in growth that is no leak in either; a slope difference
// counts once the faster build's growth is a leak that soakd run would
// name.
func heldBack(v string, e estimate) string {
	switch {
	case !e.gated:
		return ""
	case v == compare.Regressed && !e.bLeaks:
		return "B grew faster, but its own fit does not read a leak yet (warm-up growth differs between processes): waiting for B's verdict"
	case v == compare.Improved && !e.aLeaks:
		return "A grew faster, but its own fit does not read a leak yet (warm-up growth differs between processes): waiting for A's verdict"
	}
	return ""
}
