package sweep

import "math"

// USL is a fit of the Universal Scalability Law (Gunther) to the
// throughput X at concurrency N:
//
//	X(N) = λN / (1 + σ(N−1) + κN(N−1))
//
// σ is contention (the serial share of the work) and κ coherency (the
// crosstalk between workers, which makes throughput fall past the peak).
type USL struct {
	Sigma  float64 `json:"sigma"`
	Kappa  float64 `json:"kappa"`
	Lambda float64 `json:"lambda"` // throughput of one worker alone, req/s
	// Peak is N* = √((1−σ)/κ), the concurrency of the highest throughput;
	// 0 when κ is 0 (throughput never falls).
	Peak float64 `json:"peak_concurrency"`
	R2   float64 `json:"r2"` // 1 − SSres/SStot of the throughput
	OK   bool    `json:"ok"` // false: too few levels (fewer than 3) to fit
}

// At is the fitted throughput at concurrency n.
func (u USL) At(n float64) float64 {
	return u.Lambda * n / (1 + u.Sigma*(n-1) + u.Kappa*n*(n-1))
}

// FitUSL fits the USL to throughputs x at concurrencies n by least squares
// on the relative residuals (X−fit)/X, with 0 ≤ σ ≤ 1 and κ ≥ 0. Given σ
// and κ the best λ has a closed form, so the fit is a bounded search of
// two parameters: a grid over σ and log κ (κ = 0 included), zoomed in
// around the best point. A grid needs no starting guess and cannot leave
// the bounds, where Gauss–Newton from a poor start can; the profile is
// smooth, and eight zooms reach a relative precision of about 1e-6.
func FitUSL(n, x []float64) USL {
	pts := 0
	for i := range n {
		if n[i] > 0 && x[i] > 0 {
			pts++
		}
	}
	if pts < 3 {
		return USL{}
	}
	best := searchUSL(n, x)
	best.R2 = r2(n, x, best)
	best.OK = true
	if best.Kappa > 0 {
		best.Peak = math.Sqrt((1 - best.Sigma) / best.Kappa)
	}
	return best
}

// searchUSL is FitUSL's zooming grid over σ ∈ [0, 1] and log10 κ ∈
// [−9, 0], with κ = 0 tried at every σ.
func searchUSL(n, x []float64) USL {
	const steps = 40
	sLo, sHi, kLo, kHi := 0.0, 1.0, -9.0, 0.0
	var best USL
	bestSS := math.Inf(1)
	try := func(s, k float64) {
		u := USL{Sigma: s, Kappa: k}
		u.Lambda = bestLambda(n, x, u)
		if ss := relSS(n, x, u); ss < bestSS {
			best, bestSS = u, ss
		}
	}
	for range 8 {
		for i := 0; i <= steps; i++ {
			s := sLo + (sHi-sLo)*float64(i)/steps
			try(s, 0)
			for j := 0; j <= steps; j++ {
				try(s, math.Pow(10, kLo+(kHi-kLo)*float64(j)/steps))
			}
		}
		ds, dk := 2*(sHi-sLo)/steps, 2*(kHi-kLo)/steps
		sLo, sHi = math.Max(0, best.Sigma-ds), math.Min(1, best.Sigma+ds)
		if best.Kappa > 0 {
			lk := math.Log10(best.Kappa)
			kLo, kHi = math.Max(-12, lk-dk), math.Min(0, lk+dk)
		}
	}
	return best
}

// bestLambda is the λ that minimises the relative squared residuals for
// the shape g(N) = N/(1+σ(N−1)+κN(N−1)): Σ(g/X) / Σ(g/X)².
func bestLambda(n, x []float64, u USL) float64 {
	u.Lambda = 1
	var num, den float64
	for i := range n {
		if n[i] <= 0 || x[i] <= 0 {
			continue
		}
		r := u.At(n[i]) / x[i]
		num += r
		den += r * r
	}
	if den == 0 {
		return 0
	}
	return num / den
}

func relSS(n, x []float64, u USL) float64 {
	var ss float64
	for i := range n {
		if n[i] > 0 && x[i] > 0 {
			d := (x[i] - u.At(n[i])) / x[i]
			ss += d * d
		}
	}
	return ss
}

// r2 is the fit's share of the throughput's variance.
func r2(n, x []float64, u USL) float64 {
	var mean float64
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	var res, tot float64
	for i := range n {
		d := x[i] - u.At(n[i])
		res += d * d
		tot += (x[i] - mean) * (x[i] - mean)
	}
	if tot == 0 {
		return 0
	}
	return 1 - res/tot
}
