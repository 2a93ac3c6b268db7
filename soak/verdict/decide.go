package verdict

import (
	"math"

	"github.com/soakd/soakd/soak/trend"
)

// floors are the per-request slopes above which growth is a leak, one for
// each way to be one (see Thresholds); a zero floor is not in force.
type floors struct {
	perRequest float64 // MinPerRequest
	horizon    float64 // adds HorizonGrowth over Horizon at the throughput
	limitShare float64 // adds HorizonLimitShare of the limit over Horizon
	exhaust    float64 // reaches the limit within Exhaustion
}

// floorsFor turns the thresholds into per-request slopes at rph requests
// an hour, for a resource now at current with limit (0 = none).
func floorsFor(th Thresholds, rph, limit, current float64) floors {
	fl := floors{perRequest: th.MinPerRequest}
	if rph <= 0 {
		return fl
	}
	horizonReq := rph * th.Horizon / 3600
	fl.horizon = th.HorizonGrowth / horizonReq
	if limit > 0 {
		fl.limitShare = th.HorizonLimitShare * limit / horizonReq
		fl.exhaust = math.Max(limit-current, 0) / (rph * th.Exhaustion / 3600)
	}
	return fl
}

// leak is the lowest floor in force: growth confidently above it is a leak.
func (fl floors) leak() float64 {
	v := fl.perRequest
	for _, f := range []float64{fl.horizon, fl.limitShare, fl.exhaust} {
		if f > 0 {
			v = math.Min(v, f)
		}
	}
	return v
}

// negligible: a fit's growth is too small to matter. Its interval lies
// under the per-request floor, and either includes zero (no growth shown)
// or has its estimate under every floor (growth shown, but slight). The
// horizon floor is not asked of the interval: at 50 000 req/s it is 0.016
// B/request, finer than one page over a short run resolves, so a series
// that never changed could never be stable. Growth that is shown and
// projects above the horizon floor is not negligible: it is a leak once
// its interval clears that floor, and inconclusive until then.
func (fl floors) negligible(lo, slope, hi float64) bool {
	return hi < fl.perRequest && (lo <= 0 || slope < fl.leak())
}

// decision is a verdict and why.
type decision struct {
	verdict string
	why     string  // the reason's tail, see reason
	more    float64 // extra requests that would settle an inconclusive one
	tail    *tail   // the growth after the knot, for plateau and slowing
	floor   float64 // the floor the last third must clear, for slow growth
	level   float64 // the level at the load's start, for transient
	seen    bool    // level is the process's when soakd first saw it
}

// tail is the fit after a shape's knot.
type tail struct{ lo, slope, hi float64 }

// Reasons a decision was taken.
const (
	whyLeak      = "leak"
	whyReleased  = "released"
	whyPlateau   = "plateau"
	whyFlat      = "flat"
	whyStep      = "step"
	whyStairs    = "stairs"
	whySlowing   = "slowing"
	whyNoisy     = "noisy"
	whyShort     = "short"
	whyUnsure    = "unsure-last-third"
	whySlow      = "slow-last-third"
	whyTransient = "transient"
)

// decide applies the rules in AnalyzeResource's doc comment.
func decide(f fit, th Thresholds, fl floors, rel *bool) decision {
	sig := f.significant(th.Alpha)
	clears := sig && f.whole.Lo > fl.leak()
	switch {
	case f.shape.kind == shapeDecel && f.grew(plateauAlpha) && f.end-f.start > th.MinTotal:
		return decideSlowing(f, th, fl, rel)
	case clears && f.fittedGrowth() <= th.MinTotal:
		more := th.MinTotal/f.whole.Slope - f.span
		return decision{verdict: Inconclusive, why: whyShort, more: more}
	case clears:
		return decideGrowth(f, th, fl, rel)
	case fl.negligible(f.whole.Lo, f.whole.Slope, f.whole.Hi):
		if f.shape.kind == shapeStep {
			return decision{verdict: Stable, why: whyStep}
		}
		return decision{verdict: Stable, why: whyFlat}
	}
	return decision{verdict: Inconclusive, why: whyNoisy, more: f.moreFor(fl, th)}
}

// plateauAlpha is the significance that growth before a knot needs for a
// plateau: the label raises no alarm, and the knot itself must already
// beat the line by strong evidence.
const plateauAlpha = 0.05

// decideGrowth judges growth that clears a floor by its shape.
func decideGrowth(f fit, th Thresholds, fl floors, rel *bool) decision {
	switch f.shape.kind {
	case shapeStep:
		t := f.stepless()
		switch {
		case fl.negligible(t.Lo, t.Slope, t.Hi):
			return decision{verdict: Stable, why: whyStep}
		case t.Lo <= fl.leak():
			return decision{verdict: Inconclusive, why: whyStep, more: f.moreFor(fl, th)}
		}
	case shapeStairs:
		return decision{verdict: Inconclusive, why: whyStairs, more: f.span}
	}
	if f.whole.Lo <= fl.perRequest && f.last.Slope-zLast*(f.last.Hi-f.last.Lo)/(2*z95) <= fl.leak() {
		// Slow growth, a leak only by what it would add over the
		// horizon: the extrapolation is long, so the last third must
		// clear the floor on its own (at 95 %, one-sided), or a curve
		// that is quietly levelling off would be projected as if it
		// never would.
		h := (f.last.Hi - f.last.Lo) / 2
		return decision{verdict: Inconclusive, why: whySlow, floor: fl.leak(),
			more: moreRequests(f.span, h/1.96, math.Abs(f.last.Slope-fl.leak()), th.Alpha)}
	}
	if f.flattened() {
		h := (f.last.Hi - f.last.Lo) / 2
		return decision{verdict: Inconclusive, why: whyUnsure, more: moreRequests(f.span, h/1.96, math.Abs(f.last.Slope-keepFraction*f.whole.Slope), th.Alpha)}
	}
	if rel != nil && *rel {
		return decision{verdict: Stable, why: whyReleased}
	}
	return decision{verdict: Leak, why: whyLeak}
}

// decideSlowing judges growth that decelerates: a plateau when what comes
// after the knot is negligible; a leak when the stretch after the knot is
// straight (no bend of its own, in its envelope or its bins' medians) and
// clears a floor on its own, which is a leak under a warm-up that outlasted
// the warm-up phase; inconclusive otherwise. A curve that keeps bending
// down may level off after the soak, and its slope extrapolated over the
// horizon would overstate it.
func decideSlowing(f fit, th Thresholds, fl floors, rel *bool) decision {
	t := f.sub(f.shape.at, len(f.b.X))
	tl := &tail{lo: t.Lo, slope: t.Slope, hi: t.Hi}
	if fl.negligible(t.Lo, t.Slope, t.Hi) {
		return decision{verdict: Plateau, why: whyPlateau, tail: tl}
	}
	span := f.b.X[len(f.b.X)-1] - f.b.X[f.shape.at]
	if slopeP(t) < th.Alpha && t.Lo > fl.leak() && t.Slope*span > th.MinTotal && !f.shape.curve && f.straightAfter(f.shape.at) {
		if rel != nil && *rel {
			return decision{verdict: Stable, why: whyReleased, tail: tl}
		}
		return decision{verdict: Leak, why: whyLeak, tail: tl}
	}
	more := moreRequests(span, (t.Hi-t.Lo)/2/1.96, math.Abs(t.Slope-fl.leak()), th.Alpha) + f.span - span
	return decision{verdict: Inconclusive, why: whySlowing, more: more, tail: tl}
}

// straightAfter: the envelope from point i on, and its bins' medians, show
// no bend of their own (curved), over at least a third of the soak's
// points.
func (f fit) straightAfter(i int) bool {
	m := len(f.b.X)
	if m-i < max(8, m/3) {
		return false
	}
	tail := func(b trend.Binned) trend.Binned {
		return trend.Binned{X: b.X[i:], Y: b.Y[i:], N: b.N[i:]}
	}
	if curved(tail(f.b)).kind == shapeDecel {
		return false
	}
	return f.levels == nil || len(f.levels.X) != m || curved(tail(*f.levels)).kind != shapeDecel
}

// stepless refits the envelope with the step taken out.
func (f fit) stepless() trend.Fit {
	y := make([]float64, len(f.b.Y))
	for i, v := range f.b.Y {
		y[i] = v
		if i >= f.shape.at {
			y[i] -= f.shape.size
		}
	}
	g := f
	g.b.Y = y
	return g.sub(0, len(y))
}

// moreFor is the power computation behind "run ≥ N more requests": the
// extra requests after which a slope as far from the nearest decision
// boundary as the estimate is would be decided with 80 % power.
func (f fit) moreFor(fl floors, th Thresholds) float64 {
	boundary := fl.leak()
	if f.whole.Slope < boundary {
		boundary = fl.perRequest
	}
	return moreRequests(f.span, f.halfWidth()/1.96, math.Abs(f.whole.Slope-boundary), th.Alpha)
}

// moreRequests: with se the standard error of a slope over span requests
// and d its distance from the boundary, a test at level alpha (one-sided)
// decides with power 80 % once se' = d/(z_α + z_0.8). At a fixed number
// of bins the slope's standard error falls as 1/span (the same noise over
// a longer lever; the autocorrelation between bins only falls with longer
// bins, so this errs long), so the span must grow by se/se'.
func moreRequests(span, se, d, alpha float64) float64 {
	if se <= 0 || d <= 0 || math.IsNaN(se) || math.IsNaN(d) {
		return span
	}
	need := d / (zUpper(alpha) + zPower)
	grow := se / need
	return span * math.Min(math.Max(grow-1, 0.1), 100)
}

// z95 is the two-sided 95 % normal quantile, zLast the one-sided 95 %.
const (
	z95   = 1.959963984540054
	zLast = 1.6448536269514722
)

// zPower is the normal quantile of 80 % power.
const zPower = 0.8416212335729143

// zUpper is the upper-tail normal quantile of p.
func zUpper(p float64) float64 { return math.Sqrt2 * math.Erfinv(1-2*p) }
