package trend

import "math"

// WanderPosteriorFrom is WanderPosterior on the bins (x, y) with the
// prior on the wander's correlation time read from the samples they were
// cut from: rx, ry, consecutive, in bins of equal counts, ry the
// residuals about the same shape as y.
//
// Forty to 128 bins cannot rule out a slow wander of a small share of
// the noise, and under a prior flat in log τ the posterior prices it in:
// under AR(1) wander of 30 s–5 min the mean inflation came out 2.4–2.9
// times what the estimates' spread asks, the interval 1.4–1.8× too wide
// (docs/verdict-study.md, "Intervals"). The samples, thousands of them,
// read the wander's correlation time far better: the prior on each τ of
// the bins' grid is the samples' restricted likelihood of that τ (in
// samples; at most maxPerBin a bin are read), marginal over the white
// share, with a fifth of the prior kept flat. A single AR(1) read from
// the samples says nothing of
// correlation over scales much longer than its own (long memory); when
// the means of the bins vary more than that AR(1) predicts (by
// longMemoryRatio), the samples' prior is not used.
func WanderPosteriorFrom(x, y, rx, ry []float64) NoisePosterior {
	nb, nr := min(len(x), len(y)), min(len(rx), len(ry))
	if nb < 6 || nr < 2*nb {
		return WanderPosterior(x, y)
	}
	rx, ry = rx[:nr], ry[:nr]
	k := int(math.Ceil(float64(nr) / float64(maxPerBin*nb)))
	ax, ay := every(rx, k), every(ry, k)
	spb := float64(nr) / float64(k*nb)
	rhos := rhosFor(nb)
	s := newSampleFit(ax, ay, spb, nb)
	if binMeansRatio(ay, nb, s.modeRho, s.modeLambda) > longMemoryRatio {
		return WanderPosterior(x, y)
	}
	prior := make([]float64, len(rhos))
	ll := make([]float64, len(rhos))
	top := math.Inf(-1)
	for i, r := range rhos {
		ll[i] = s.short
		if r > 0 {
			ll[i] = s.at(-spb / math.Log(r))
		}
		top = math.Max(top, ll[i])
	}
	if math.IsInf(top, 0) || math.IsNaN(top) {
		return WanderPosterior(x, y)
	}
	var sum float64
	for i := range ll {
		prior[i] = math.Exp(ll[i] - top)
		sum += prior[i]
	}
	for i := range prior {
		prior[i] = flatShare/float64(len(rhos)) + (1-flatShare)*prior[i]/sum
	}
	return weighedPosterior(x[:nb], y[:nb], rhos, prior)
}

// flatShare is the share of the prior on τ that stays flat in log τ
// whatever the samples say; longMemoryRatio is how much more than the
// samples' AR(1) predicts the bins' means may vary before its prior is
// dropped. Chosen by the interval study (docs/verdict-study.md,
// "Intervals"; 100 runs a cell, seed 1): flat shares of 0.1, 0.2 and 0.3
// left AR(1) wander of 5 min on 2 h runs 1.17, 1.21 and 1.26× wider than
// the estimates' spread; 0.05 (on a finer grid of τ) lowered the coverage
// of fractional Gaussian noise of H 0.9 to 82–86 %, and 0.1 and 0.3 let the
// advice to run more decide 79 % of the runs it was given for (bar 80 %;
// 0.2: 82 %). Without the check on the bins' means, fractional Gaussian
// noise of H 0.9 was covered in 77–88 % of runs.
const (
	flatShare       = 0.2
	longMemoryRatio = 1.2
)

// sampleFit is the samples' restricted log-likelihood of AR(1) wander,
// marginal over the white share, on a coarse grid of correlation times
// (in samples) spanning the bins' grid, and its mode.
type sampleFit struct {
	logTau, ll          []float64 // the grid, ascending, and the log-likelihoods
	short               float64   // mean likelihood (log) of the τ under a third of a bin, and none
	modeRho, modeLambda float64
	modeLL              float64
}

// sampleTaus is the number of correlation times on the samples' grid
// across the bins' range; the bins' finer grid is interpolated in log τ.
const sampleTaus = 9

func newSampleFit(rx, ry []float64, spb float64, nb int) sampleFit {
	s := sampleFit{modeLL: math.Inf(-1)}
	xs := standardise(rx)
	lo, hi := math.Log(spb/3), math.Log(spb*float64(nb))
	for i := range sampleTaus {
		lt := lo + (hi-lo)*float64(i)/float64(sampleTaus-1)
		s.logTau, s.ll = append(s.logTau, lt), append(s.ll, s.tauLogLik(xs, ry, math.Exp(lt)))
	}
	short := []float64{s.tauLogLik(xs, ry, 0)}
	for tau := 1.0 / 3; tau < spb/3; tau *= 3 {
		short = append(short, s.tauLogLik(xs, ry, tau))
	}
	s.short = logMeanExp(short)
	return s
}

// at is the log-likelihood at tau samples, interpolated in log τ.
func (s sampleFit) at(tau float64) float64 {
	lt := math.Log(tau)
	n := len(s.logTau)
	switch {
	case lt <= s.logTau[0]:
		return s.ll[0]
	case lt >= s.logTau[n-1]:
		return s.ll[n-1]
	}
	j := 1
	for s.logTau[j] < lt {
		j++
	}
	f := (lt - s.logTau[j-1]) / (s.logTau[j] - s.logTau[j-1])
	return s.ll[j-1] + f*(s.ll[j]-s.ll[j-1])
}

// tauLogLik is the restricted log-likelihood of wander of correlation
// time tau samples (0: none), marginal over the white share; it records
// the mode.
func (s *sampleFit) tauLogLik(xs, y []float64, tau float64) float64 {
	rho := 0.0
	if tau > 0 {
		rho = math.Exp(-1 / tau)
	}
	ls := make([]float64, 0, len(sampleLambdas))
	for _, l := range sampleLambdas {
		v := remlWander(xs, y, rho, l)
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		if v > s.modeLL {
			s.modeLL, s.modeRho, s.modeLambda = v, rho, l
		}
		ls = append(ls, v+math.Log(cell(sampleLambdas, l)))
	}
	if len(ls) == 0 {
		return math.Inf(-1)
	}
	return logMeanExp(ls)
}

// sampleLambdas are the white shares the samples' likelihood is
// marginalised over, flat a priori (coarser than the bins' lambdaGrid:
// the samples read the correlation time, the bins the white share).
var sampleLambdas = []float64{0, 0.2, 0.4, 0.6, 0.8, 1}

// logMeanExp is log(mean(exp(v))), computed stably.
func logMeanExp(v []float64) float64 {
	top := math.Inf(-1)
	for _, l := range v {
		top = math.Max(top, l)
	}
	if math.IsInf(top, 0) {
		return top
	}
	var s float64
	for _, l := range v {
		s += math.Exp(l - top)
	}
	return top + math.Log(s/float64(len(v)))
}

// binMeansRatio is the variance of the means of r's nb consecutive bins
// of equal counts over what white noise of share lambda plus AR(1)
// wander of coefficient rho, at r's own variance, predicts for them.
func binMeansRatio(r []float64, nb int, rho, lambda float64) float64 {
	n := len(r)
	means := make([]float64, 0, nb)
	for b, lo := 0, 0; b < nb; b++ {
		size := n / nb
		if b < n%nb {
			size++
		}
		var s float64
		for _, v := range r[lo : lo+size] {
			s += v
		}
		means = append(means, s/float64(size))
		lo += size
	}
	m := float64(n) / float64(nb)
	sum, pk := m, 1.0 // Σᵢⱼ ρ^|i−j| over a bin of m points
	for k := 1; k < int(m); k++ {
		pk *= rho
		sum += 2 * (m - float64(k)) * pk
	}
	pred := sampleVar(r) * (lambda/m + (1-lambda)*sum/(m*m))
	if pred <= 0 {
		return math.Inf(1)
	}
	return sampleVar(means) / pred
}

// sampleVar is the unbiased sample variance of v.
func sampleVar(v []float64) float64 {
	n := float64(len(v))
	return variance(v) * n / math.Max(n-1, 1)
}

// maxPerBin caps the samples read per bin: of more, every k-th is read
// (white noise plus AR(1) wander read every k-th sample is white noise
// plus AR(1) wander, of coefficient ρᵏ), which bounds the cost: each
// correlation time weighed is a Kalman pass over the samples.
const maxPerBin = 64

// every returns every k-th element of v, from the first.
func every(v []float64, k int) []float64 {
	if k <= 1 {
		return v
	}
	out := make([]float64, 0, len(v)/k+1)
	for i := 0; i < len(v); i += k {
		out = append(out, v[i])
	}
	return out
}
