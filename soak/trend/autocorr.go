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

// Lag1 is the AR(1) coefficient behind the residuals r of a fitted line:
// their lag-1 autocorrelation, corrected for its small-sample bias. That
// bias is large: residuals about a line fitted to a short stretch of slow
// wander look far less correlated than the wander is (32 residuals of an
// AR(1) with ρ = 0.9 give 0.64 on average), because the line soaks up the
// slowest part of it. Lag1 inverts a low quantile of the estimate,
// tabulated by simulation (see expectedLag1), so the coefficient errs high
// (an interval too wide, not too narrow) four times in five, and clamps the result to [0, maxRho]: a negative correlation would
// narrow the interval, and an estimate at or above what a random walk
// gives cannot tell any stronger correlation apart.
func Lag1(r []float64) float64 {
	n := len(r)
	if n < 4 {
		return 0
	}
	raw := rawLag1(r)
	return unbiasLag1(raw, n)
}

func rawLag1(r []float64) float64 {
	n := len(r)
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
	return num / den
}

// maxRho bounds the AR(1) coefficient the correction believes.
const maxRho = 0.98

// VarianceInflation is the factor by which AR(1) errors with coefficient
// rho (between neighbouring points of x, taken as equally spaced in time)
// multiply the variance of a least-squares slope over x, against what the
// residuals' own spread would suggest under independence. Both parts
// matter. The slope's true variance is σ²·c'Rc/(c'c)² (cᵢ = xᵢ − x̄, R the
// AR(1) correlations ρ^|i−j|, σ² the wander's variance); and the residuals
// about the fitted line show less than σ², since the line takes up the
// slow part of the wander: their expected variance is σ²·tr(MR)/(n−2),
// with M the projection off the line, tr(MR) = n − 1'R1/n − c'Rc/c'c.
// The factor is their ratio, exact for the design: (c'Rc/c'c)·(n−2)/tr(MR).
// It is 1 for rho ≤ 0, and runs in O(n) by summing ρ^|i−j|·vⱼ forwards
// and backwards.
func VarianceInflation(x []float64, rho float64) float64 {
	n := len(x)
	if n < 4 || rho <= 0 {
		return 1
	}
	var mx float64
	for _, v := range x {
		mx += v
	}
	mx /= float64(n)
	c, one := make([]float64, n), make([]float64, n)
	for i, v := range x {
		c[i], one[i] = v-mx, 1
	}
	cc := dot(c, c)
	if cc == 0 {
		return 1
	}
	cRc := quadForm(c, rho)
	trMR := float64(n) - quadForm(one, rho)/float64(n) - cRc/cc
	if trMR <= 0 {
		return 1
	}
	f := cRc / cc * float64(n-2) / trMR
	return math.Max(f, 1)
}

// quadForm is v'Rv for the AR(1) correlations R = ρ^|i−j|.
func quadForm(v []float64, rho float64) float64 {
	n := len(v)
	fwd := make([]float64, n) // Σ_{j≤i} ρ^(i−j) vⱼ
	for i := range v {
		fwd[i] = v[i]
		if i > 0 {
			fwd[i] += rho * fwd[i-1]
		}
	}
	var q, bwd float64 // bwd: Σ_{j≥i} ρ^(j−i) vⱼ
	for i := n - 1; i >= 0; i-- {
		bwd = v[i] + rho*bwd
		q += v[i] * (fwd[i] + bwd - v[i])
	}
	return q
}

func dot(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}
