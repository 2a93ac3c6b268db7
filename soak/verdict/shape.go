package verdict

import (
	"math"

	"github.com/soakd/soakd/soak/trend"
)

// shapeKind is what a soak's envelope looks like beyond a straight line.
type shapeKind int

const (
	shapeLine   shapeKind = iota // a straight line explains it as well as anything
	shapeDecel                   // growth that slows: a cache filling, allocator warm-up
	shapeStep                    // one jump: a one-off allocation
	shapeStairs                  // two or more climbing steps: retention in chunks
)

// shape is the best description of an envelope, and how strongly the data
// prefer it to a line.
type shape struct {
	kind   shapeKind
	at     int       // the knot (decel) or the first point after the step (step)
	steps  int       // climbing steps (stairs)
	size   float64   // the step's size (step), the staircase's rise (stairs)
	slope  float64   // the slope beside the step (step)
	dBIC   float64   // evidence against the line; ≥ shapeEvidence to be chosen
	resid  []float64 // the shape's residuals; nil for the line
	curve  bool      // a decel found by the quadratic's bend, not a hinge
	starts []int     // stairs: the first point of each level after the first
	means  []float64 // stairs: each level
	smooth bool      // stairs: not steps but growth whose rate changes (stairsOverHinge fails)
}

// shapeEvidence is the BIC difference that counts as strong evidence for a
// shape over the line (Kass and Raftery 1995: above 10 is "very strong").
const shapeEvidence = 10

// classify weighs the line against a hinge (a slope that changes once), a
// line with one step, and piecewise-constant levels with two or three
// steps, by the Bayesian information criterion. Autocorrelated residuals
// carry less information than their count, so the comparison uses the
// effective number of points m·(1−ρ)/(1+ρ), with ρ the lag-1
// autocorrelation of the residuals of the candidate with the lowest plain
// BIC: about the line, a misfit shape would read as correlation, and each
// candidate's own ρ would favour whichever leaves zig-zag residuals. A
// shape is chosen only when it beats the line by shapeEvidence; a hinge
// counts only when the slope falls to under half (deceleration: a slope
// that rises is a leak that started late, which riseKnot and decideLate
// weigh apart), and a staircase only when every level is above the one
// before; a staircase that is not steps (stairsOverHinge) is kept, and
// so is its verdict, but it is marked smooth and not described as steps.
//
// A quadratic that bends down significantly (curved) competes with them
// on the same BIC, whatever its margin over the line: when it was only a
// fallback, a step and a line fitted the bend a little better than the
// line alone and the line after the step was called a leak (saturating
// growth with a time constant of 1–2 soaks, seed 1: 3.3 % leak, 2.7 %
// once the bend competes). The bend is tested on the envelope and, when
// it shows none, on the bins' medians (levels), which vary about a third
// as much under white noise: that took the same model to 1.0 % (seed 2:
// 4.0 % to 1.0 %) and √-creep from 0.7–1.0 % to 0–0.3 %, and no leak model
// lost detection (300 series per seed).
func classify(b trend.Binned, levels *trend.Binned) shape {
	m := len(b.X)
	if m < 8 {
		return shape{kind: shapeLine}
	}
	lin := trend.LinearSS(b.X, b.Y)
	if lin <= 0 {
		return shape{kind: shapeLine}
	}
	type cand struct {
		s     shape
		ss    float64
		extra int
	}
	var cs []cand
	h, hok := trend.Hinge(b.X, b.Y)
	if hok && h.Before > 0 && h.After < keepFraction*h.Before && robustlySlower(b, h.Index) {
		cs = append(cs, cand{shape{kind: shapeDecel, at: h.Index, resid: h.Resid}, h.SS, 2})
	}
	if st, ok := trend.StepLine(b.X, b.Y); ok && st.Size > 0 {
		cs = append(cs, cand{shape{kind: shapeStep, at: st.Index, size: st.Size, slope: st.Slope, resid: st.Resid}, st.SS, 2})
	}
	for _, lv := range trend.Staircase(b.Y, 4)[2:] {
		if climbing(lv.Means) {
			s := shape{kind: shapeStairs, steps: len(lv.Starts), size: lv.Means[len(lv.Means)-1] - lv.Means[0], resid: lv.Resid, starts: lv.Starts, means: lv.Means}
			cs = append(cs, cand{s, lv.SS, 2*len(lv.Means) - 3})
		}
	}
	// A significant bend competes too, and on the same footing: a step
	// and a line can mimic a curve that bends smoothly, and the step's
	// line would then carry on as if the growth never slowed.
	cv := curved(b)
	if cv.kind != shapeDecel && levels != nil {
		cv = curved(*levels)
		cv.resid = nil
		if cv.kind == shapeDecel {
			cv.resid = curvedResid(b)
		}
	}
	if cv.kind == shapeDecel {
		cs = append(cs, cand{cv, sumSquares(cv.resid), 1})
	}
	if len(cs) == 0 {
		return shape{kind: shapeLine}
	}
	plain := func(c cand) float64 { return evidence(lin, c.ss, c.extra, float64(m)) }
	top := cs[0]
	for _, c := range cs[1:] {
		if plain(c) > plain(top) {
			top = c
		}
	}
	r := trend.Lag1(top.s.resid)
	me := math.Max(3, float64(m)*(1-r)/(1+r))
	best := shape{kind: shapeLine}
	for _, c := range cs {
		d := evidence(lin, c.ss, c.extra, me)
		// The bend has passed its own test (curved); the others need
		// strong evidence over the line.
		if c.s.kind == shapeStairs {
			c.s.smooth = hok && !stairsOverHinge(b, c.s, c.ss, h, me)
		}
		if (d >= shapeEvidence || c.s.curve) && (best.kind == shapeLine || d > best.dBIC) {
			best = c.s
			best.dBIC = d
		}
	}
	return best
}

func sumSquares(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x * x
	}
	return s
}

// curved is shapeDecel when the least-squares quadratic bends down
// significantly (one-sided, level curveAlpha, its variance inflated for
// the autocorrelation of its own residuals) and by more than mildBend,
// with the knot in the middle; else the line. A quadratic has more power against smooth saturation than the
// hinge, which wants a corner.
func curved(b trend.Binned) shape {
	cf, z, ok := curvature(b)
	if !ok || cf.C >= 0 || z > -zCurve {
		return shape{kind: shapeLine}
	}
	m := len(b.X)
	early, late := cf.SlopeAt(b.X[m/4]), cf.SlopeAt(b.X[3*m/4])
	if early <= 0 || late >= mildBend*early {
		return shape{kind: shapeLine}
	}
	return shape{kind: shapeDecel, at: len(b.X) / 2, resid: cf.Resid, curve: true}
}

// curvature fits the least-squares quadratic through b and gives its
// curvature's z: the coefficient over its standard error, the variance
// inflated for the autocorrelation of the quadratic's own residuals
// (negative: bending down); ok is false when no quadratic fits.
func curvature(b trend.Binned) (trend.CurveFit, float64, bool) {
	cf, ok := trend.Curvature(b.X, b.Y)
	if !ok || cf.SE <= 0 {
		return cf, 0, false
	}
	vif := trend.VarianceInflation(cf.U, trend.Lag1(cf.Resid))
	return cf, cf.C / (cf.SE * math.Sqrt(vif)), true
}

// bendZ is curvature's z alone.
func bendZ(b trend.Binned) (float64, bool) {
	_, z, ok := curvature(b)
	return z, ok
}

// mildBend: a quadratic whose slope at three quarters of the soak keeps
// this share of its slope at one quarter bends too little to call the
// growth slowing. Wander on top of a leak bends the fit a little, and a
// cache that fills with a time constant of the soak or less bends it by
// more (e^(−1/2) ≈ 0.61 at one soak).
const mildBend = 0.85

// zCurve is the one-sided normal quantile of curveAlpha = 1 %: a linear
// leak is taken for slowing growth once in a hundred.
const zCurve = 2.3263478740408408

// evidence is the BIC difference of an alternative with extra more
// parameters over the line, on me effective points.
func evidence(lin, alt float64, extra int, me float64) float64 {
	alt = math.Max(alt, lin*1e-12)
	return me*math.Log(lin/alt) - float64(extra)*math.Log(me)
}

func climbing(levels []float64) bool {
	for i := 1; i < len(levels); i++ {
		if levels[i] <= levels[i-1] {
			return false
		}
	}
	return true
}

// curvedResid is the residuals of the least-squares quadratic through b.
func curvedResid(b trend.Binned) []float64 {
	cf, ok := trend.Curvature(b.X, b.Y)
	if !ok {
		return nil
	}
	return cf.Resid
}

// robustlySlower: the Theil–Sen slope after the knot at i is also under
// keepFraction of the one before it. The hinge is a least-squares fit,
// and a few stray points at the end (connections closing as the load
// stops take a dozen fds with them) can bend it where the series itself
// never slowed.
func robustlySlower(b trend.Binned, i int) bool {
	before, after := trend.TheilSen(b.X[:i+1], b.Y[:i+1]), trend.TheilSen(b.X[i:], b.Y[i:])
	return before.Pairs > 0 && after.Pairs > 0 && after.Slope < keepFraction*before.Slope
}

// stairsOverHinge: a staircase is steps, not a smooth change of rate
// (issue 41, item 2: a leak that began at mid-run read "climbed 29.3 MiB
// in 3 steps"),
// only when it beats the best continuous two-segment line (h, whichever
// way its slope turns) by shapeEvidence on the me effective points, and
// its steps are sharp: at each, the mean of the two points after the
// step less that of the two before is at least sharpStep of the rise
// between the levels. A ramp cut into levels rises within them, and
// across a step only by its share of the ramp; a step rises where it is.
func stairsOverHinge(b trend.Binned, st shape, ss float64, h trend.HingeFit, me float64) bool {
	if evidence(h.SS, ss, 2*len(st.means)-5, me) < shapeEvidence {
		return false
	}
	wander := sharpSpread(h.Resid)
	for k, i := range st.starts {
		if i < 2 || i+2 > len(b.Y) {
			continue
		}
		jump := twoAcross(b.Y, i)
		if jump < sharpStep*(st.means[k+1]-st.means[k]) || jump < zSharp*wander {
			return false
		}
	}
	return true
}

// twoAcross is the mean of y's two points from i on less that of the
// two before i.
func twoAcross(y []float64, i int) float64 {
	return (y[i]+y[i+1])/2 - (y[i-2]+y[i-1])/2
}

// sharpSpread is the robust spread (1.4826 × the median absolute
// deviation) of twoAcross over the residuals r about the hinge: how far
// the wander alone moves the envelope across a step.
func sharpSpread(r []float64) float64 {
	var d []float64
	for i := 2; i+2 <= len(r); i++ {
		d = append(d, twoAcross(r, i))
	}
	if len(d) == 0 {
		return 0
	}
	m := trend.Median(d)
	for i := range d {
		d[i] = math.Abs(d[i] - m)
	}
	return 1.4826 * trend.Median(d)
}

// zSharp: a step is sharp when it rises across its two points either
// side by more than this many of the wander's spreads there
// (sharpSpread), about a one-sided 0.1 % chance.
const zSharp = 3

// sharpStep is the share of a level's rise that its step must show
// across the two points either side (stairsOverHinge).
const sharpStep = 0.5
