package verdict

import (
	"math"
	"sort"

	"github.com/soakd/soakd/soak/trend"
)

// knot is where a soak's growth may have begun late (riseKnot): the
// envelope's index, the continuous two-segment fit's slopes either side
// of it, its evidence over the line, and the wander read about it.
type knot struct {
	at            int
	before, after float64
	dBIC          float64              // the hinge's BIC margin over the line, on the effective points
	ss            float64              // the hinge's residual sum of squares
	resid         []float64            // the hinge's residuals
	post          trend.NoisePosterior // the wander read about the hinge (fitSeries)
}

// riseFactor: a late start's slope after its knot is over this many
// times the one before (and over zero).
const riseFactor = 2

// lateEvidence is the hinge's least BIC margin over the line, on the
// effective number of points, for its knot to be tried as a late start:
// the hinge beats the line by only 2–8 on 3–14 effective points in most
// soaks with a leak 3× the floor from mid-run, so the other shapes'
// margin (shapeEvidence) would rarely try it.
const lateEvidence = 2

// lateWiden stretches the interval of the stretch after a late start's
// knot about its estimate before it must clear the floor: the knot is
// chosen where the soak rises most, and the stretch's own interval,
// with the wander read about the hinge, is too narrow for it. Chosen by
// measurement (docs/verdict-study.md, "A leak that starts late, found
// and named"): each null run's largest stretch that would still have
// called it a leak, over the 0.9× designs of 2 h (1 000 runs each),
// the trendless kinds, the slowing designs' caches, the 30-minute
// designs of item 8 and the trendless series of FlatStable. From 1.9
// up none adds a false leak past a bar (at 2: one at 0.9× the floor,
// 1 000 req/s, 8 → 9 of 1 000, and steps-3 0 → 1 of 300); at 1.85 the
// design with two gaps at 1 000 req/s reads 11 of 1 000. From 2.5 to 2
// a leak 3× the floor from mid-run is found in 98 / 88 of 200 instead
// of 72 / 61 (100 / 1 000 req/s).
const lateWiden = 2.0

// lateWidenLook is lateWiden in a running soak's live looks
// (Thresholds.Look): hundreds of looks a night each choose the knot
// again on a soak part-way. At 2 the daemon's live study
// (TestStudyLiveLooks, 100 stable 8 h runs of AR(1) wander, a look a
// minute) fired on 2 runs, past its bar of 1; at 2.5 on 1, as before.
const lateWidenLook = 2.5

// riseKnot finds where growth may have begun late: the best continuous
// two-segment line (trend.Hinge), its slope rising to over riseFactor
// times the one before and over zero, that beats the line by
// lateEvidence on the effective number of points (the lag-1
// autocorrelation of its own residuals). It needs 2·minLast points.
func riseKnot(b trend.Binned) (knot, bool) {
	m := len(b.X)
	if m < 2*minLast {
		return knot{}, false
	}
	h, ok := trend.Hinge(b.X, b.Y)
	if !ok || h.After <= 0 || h.After <= riseFactor*h.Before {
		return knot{}, false
	}
	r := trend.Lag1(h.Resid)
	me := math.Max(3, float64(m)*(1-r)/(1+r))
	d := evidence(trend.LinearSS(b.X, b.Y), h.SS, 2, me)
	if d < lateEvidence {
		return knot{}, false
	}
	return knot{at: h.Index, before: h.Before, after: h.After, dBIC: d, ss: h.SS, resid: h.Resid}, true
}

// yields: a shape gives way to a late start's knot k, whose stretch may
// then decide (decideLate): a line always; a staircase when it is not
// steps (smooth, see stairsOverHinge); a step when the hinge fits better
// (a ramp that began late is fitted a little by a step and a slope, and
// better by the hinge; a step, better by itself).
func (s shape) yields(k knot) bool {
	switch s.kind {
	case shapeLine:
		return true
	case shapeStairs:
		return s.smooth
	case shapeStep:
		return k.ss < sumSquares(s.resid)
	}
	return false
}

// decideLate: growth that began late is a leak when the stretch after
// its knot (fit.rise) decides a leak on its own, with the wander read
// about the hinge: at least minLast points; the soak not falling before
// the knot faster than the lowest floor in force (a dip and its
// recovery are not a late start: over 30 minutes of 5-minute wander
// most false late starts were one); the stretch's interval, stretched
// by lateWiden (lateWidenLook in a live look), significant at Alpha, over that floor and, over the
// stretch, over the total-growth floor; and each half of the stretch
// growing (one-sided 95 %).
func decideLate(f fit, th Thresholds, fl floors) (decision, bool) {
	k := f.rise
	n := len(f.b.X)
	if k == nil || n-k.at < minLast || k.before <= -fl.leak() {
		return decision{}, false
	}
	f.post = k.post
	t := f.sub(k.at, n)
	w := lateWiden
	if th.Look {
		w = lateWidenLook
	}
	t.Lo, t.Hi = t.Slope-w*(t.Slope-t.Lo), t.Slope+w*(t.Hi-t.Slope)
	span := f.b.X[n-1] - f.b.X[k.at]
	if slopeP(t) >= th.Alpha || t.Lo <= fl.leak() || t.Lo*span <= th.MinTotal {
		return decision{}, false
	}
	x := f.b.X[k.at:]
	m := k.at + sort.SearchFloat64s(x, x[0]+(x[len(x)-1]-x[0])/2)
	m = min(max(m, k.at+2), n-3)
	if oneSidedLo(f.sub(k.at, m+1)) <= 0 || oneSidedLo(f.sub(m, n)) <= 0 {
		return decision{}, false
	}
	return decision{verdict: Leak, why: whyLate, tail: &tail{lo: t.Lo, slope: t.Slope, hi: t.Hi},
		before: f.sub(0, k.at+1).Slope, at: k.at, dBIC: k.dBIC}, true
}

// lateInstead is decideLate's leak in place of the whole soak's
// decision d, unless the cool-down released the growth; over a decision
// that is already a leak only when the hinge beats the line by strong
// evidence (shapeEvidence), so that a leak from the start keeps its
// whole soak's rate.
func lateInstead(f fit, d decision, th Thresholds, fl floors, rel *bool) (decision, bool) {
	if f.rise == nil || d.why == whyReleased || rel != nil && *rel {
		return decision{}, false
	}
	l, ok := decideLate(f, th, fl)
	if !ok || d.verdict == Leak && l.dBIC < shapeEvidence {
		return decision{}, false
	}
	return l, true
}
