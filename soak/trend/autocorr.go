package trend

import "math"

// Autocorrelation: a resource sampled every second wanders (page cache,
// arena churn, a heap between GCs), and its neighbours are alike. Sen's
// interval and the Mann–Kendall variance assume independent points, so on
// such a series they are too narrow and the test fires on trendless
// wander. The correction here models the residuals of the fit as AR(1)
// and inflates Var(S) by the exact variance ratio of a slope estimated
// over this design under AR(1) errors (see VarianceInflation).

// Residuals returns y − (intercept + slope·x).
func Residuals(x, y []float64, f Fit) []float64 {
	r := make([]float64, min(len(x), len(y)))
	for i := range r {
		r[i] = y[i] - f.At(x[i])
	}
	return r
}

// Lag1 is the lag-1 autocorrelation of r about its mean, corrected for the
// small-sample bias of a residual series: an estimate from n residuals of a
// fitted line falls short of the truth by about (1+4ρ)/n (Kendall 1954's
// (1+3ρ)/n for a fitted mean, one more for the slope). The result is
// clamped to [0, maxRho]: a negative correlation would narrow the
// interval, and a stronger one than maxRho leaves too few independent
// points to say anything.
func Lag1(r []float64) float64 {
	n := len(r)
	if n < 4 {
		return 0
	}
	var m float64
	for _, v := range r {
		m += v
	}
	m /= float64(n)
	var num, den float64
	for i, v := range r {
		d := v - m
		den += d * d
		if i > 0 {
			num += d * (r[i-1] - m)
		}
	}
	if den == 0 {
		return 0
	}
	rho := num / den
	rho += (1 + 4*rho) / float64(n)
	return math.Min(math.Max(rho, 0), maxRho)
}

// maxRho bounds the AR(1) coefficient the correction believes.
const maxRho = 0.98

// VarianceInflation is the factor by which AR(1) errors with coefficient
// rho (between neighbouring points of x, taken as equally spaced in time)
// multiply the variance of a least-squares slope over x, against
// independent errors: Σᵢⱼ cᵢcⱼρ^|i−j| / Σᵢcᵢ² with cᵢ = xᵢ − x̄. It is
// exact for the design, so a short window (where the large-sample
// (1+ρ)/(1−ρ) overstates it) gets its true factor; it is 1 for rho ≤ 0.
// It runs in O(n) by summing ρ^|i−j|·cⱼ forwards and backwards.
func VarianceInflation(x []float64, rho float64) float64 {
	n := len(x)
	if n < 3 || rho <= 0 {
		return 1
	}
	var mx float64
	for _, v := range x {
		mx += v
	}
	mx /= float64(n)
	c := make([]float64, n)
	for i, v := range x {
		c[i] = v - mx
	}
	fwd := make([]float64, n) // Σ_{j≤i} ρ^(i−j) cⱼ
	for i := range c {
		fwd[i] = c[i]
		if i > 0 {
			fwd[i] += rho * fwd[i-1]
		}
	}
	var num, den, bwd float64 // bwd: Σ_{j≥i} ρ^(j−i) cⱼ
	for i := n - 1; i >= 0; i-- {
		bwd = c[i] + rho*bwd
		num += c[i] * (fwd[i] + bwd - c[i])
		den += c[i] * c[i]
	}
	if den == 0 || num <= den {
		return 1
	}
	return num / den
}
