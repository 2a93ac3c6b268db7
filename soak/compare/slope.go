package compare

import (
	"fmt"
	"math"
)

// SlopeDifference is new − old per-request slope with its 95 % interval.
// Each run's interval is backed out into a standard error on each side
// (an interval may be asymmetric: a leak's is widened to span its second
// half's), and the two independent errors combine in quadrature: the
// difference's lower side takes the new run's lower error and the old
// run's upper one, and the other way round.
func SlopeDifference(old, cur Slope) (d float64, ci [2]float64) {
	return slopeDifference(old, cur, z95)
}

// slopeDifference is SlopeDifference with the interval at quantile z.
func slopeDifference(old, cur Slope, z float64) (d float64, ci [2]float64) {
	oLo, oHi := sides(old)
	nLo, nHi := sides(cur)
	d = cur.PerRequest - old.PerRequest
	return d, [2]float64{d - z*math.Hypot(nLo, oHi), d + z*math.Hypot(nHi, oLo)}
}

// sides are the standard errors below and above a slope, from its 95 %
// interval.
func sides(s Slope) (lo, hi float64) {
	return math.Max(s.PerRequest-s.CI95[0], 0) / z95, math.Max(s.CI95[1]-s.PerRequest, 0) / z95
}

// SlopeMargin is the growth difference that matters for a resource of
// unit whose old slope is old: the floor for its unit, or LeakShare of
// the old slope when larger.
func (m Margins) SlopeMargin(unit string, old float64) float64 {
	v, _ := m.SlopeMarginOf(unit, old)
	return v
}

// SlopeMarginOf is SlopeMargin and the key of the margin that set it.
func (m Margins) SlopeMarginOf(unit string, old float64) (float64, string) {
	floor, key := m.LeakCount, MarginLeakCount
	if unit == "bytes" {
		floor, key = m.LeakBytes, MarginLeakBytes
	}
	if share := m.LeakShare * math.Abs(old); share > floor {
		return share, MarginLeakShare
	}
	return floor, key
}

// CompareSlopes judges a resource's new per-request slope against its old
// one, on the runs' own intervals.
func CompareSlopes(old, cur Slope, m Margins) Metric {
	return compareSlopes(old, cur, nil, nil, m)
}

// compareSlopes judges a resource's slopes, with the runs' readings po
// and pn when both are at hand. Then two intervals are made, each at
// 97.5 %: the difference of the runs' own fits (SlopeDifference) and the
// paired fit (PairedSlope); the narrower is the metric's, and by
// Bonferroni's inequality it misses the truth at most 2.5 + 2.5 = 5 % of
// the time. Between independent runs the runs' own fits are usually the
// narrower (each sees through its GC sawtooth by its lower envelope);
// where the runs share their noise by position in the soak, the paired
// fit is, and a run compared with itself has a paired interval of
// [0, 0].
func compareSlopes(old, cur Slope, po, pn []Point, m Margins) Metric {
	d, ci := SlopeDifference(old, cur)
	how := ""
	if pd, pci, ok := PairedSlope(po, pn); ok {
		d, ci = slopeDifference(old, cur, z975)
		how = "each run's own fit, at 97.5 %, narrower than the paired fit's"
		if pci[1]-pci[0] < ci[1]-ci[0] {
			d, ci, how = pd, pci, "the runs' readings paired by their share of the soak, at 97.5 %, narrower than the runs' own fits'"
		}
	}
	margin, key := m.SlopeMarginOf(old.Unit, old.PerRequest)
	mt := Metric{Unit: old.Unit + "/request", Old: old.PerRequest, New: cur.PerRequest, Difference: d, CI95: ci,
		Margin: margin, MarginOf: key, Slow: old.Slow || cur.Slow, slope: true}
	if old.Series != cur.Series {
		mt.Verdict, mt.Reason = Inconclusive, fmt.Sprintf("the runs fitted different series (%s, then %s): a newer soakd judges this resource on a part of the reading; compare runs made by the same soakd", old.Series, cur.Series)
		return mt
	}
	if !finite(old.PerRequest, cur.PerRequest, old.CI95[0], old.CI95[1], cur.CI95[0], cur.CI95[1]) {
		mt.Verdict, mt.Reason = Inconclusive, "a run has no fitted slope for this resource (too few samples)"
		return mt
	}
	mt.Verdict = Judge(ci, mt.Margin)
	mt.Reason = slopeReason(mt)
	if how != "" {
		mt.Reason += " (the interval: " + how + ")"
	}
	return mt
}

func slopeReason(m Metric) string {
	switch m.Verdict {
	case Regressed:
		return fmt.Sprintf("grows faster by more than the margin (%.4g %s): the interval's lower end is %.4g", m.Margin, m.Unit, m.CI95[0])
	case Same:
		return fmt.Sprintf("the interval lies within ±%.4g %s", m.Margin, m.Unit)
	case Improved:
		return fmt.Sprintf("grows slower by more than the margin (%.4g %s): the interval's upper end is %.4g", m.Margin, m.Unit, m.CI95[1])
	}
	return fmt.Sprintf("the interval [%.4g, %.4g] is wider than the margin ±%.4g %s allows to decide: run both longer",
		m.CI95[0], m.CI95[1], m.Margin, m.Unit)
}

func finite(vs ...float64) bool {
	for _, v := range vs {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}
