package abrun

import "math"

// HalfWidth is the half-width of a normal-mixture confidence sequence
// (Robbins 1970; the mixture SPRT of Johari et al. 2017, as in Netflix's
// sequential canary tests): for an estimate whose error, on the
// information scale 1/se², is a Gaussian random walk (a running mean, a
// least-squares slope fitted on a growing series), the intervals
// est ± HalfWidth(se_k) at looks k = 1, 2, … all cover the truth at once
// with probability at least 1 − alpha, however many looks are taken and
// whenever the run stops. tau is the spread of the mixing prior on the
// difference, in the estimate's units: the width is least near the look
// where se ≈ tau, so tau is set to the margin the verdict needs.
//
// The width is se·√((1+k)/k · (2 ln(1/alpha) + ln(1+k))), k = tau²/se²:
// it grows like √(ln n) where a fixed-look interval stays at 1.96·se.
// A zero se (no spread at all) gives 0; a non-finite one +Inf. When se
// is estimated from nu+1 values (nu > 0; 0 = known), the boundary is
// widened to Student's t quantile of the same tail: the plain mixture
// assumes a known spread, and at 4 pairs its false-alarm rate was 1.5×
// alpha/2 in simulation.
func HalfWidth(se, tau, alpha, nu float64) float64 {
	switch {
	case se == 0:
		return 0
	case !(se > 0) || math.IsInf(se, 1) || !(tau > 0) || !(alpha > 0 && alpha < 1):
		return math.Inf(1)
	}
	k := tau * tau / (se * se)
	return se * studentize(math.Sqrt((1+k)/k*(2*math.Log(1/alpha)+math.Log1p(k))), nu)
}

// studentize turns a normal quantile z into Student's t quantile of the
// same tail for nu degrees of freedom (the Cornish–Fisher expansion of
// Abramowitz & Stegun 26.7.5): the widening a boundary needs when the
// spread is estimated from nu+1 values instead of known. nu <= 0 means a
// known spread: z itself.
func studentize(z, nu float64) float64 {
	if nu <= 0 || math.IsInf(z, 0) {
		return z
	}
	z3, z5, z7 := z*z*z, math.Pow(z, 5), math.Pow(z, 7)
	return z + (z3+z)/(4*nu) + (5*z5+16*z3+3*z)/(96*nu*nu) +
		(3*z7+19*z5+17*z3-15*z)/(384*nu*nu*nu)
}

// meanSE is the mean of xs, its standard error and the error's degrees
// of freedom; se is +Inf with fewer than two values.
func meanSE(xs []float64) (mean, se, nu float64) {
	n := float64(len(xs))
	if n == 0 {
		return 0, math.Inf(1), 0
	}
	for _, x := range xs {
		mean += x
	}
	mean /= n
	if n < 2 {
		return mean, math.Inf(1), 0
	}
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss / (n - 1) / n), n - 1
}
