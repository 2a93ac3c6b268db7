package abrun

import (
	"math"
)

// Verdicts of a metric, and of the comparison: the worst of its metrics.
const (
	Regressed    = "regressed"
	Same         = "same"
	Improved     = "improved"
	Inconclusive = "inconclusive"
)

// Metric is one metric's comparison at a look.
type Metric struct {
	Name string `json:"-"`
	Unit string `json:"unit"`
	// A and B are the builds' values: slopes per request, or the mean
	// over A's and B's blocks.
	A float64 `json:"old"`
	B float64 `json:"new"`
	// Difference is B − A for slopes and the error rate, and B's value
	// relative to A's (0.12 = 12 % worse) for the others (Relative); CI95
	// is its running confidence sequence at 95 % over every look, and
	// Margin the difference within which B is the same.
	Difference float64    `json:"difference"`
	CI95       [2]float64 `json:"ci95"`
	Margin     float64    `json:"margin"`
	Relative   bool       `json:"relative,omitempty"`
	Verdict    string     `json:"verdict"`
	// DecidedAt is the pair count at the look that decided it; 0 while
	// undecided.
	DecidedAt int `json:"decided_at_pairs,omitempty"`
}

// Judge is the sequential test over the looks of one run: every metric's
// confidence sequence, intersected over the looks, and its verdict, kept
// once decided.
type Judge struct {
	margins Margins
	alpha   float64
	bounds  map[string][2]float64 // running intersection, on the test's scale
	metrics map[string]Metric     // the decided metrics, as decided
}

// NewJudge is a sequential judge with margins (zero fields take
// DefaultMargins) whose false-alarm rate, over all looks, is at most
// alpha per metric and direction: a regression is claimed with
// probability at most alpha/2 when the truth is at the margin.
func NewJudge(m Margins, alpha float64) *Judge {
	if !(alpha > 0 && alpha < 1) {
		alpha = DefaultAlpha
	}
	return &Judge{margins: m.withDefaults(), alpha: alpha,
		bounds: map[string][2]float64{}, metrics: map[string]Metric{}}
}

// DefaultAlpha is the two-sided error of each metric's confidence
// sequence: 1 % on each side.
const DefaultAlpha = 0.02

// Look judges every metric on the tally so far and returns them in report
// order. A decided metric keeps its verdict.
func (j *Judge) Look(t *Tally, pairs int) []Metric {
	out := make([]Metric, 0, len(defs))
	for _, def := range defs {
		if m, ok := j.metrics[def.name]; ok {
			out = append(out, m)
			continue
		}
		m := j.look(def, estimateOf(def, t, j.margins), pairs)
		if m.Verdict != Inconclusive {
			j.metrics[def.name] = m
		}
		out = append(out, m)
	}
	return out
}

// look narrows def's running interval by this look's and judges it.
func (j *Judge) look(def metricDef, e estimate, pairs int) Metric {
	hw := HalfWidth(e.se, tauOf[def.kind]*e.margin, j.alpha, e.nu)
	lo, hi := e.d-hw, e.d+hw
	if b, ok := j.bounds[def.name]; ok {
		lo, hi = math.Max(lo, b[0]), math.Min(hi, b[1])
	}
	if lo > hi { // the looks disagree: the noise is not what the test assumes
		lo, hi = math.Min(lo, hi), math.Max(lo, hi)
	}
	if !math.IsInf(hw, 1) {
		j.bounds[def.name] = [2]float64{lo, hi}
	}
	m := Metric{Name: def.name, Unit: def.unit, A: e.a, B: e.b, Difference: e.d,
		CI95: [2]float64{lo, hi}, Margin: e.margin, Verdict: judge(lo, hi, e.margin)}
	if m.Verdict != Inconclusive {
		m.DecidedAt = pairs
	}
	if def.kind == logRatio {
		m.Relative = true
		m.Difference, m.Margin = math.Expm1(e.d), math.Expm1(e.margin)
		m.CI95 = [2]float64{math.Expm1(lo), math.Expm1(hi)}
	}
	if def.better { // back to the metric's own direction: B over A
		m.Difference, m.CI95 = 1/(1+m.Difference)-1, [2]float64{1/(1+m.CI95[1]) - 1, 1/(1+m.CI95[0]) - 1}
		m.Margin = 1/(1+m.Margin) - 1
	}
	return m
}

// judge reads an interval of a difference oriented worse-is-positive
// against its margin: regressed when it lies wholly above the margin,
// improved when wholly below minus the margin, same when wholly inside
// it (an equivalence test), else inconclusive.
func judge(lo, hi, margin float64) string {
	switch {
	case math.IsInf(lo, 0) || math.IsInf(hi, 0) || math.IsNaN(lo) || math.IsNaN(hi):
		return Inconclusive
	case lo > margin:
		return Regressed
	case hi < -margin:
		return Improved
	case lo > -margin && hi < margin:
		return Same
	}
	return Inconclusive
}

// Overall is the worst verdict of ms: regressed, then inconclusive, then
// same, then improved (when every metric improved).
func Overall(ms []Metric) string {
	worst := Improved
	rank := map[string]int{Improved: 0, Same: 1, Inconclusive: 2, Regressed: 3}
	for _, m := range ms {
		if rank[m.Verdict] > rank[worst] {
			worst = m.Verdict
		}
	}
	return worst
}

// Decided tells whether the comparison can stop: its overall verdict is
// final (a metric regressed, or every metric is same or improved), and
// every resource slope is decided too. A leak is what a soak is for: a
// leaky build that also costs more CPU per request, decided first, would
// otherwise stop the run before its leak is shown.
func Decided(ms []Metric) bool {
	if Overall(ms) == Inconclusive {
		return false
	}
	for _, m := range ms {
		if m.Verdict == Inconclusive && kindOf(m.Name) == slope {
			return false
		}
	}
	return true
}

// kindOf is the kind of the metric named name.
func kindOf(name string) kind {
	for _, d := range defs {
		if d.name == name {
			return d.kind
		}
	}
	return diff
}

// tauOf is the mixing spread of each kind of metric, in margins: the
// confidence sequence is narrowest where the standard error is near it.
// Leaks that matter are several times the 16 B floor, so slopes mix
// wider; 4 margins took the median requests to decide a 120 B/request
// leak from 96 000 to 80 000 in simulation, at the same false-alarm rate
// (TestSimNoFalseAlarm).
var tauOf = map[kind]float64{slope: 4, logRatio: 2, diff: 2}
