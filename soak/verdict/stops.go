package verdict

import (
	"math"

	"github.com/soakd/soakd/soak/trend"
)

// goesOnOverStop weighs what a slowing soak's envelope shows against
// what stillLeaking projects (issue 41, item 3, "slowing is not
// stopping"): the hinge, growth that slowed once and then went on in a
// straight line, against the best curve that slows and stops, a cache
// that fills or a creep that slows without end (trend.Saturation), held
// to add no more than the lowest floor in force allows over the horizon
// after the soak. Its dBIC is the hinge's evidence by the Bayesian
// information criterion, one parameter more (the knot against τ or p),
// on the effective number of points m·(1−ρ)/(1+ρ) with ρ the lag-1
// autocorrelation of the better fit's residuals, as classify weighs its
// shapes. −∞ when there is no horizon floor or too few points.
func (f fit) goesOnOverStop(fl floors) stopFit {
	none := stopFit{dBIC: math.Inf(-1)}
	if fl.horizon <= 0 || len(f.b.X) < 8 {
		return none
	}
	x, y := f.b.X, f.b.Y
	h, ok := trend.Hinge(x, y)
	if !ok || h.After <= 0 {
		return none
	}
	hz := math.Min(f.horizonRequests(fl), maxProjection*f.span)
	s, ok := trend.Saturation(x, y, hz, fl.leak()*hz)
	if !ok {
		return none
	}
	r := h.Resid
	if s.SS < h.SS {
		r = s.Resid
	}
	rho := trend.Lag1(r)
	me := math.Max(3, float64(len(x))*(1-rho)/(1+rho))
	return stopFit{dBIC: evidence(s.SS, h.SS, 1, me), me: me}
}

// stopFit is goesOnOverStop's evidence and the effective points it was
// weighed on.
type stopFit struct{ dBIC, me float64 }

// stopMargin is the evidence for the hinge over every curve that stops
// under the floor that lets a slowing soak be a leak when stillLeaking's
// projection does not. Chosen by measurement (docs/verdict-study.md,
// "Slowing is not stopping"): over seeds 1–5 of the study's 19 kinds
// with no leak (28 500 series), the curves that stop read at most 6.4
// (saturating-1-2; 0 and 3.3 on seed 1), and 8 leaves none; the issue's
// 40 → 20 B/request at mid-run is then found in 156 of 200 runs (76
// before; 175 at a margin of 4, 134 at 10).
const stopMargin = 8
