package trend

import (
	"math"
	"sort"
)

// BinSpread is a lower envelope that survives noise whose spread drifts.
// A bin's minimum sits below the bin's level by a multiple of the noise's
// SD there, so noise whose SD falls over a run makes the minima climb (a
// leak that is not there) and noise whose SD rises makes a leak's minima
// lag. BinSpread splits the points, in the order given, into the given
// number of consecutive bins of equal counts (as BinEqual) and reduces
// each to its p-th quantile raised by z_p noise SDs there (z_p the
// standard normal's upper p quantile), which puts every bin at its level
// whatever the noise's spread (the quantile is taken about the series'
// trend, so that growth within a bin does not pass for spread). The noise's SD is measured from the
// sample-to-sample changes (their median absolute deviation, over √2), which
// a GC sawtooth's smooth climb hardly moves, and smoothed across bins by a
// Theil–Sen line in the bin's index, so that it adds no noise of its own.
// A bin's x is its points' mean x.
func BinSpread(x, y []float64, bins int, p float64) Binned {
	n := min(len(x), len(y))
	if n == 0 || bins < 1 {
		return Binned{}
	}
	bins = min(bins, n)
	// The quantile is taken about the series' own trend (a Theil–Sen
	// line through the bins' medians): a trend within a bin spreads its
	// values as much as noise does, and the correction for the noise's
	// spread would then move with the noise, not with the level.
	med := BinEqual(x, y, bins, ByMedian)
	trend := TheilSenConf(med.X, med.Y, 0.95).Slope
	if math.IsNaN(trend) {
		trend = 0
	}
	out := Binned{X: make([]float64, 0, bins), Y: make([]float64, 0, bins), N: make([]int, 0, bins)}
	sds := make([]float64, 0, bins)
	for b, lo := 0, 0; b < bins; b++ {
		size := n / bins
		if b < n%bins {
			size++
		}
		xs, ys := x[lo:lo+size], y[lo:lo+size]
		lo += size
		s := make([]float64, size)
		var mx float64
		for i, v := range xs {
			mx += v
			s[i] = ys[i] - trend*v
		}
		sort.Float64s(s)
		mx /= float64(size)
		out.X, out.Y = append(out.X, mx), append(out.Y, orderStat(s, p*float64(size-1)+1)+trend*mx)
		out.N = append(out.N, size)
		sds = append(sds, changeSD(ys))
	}
	z := math.Sqrt2 * math.Erfinv(1-2*p)
	if z == 0 {
		return out
	}
	f := spreadLine(sds)
	for i := range out.Y {
		out.Y[i] += z * math.Max(f.At(float64(i)), 0)
	}
	return out
}

// spreadLine is the Theil–Sen line through the bins' noise SDs against
// the bins' index.
func spreadLine(sds []float64) Fit {
	if len(sds) < 2 {
		return Fit{Intercept: sds[0], Lo: math.NaN(), Hi: math.NaN()}
	}
	idx := make([]float64, len(sds))
	for i := range idx {
		idx[i] = float64(i)
	}
	return TheilSenConf(idx, sds, 0.95)
}

// SpreadDrifts reports whether the noise's spread drifts over the points
// cut into the given number of bins as BinSpread cuts them: the line
// through the bins' noise SDs has a 95 % interval clear of zero and moves
// by at least a factor minSpreadDrift from the first bin to the last.
// Noise of a steady spread keeps the plain minimum (BinEqual, ByMin),
// which sees through a GC sawtooth best.
func SpreadDrifts(y []float64, bins int) bool {
	n := len(y)
	if n == 0 || bins < 2 {
		return false
	}
	bins = min(bins, n)
	sds := make([]float64, 0, bins)
	for b, lo := 0, 0; b < bins; b++ {
		size := n / bins
		if b < n%bins {
			size++
		}
		sds = append(sds, changeSD(y[lo:lo+size]))
		lo += size
	}
	f := spreadLine(sds)
	first, last := f.At(0), f.At(float64(bins-1))
	switch {
	case !(f.Lo > 0 || f.Hi < 0):
		return false
	case first <= 0 || last <= 0:
		return true
	}
	return math.Max(first/last, last/first) >= minSpreadDrift
}

// minSpreadDrift is the factor by which the noise's SD must move over a
// run for the envelope to follow it.
const minSpreadDrift = 1.5

// changeSD is the SD of white noise on v from its changes point to point:
// 1.4826 times their median absolute deviation, over √2.
func changeSD(v []float64) float64 {
	if len(v) < 3 {
		return 0
	}
	d := make([]float64, len(v)-1)
	for i := 1; i < len(v); i++ {
		d[i-1] = v[i] - v[i-1]
	}
	m := MedianFast(append([]float64(nil), d...))
	for i, u := range d {
		d[i] = math.Abs(u - m)
	}
	return 1.4826 * MedianFast(d) / math.Sqrt2
}
