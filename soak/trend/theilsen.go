package trend

import (
	"math"
	"sort"
)

// Fit is a straight-line fit y = Intercept + Slope·x with a confidence
// interval [Lo, Hi] for the slope.
type Fit struct {
	Slope, Intercept float64
	Lo, Hi           float64 // confidence interval for the slope
	N                int     // points used
	Pairs            int     // pairwise slopes (Theil–Sen only)
}

// At is the fitted value at x.
func (f Fit) At(x float64) float64 { return f.Intercept + f.Slope*x }

// TheilSen fits y against x by the Theil–Sen estimator with a 95 %
// confidence interval; see TheilSenConf.
func TheilSen(x, y []float64) Fit { return TheilSenConf(x, y, 0.95) }

// TheilSenConf fits y against x by the Theil–Sen estimator: the slope is
// the median of the pairwise slopes over pairs with distinct x, the
// intercept the median of y − slope·x. The confidence interval at level
// conf is Sen's (1968) distribution-free one: with C = z·√Var(S), Var(S)
// the tie-corrected Mann–Kendall variance and N' the number of pairwise
// slopes, the bounds are the (N'−C)/2-th and the ((N'+C)/2+1)-th ordered
// slopes (Gilbert 1987, §16.5), interpolated between neighbours. It is
// exact and O(n² log n): bin long series first. With fewer than 2 distinct
// x it returns a zero Fit with N set and NaN bounds.
func TheilSenConf(x, y []float64, conf float64) Fit { return TheilSenInflated(x, y, conf, 1) }

// TheilSenInflated is TheilSenConf with the slope's variance multiplied by
// vif ≥ 1, the variance inflation of autocorrelated errors (see
// VarianceInflation), so that the interval keeps its level on a series
// whose neighbours are alike: each side of Sen's interval is stretched by
// √vif about the slope. (Inflating Var(S) inside Sen's ranks instead
// stops working once the ranks reach the ends: the interval then jumps to
// the most extreme pairwise slopes, those of neighbouring points.) Points
// with a non-finite x or y are dropped.
func TheilSenInflated(x, y []float64, conf, vif float64) Fit {
	x, y = Finite(x, y)
	n := len(x)
	f := Fit{N: n, Lo: math.NaN(), Hi: math.NaN()}
	slopes := pairSlopes(x, y)
	f.Pairs = len(slopes)
	if len(slopes) == 0 {
		return f
	}
	z := math.Sqrt2 * math.Erfinv(conf)
	c := z * math.Sqrt(varianceS(x, y))
	np := float64(len(slopes))
	ranks := []float64{(np - c) / 2, (np + 1) / 2, (np+c)/2 + 1}
	selectRanks(slopes, ranks)
	f.Lo, f.Slope, f.Hi = orderStat(slopes, ranks[0]), orderStat(slopes, ranks[1]), orderStat(slopes, ranks[2])
	if k := math.Sqrt(math.Max(vif, 1)); k > 1 {
		f.Lo, f.Hi = f.Slope-(f.Slope-f.Lo)*k, f.Slope+(f.Hi-f.Slope)*k
	}
	f.Intercept = interceptFor(x, y, f.Slope)
	return f
}

// Finite returns the pairs of x and y whose values are both finite (and
// the shorter length of the two). It returns its inputs when all are.
func Finite(x, y []float64) ([]float64, []float64) {
	n := min(len(x), len(y))
	x, y = x[:n], y[:n]
	for i := range n {
		if !finite(x[i]) || !finite(y[i]) {
			return dropNonFinite(x, y)
		}
	}
	return x, y
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

func dropNonFinite(x, y []float64) ([]float64, []float64) {
	var fx, fy []float64
	for i := range x {
		if finite(x[i]) && finite(y[i]) {
			fx, fy = append(fx, x[i]), append(fy, y[i])
		}
	}
	return fx, fy
}

// selectRanks partially orders s so that orderStat is right at each of the
// ascending fractional 1-based ranks: every element the interpolation
// reads is in its sorted place. It costs O(len(s)) per rank on average
// instead of a full sort.
func selectRanks(s []float64, ranks []float64) {
	from := 0
	for _, k := range ranks {
		if math.IsNaN(k) {
			continue
		}
		pos := math.Min(math.Max(k-1, 0), float64(len(s)-1))
		lo := int(math.Floor(pos))
		for _, i := range []int{lo, min(lo+1, len(s)-1)} {
			if i >= from {
				quickselect(s[from:], i-from)
				from = i
			}
		}
	}
}

// quickselect puts the k-th smallest of s at s[k], with no larger element
// before it and no smaller one after it.
func quickselect(s []float64, k int) {
	lo, hi := 0, len(s)-1
	for lo < hi {
		p := medianOf3(s, lo, (lo+hi)/2, hi)
		i, j := lo, hi
		for i <= j {
			for s[i] < p {
				i++
			}
			for s[j] > p {
				j--
			}
			if i <= j {
				s[i], s[j] = s[j], s[i]
				i, j = i+1, j-1
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return
		}
	}
}

func medianOf3(s []float64, a, b, c int) float64 {
	x, y, z := s[a], s[b], s[c]
	if x > y {
		x, y = y, x
	}
	if y > z {
		y = z
	}
	return math.Max(x, y)
}

func pairSlopes(x, y []float64) []float64 {
	n := len(x)
	slopes := make([]float64, 0, n*(n-1)/2)
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			if dx := x[j] - x[i]; dx != 0 {
				slopes = append(slopes, (y[j]-y[i])/dx)
			}
		}
	}
	return slopes
}

func interceptFor(x, y []float64, slope float64) float64 {
	r := make([]float64, len(x))
	for i := range x {
		r[i] = y[i] - slope*x[i]
	}
	sort.Float64s(r)
	return median(r)
}

// orderStat is the k-th (1-based, fractional) smallest of sorted s,
// linearly interpolated and clamped to the ends.
func orderStat(s []float64, k float64) float64 {
	if math.IsNaN(k) {
		return math.NaN()
	}
	pos := math.Min(math.Max(k-1, 0), float64(len(s)-1))
	lo := int(math.Floor(pos))
	hi := min(lo+1, len(s)-1)
	frac := pos - float64(lo)
	return s[lo] + frac*(s[hi]-s[lo])
}

// median of sorted s; NaN when empty.
func median(s []float64) float64 {
	n := len(s)
	switch {
	case n == 0:
		return math.NaN()
	case n%2 == 1:
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// Median returns the median of v without changing it; NaN when empty.
func Median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return median(s)
}

// OLS fits y against x by ordinary least squares. The interval is the
// normal-theory 95 % one (slope ± 1.96·SE), which assumes independent
// Gaussian residuals: use it for comparison, not for verdicts.
func OLS(x, y []float64) Fit {
	x, y = Finite(x, y)
	n := len(x)
	f := Fit{N: n, Lo: math.NaN(), Hi: math.NaN()}
	if n < 2 {
		return f
	}
	var mx, my float64
	for i := 0; i < n; i++ {
		mx += x[i]
		my += y[i]
	}
	mx, my = mx/float64(n), my/float64(n)
	var sxx, sxy float64
	for i := 0; i < n; i++ {
		sxx += (x[i] - mx) * (x[i] - mx)
		sxy += (x[i] - mx) * (y[i] - my)
	}
	if sxx == 0 {
		return f
	}
	f.Slope = sxy / sxx
	f.Intercept = my - f.Slope*mx
	if n > 2 {
		var sse float64
		for i := 0; i < n; i++ {
			e := y[i] - f.At(x[i])
			sse += e * e
		}
		se := math.Sqrt(sse / float64(n-2) / sxx)
		f.Lo, f.Hi = f.Slope-1.959963984540054*se, f.Slope+1.959963984540054*se
	}
	return f
}

// MedianFast is Median in O(n) on average, by selection; it reorders v.
func MedianFast(v []float64) float64 {
	n := len(v)
	if n == 0 {
		return math.NaN()
	}
	quickselect(v, n/2)
	hi := v[n/2]
	if n%2 == 1 {
		return hi
	}
	lo := v[0]
	for _, x := range v[:n/2] {
		lo = math.Max(lo, x)
	}
	return (lo + hi) / 2
}
