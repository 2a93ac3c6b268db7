package verdict

import (
	"fmt"
	"math"
)

// Contention correction of the CPU cost drift. On a busy machine the CPU
// seconds a request costs truly rise without any leak in the target's
// work: caches and SMT siblings are shared, the clock drops, kernel locks
// and softirqs charged to the target are contended, and a fixed
// background cost is spread over fewer requests. The cost is therefore
// fitted jointly against time and the machine's contention, the cores
// busy with other work than the target's (soakd's included), and called
// rising only when the time trend stands apart from what the contention
// explains.
const (
	// contentionMinSD is the spread of the contention, in cores, under
	// which it counts as constant and the time-only fit decides alone.
	contentionMinSD = 0.02
	// contentionCollinear is the share of the time's variance that the
	// contention follows at or above which the two cannot be separated.
	contentionCollinear = 0.9
)

// partialFit is the cost's time slope once the contention is regressed
// out (Frisch–Waugh: both regressed on the contention, then the residual
// cost on the residual time), with its standard error and the share of
// the time's variance that the contention follows (R²).
type partialFit struct {
	Slope, SE, R2 float64
	DF            int
	ok            bool
}

// fitPartial fits y = a + b·t + c·z by least squares and returns b.
func fitPartial(t, z, y []float64) partialFit {
	n := len(t)
	if n < 4 || sd(z) < contentionMinSD {
		return partialFit{}
	}
	tr, yr := residualOn(z, t), residualOn(z, y)
	var stt, sty, tt float64
	mt := mean(t)
	for i := range n {
		stt += tr[i] * tr[i]
		sty += tr[i] * yr[i]
		tt += (t[i] - mt) * (t[i] - mt)
	}
	if stt <= 0 || tt <= 0 {
		return partialFit{R2: 1, ok: false}
	}
	b := sty / stt
	var ss float64
	for i := range n {
		e := yr[i] - b*tr[i]
		ss += e * e
	}
	df := n - 3
	return partialFit{Slope: b, SE: math.Sqrt(ss / float64(df) / stt), R2: 1 - stt/tt, DF: df, ok: true}
}

// residualOn is y less its least-squares line on x.
func residualOn(x, y []float64) []float64 {
	mx, my := mean(x), mean(y)
	var sxy, sxx float64
	for i := range x {
		sxy += (x[i] - mx) * (y[i] - my)
		sxx += (x[i] - mx) * (x[i] - mx)
	}
	r := make([]float64, len(y))
	for i := range y {
		r[i] = y[i] - my
		if sxx > 0 {
			r[i] -= sxy / sxx * (x[i] - mx)
		}
	}
	return r
}

func mean(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(max(len(v), 1))
}

func sd(v []float64) float64 {
	if len(v) < 2 {
		return 0
	}
	m := mean(v)
	var s float64
	for _, x := range v {
		s += (x - m) * (x - m)
	}
	return math.Sqrt(s / float64(len(v)-1))
}

// tCritical001 is Student's t at one-sided α = 0.001 by degrees of
// freedom; tQuantile001 interpolates it in 1/df.
var tCritical001 = []struct {
	df int
	t  float64
}{{1, 318.3}, {2, 22.33}, {3, 10.21}, {4, 7.173}, {5, 5.893}, {6, 5.208}, {7, 4.785}, {8, 4.501},
	{9, 4.297}, {10, 4.144}, {12, 3.930}, {15, 3.733}, {20, 3.552}, {30, 3.385}, {60, 3.232}, {120, 3.160}}

func tQuantile001(df int) float64 {
	if df < 1 {
		return math.Inf(1)
	}
	for i, c := range tCritical001 {
		if df == c.df {
			return c.t
		}
		if df < c.df {
			p := tCritical001[i-1]
			f := (1/float64(p.df) - 1/float64(df)) / (1/float64(p.df) - 1/float64(c.df))
			return p.t + f*(c.t-p.t)
		}
	}
	return 3.090 // the normal's
}

// edgeMeans is the mean of v over the first and the last third of the
// windows, in time order.
func edgeMeans(v []float64) (first, last float64) {
	k := max(len(v)/3, 1)
	return mean(v[:k]), mean(v[len(v)-k:])
}

// adjustForContention rechecks a time-only rise against the contention z
// of each window. It keeps d rising when the time slope, with the
// contention regressed out, is still significant (t at α = 0.001) and
// still at least costRise over the soak; otherwise it makes the cost
// inconclusive and says why. A constant or unknown contention leaves d as
// it is.
func adjustForContention(d CostDrift, x, y, z []float64) CostDrift {
	if len(z) != len(x) {
		return d
	}
	d.ContentionStart, d.ContentionEnd = edgeMeans(z)
	if !d.Rising {
		return d
	}
	f := fitPartial(x, z, y)
	if !f.ok && f.R2 == 0 {
		d.AdjustedChange = d.Change
		return d // the contention held still: the time-only fit stands
	}
	t0, t1 := minMax(x)
	base := mean(y) - f.Slope*(mean(x)-t0)
	if base > 0 {
		d.AdjustedChange = f.Slope * (t1 - t0) / base
	}
	switch {
	case !f.ok || f.R2 >= contentionCollinear:
		d.Reason = fmt.Sprintf("CPU per request inconclusive: it rose %+.0f %% while the machine's other work rose from %.2f to %.2f cores in step with it; cannot separate a CPU leak from the contention (soak on a quieter machine)",
			100*d.Change, d.ContentionStart, d.ContentionEnd)
	case f.Slope/f.SE >= tQuantile001(f.DF) && d.AdjustedChange >= costRise:
		d.Reason += fmt.Sprintf(" (%+.0f %% of it beyond what the machine's other work, %.2f to %.2f cores, explains)",
			100*d.AdjustedChange, d.ContentionStart, d.ContentionEnd)
		return d
	default:
		d.Reason = fmt.Sprintf("CPU per request inconclusive: it rose %+.0f %% while the machine's other work went from %.2f to %.2f cores; the contention explains the rise (%+.0f %% is left to time, not a CPU leak)",
			100*d.Change, d.ContentionStart, d.ContentionEnd, 100*d.AdjustedChange)
	}
	d.Rising, d.Inconclusive = false, true
	return d
}
