package trend

import "math"

// NoisePosterior is what a series says about its noise, modelled as white
// noise plus AR(1) wander: weights over a grid of the wander's lag-1
// coefficient ρ in [0, 1) and the white share λ of the noise's variance,
// proportional to the restricted (REML) likelihood of a straight line
// with such errors. The restricted likelihood integrates the line's
// intercept and slope out, so it does not read the slowest wander, which a
// fitted line soaks up, as white noise (the bias that makes a lag-1
// estimate from 30–60 points come out low); the white share keeps a
// wander slower than the run, whose moves from bin to bin are smaller
// than the bins' own scatter, from passing for white noise; and, used as
// a posterior (flat in the white share and in log τ), it keeps every
// noise the data cannot rule out in play instead of betting the interval
// on one estimate.
type NoisePosterior struct {
	Rho, Lambda, W []float64 // grid points and their normalised weights
}

// lambdaGrid is the white shares weighed, flat a priori.
var lambdaGrid = []float64{0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1}

// WanderPosterior weighs the noise of y about a straight line in x, the
// points taken as equally spaced in time. With fewer than 6 points it
// puts all the weight on white noise.
func WanderPosterior(x, y []float64) NoisePosterior {
	return weighedPosterior(x, y, rhosFor(min(len(x), len(y))), nil)
}

// weighedPosterior is the posterior over the ρ grid rhos and the white
// shares, with prior weights on rhos (nil: equal).
func weighedPosterior(x, y, rhos, prior []float64) NoisePosterior {
	n := min(len(x), len(y))
	var p NoisePosterior
	var pr []float64
	for i, r := range rhos {
		for _, l := range lambdaGrid {
			p.Rho, p.Lambda = append(p.Rho, r), append(p.Lambda, l)
			w := 1.0
			if prior != nil {
				w = prior[i]
			}
			pr = append(pr, w)
		}
	}
	p.W = make([]float64, len(p.Rho))
	if n < 6 {
		return white(p)
	}
	xs := standardise(x[:n])
	ll := make([]float64, len(p.Rho))
	top := math.Inf(-1)
	for i := range p.Rho {
		ll[i] = remlWander(xs, y[:n], p.Rho[i], p.Lambda[i])
		if !math.IsNaN(ll[i]) {
			top = math.Max(top, ll[i])
		}
	}
	if math.IsInf(top, 0) {
		return white(p)
	}
	var sum float64
	for i, l := range ll {
		if !math.IsNaN(l) {
			p.W[i] = math.Exp(l-top) * cell(lambdaGrid, p.Lambda[i]) * pr[i]
		}
		sum += p.W[i]
	}
	for i := range p.W {
		p.W[i] /= sum
	}
	return p
}

// rhosFor is the grid of ρ weighed for n points: ρ = 0, then correlation
// times τ = −1/ln ρ spaced evenly in log τ from a third of a point to
// tauMax·n points, each equally likely a priori (no scale is favoured).
// Longer correlation cannot be told apart within n points: a wander
// slower than that only looks like a slower random walk, which the
// longest τ already stands for.
func rhosFor(n int) []float64 {
	const k = 24
	out := []float64{0}
	lo, hi := math.Log(1.0/3), math.Log(tauMax*float64(max(n, 2)))
	for i := range k {
		tau := math.Exp(lo + (hi-lo)*float64(i)/float64(k-1))
		out = append(out, math.Exp(-1/tau))
	}
	return out
}

// white puts all the weight on white noise.
func white(p NoisePosterior) NoisePosterior {
	for i := range p.W {
		p.W[i] = 0
		if p.Lambda[i] == 1 && p.Rho[i] == 0 {
			p.W[i] = 1
		}
	}
	return p
}

// tauMax is the longest correlation time weighed, in runs: measured
// against 2 and 4 runs and 1000 points, one run gave intervals as wide
// as the estimates' spread under slow wander with the least excess under
// fast wander (docs/verdict-study.md, "Intervals").
const tauMax = 1

// cell is the width of grid point v's cell in g, its prior weight: the
// prior on the white share is flat.
func cell(g []float64, v float64) float64 {
	for i, u := range g {
		if u == v {
			lo, hi := g[max(i-1, 0)], g[min(i+1, len(g)-1)]
			if i == len(g)-1 && g[i] < 1 {
				hi = 1
			}
			return (hi - lo) / 2
		}
	}
	return 0
}

// standardise centres x and scales it to unit spread, for a well-
// conditioned 2×2 system.
func standardise(x []float64) []float64 {
	var m, s float64
	for _, v := range x {
		m += v
	}
	m /= float64(len(x))
	for _, v := range x {
		s += (v - m) * (v - m)
	}
	s = math.Sqrt(s / float64(len(x)))
	if s == 0 {
		s = 1
	}
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = (v - m) / s
	}
	return out
}

// remlWander is the restricted log-likelihood, up to a constant, of y =
// a + b·x + e, e white noise of variance λσ² plus stationary AR(1) wander
// of variance (1−λ)σ² and coefficient ρ, σ² profiled out:
// −½·Σ log Fₜ − ½·log|X'V⁻¹X| − (n−2)/2·log RSS. A Kalman filter gives the
// innovations of y and of the design's columns (their gains do not depend
// on the data) and their variances Fₜ, in O(n).
func remlWander(x, y []float64, rho, lambda float64) float64 {
	q := (1 - lambda) * (1 - rho*rho) // the wander's innovation variance
	p := 1 - lambda                   // the state's variance before the first point
	var m1, mx, my float64            // the state's predicted mean for each column
	var logF, a11, a12, a22, b1, b2, yy float64
	prodF := 1.0 // Fₜ multiplied up, its logarithm taken now and then
	for t := range x {
		f := p + lambda
		if f <= 0 {
			return math.Inf(-1)
		}
		e1, ex, ey := 1-m1, x[t]-mx, y[t]-my
		if prodF *= f; prodF < 1e-200 || prodF > 1e200 {
			logF, prodF = logF+math.Log(prodF), 1
		}
		g := 1 / f
		a11, a12, a22 = a11+e1*e1*g, a12+e1*ex*g, a22+ex*ex*g
		b1, b2, yy = b1+e1*ey*g, b2+ex*ey*g, yy+ey*ey*g
		k := p * g
		m1, mx, my = rho*(m1+k*e1), rho*(mx+k*ex), rho*(my+k*ey)
		p = rho*rho*(p-k*p) + q
	}
	logF += math.Log(prodF)
	det := a11*a22 - a12*a12
	if det <= 0 {
		return math.Inf(-1)
	}
	rss := yy - (a22*b1*b1-2*a12*b1*b2+a11*b2*b2)/det
	if rss <= 0 {
		return math.Inf(-1)
	}
	return -0.5*logF - 0.5*math.Log(det) - float64(len(x)-2)/2*math.Log(rss)
}

// Median is the posterior median of the wander's coefficient ρ.
func (p NoisePosterior) Median() float64 {
	var c float64
	for i, w := range p.W { // grouped by ρ, ascending
		if c += w; c >= 0.5 {
			return p.Rho[i]
		}
	}
	return p.Rho[len(p.Rho)-1]
}

// Inflation is the variance inflation of a slope over x under the
// posterior: WanderInflation averaged over the grid, weighted by the
// posterior, which is the slope's variance averaged over every noise the
// data leave in play, over the variance its residuals suggest. It is at
// least 1. The AR(1) sums are computed once per coefficient.
func (p NoisePosterior) Inflation(x []float64) float64 { return p.InflationSpaced(x, 1) }

// InflationSpaced is Inflation for points k times as far apart as those
// the posterior was read from: each ρ of the grid stands for ρᵏ between
// them (the wander's correlation falls with the time between points, as
// an Ornstein–Uhlenbeck process's does). A stretch sampled more thinly
// than the rest of its soak is less correlated point to point, and its
// slope's interval, inflated as if it were not, came out too wide.
func (p NoisePosterior) InflationSpaced(x []float64, k float64) float64 {
	if !(k > 0) || math.IsInf(k, 0) {
		k = 1
	}
	d := newDesign(x)
	var m, rho, a, tr float64
	rho = math.NaN()
	for i, w := range p.W {
		if w < 1e-9 {
			continue
		}
		if p.Rho[i] != rho {
			rho = p.Rho[i]
			r := rho
			if k != 1 && r > 0 {
				r = math.Pow(r, k)
			}
			a, tr = d.ar1(r)
		}
		m += w * d.inflation(a, tr, p.Lambda[i])
	}
	return math.Max(m, 1)
}

// design holds a slope's design: x centred, and a vector of ones.
type design struct {
	c, one []float64
	cc     float64
}

func newDesign(x []float64) design {
	n := len(x)
	var mx float64
	for _, v := range x {
		mx += v
	}
	mx /= float64(n)
	d := design{c: make([]float64, n), one: make([]float64, n)}
	for i, v := range x {
		d.c[i], d.one[i] = v-mx, 1
	}
	d.cc = dot(d.c, d.c)
	return d
}

// ar1 returns c'Rc/c'c and tr(MR) for the AR(1) correlations R of
// coefficient rho (see VarianceInflation).
func (d design) ar1(rho float64) (float64, float64) {
	n := float64(len(d.c))
	if rho <= 0 || d.cc == 0 {
		return 1, n - 2
	}
	a := quadForm(d.c, rho) / d.cc
	return a, n - quadForm(d.one, rho)/n - a
}

// inflation is WanderInflation from the AR(1) sums a = c'Rc/c'c and
// tr = tr(MR).
func (d design) inflation(a, tr, lambda float64) float64 {
	n := len(d.c)
	if n < 4 || d.cc == 0 {
		return 1
	}
	den := lambda*float64(n-2) + (1-lambda)*tr
	if den <= 0 {
		return 1
	}
	return math.Max((lambda+(1-lambda)*a)*float64(n-2)/den, 1)
}

// WanderInflation is VarianceInflation for noise whose variance is a
// share lambda white and the rest AR(1) with coefficient rho: the
// least-squares slope's variance, c'Σc/(c'c)² with Σ = λI + (1−λ)R, over
// what the residuals suggest, whose expected variance is
// tr(MΣ)/(n−2) = (λ(n−2) + (1−λ)·tr(MR))/(n−2). It is at least 1.
func WanderInflation(x []float64, rho, lambda float64) float64 {
	if len(x) < 4 || rho <= 0 || lambda >= 1 {
		return 1
	}
	d := newDesign(x)
	a, tr := d.ar1(rho)
	return d.inflation(a, tr, lambda)
}
