package verdict

import (
	"fmt"
	"math"
	"slices"

	"github.com/soakd/soakd/soak/trend"
)

// Contention correction of the CPU cost drift. On a busy machine the CPU
// seconds a request costs truly rise without any leak in the target's
// work: caches and SMT siblings are shared, the clock drops, kernel locks
// and softirqs charged to the target are contended, and a fixed
// background cost is spread over fewer requests. The cost is therefore
// fitted jointly against time and the machine's contention (Contention),
// and called rising only when the time trend stands apart from what the
// contention explains.
const (
	// contentionMinSD is the spread of a contention figure (cores, or
	// seconds of wait per CPU second) under which it counts as constant
	// and is left out of the fit.
	contentionMinSD = 0.02
	// contentionCollinear is the share of the time's variance that the
	// contention follows at or above which the two cannot be separated.
	contentionCollinear = 0.9
	// contentionRiseShare and contentionRiseMin: a contention figure rose
	// (or fell) over the soak when its last third's mean is above (below)
	// its first third's by at least this share of the first and this much
	// (cores, or seconds of wait per CPU second). A contention that held
	// cannot explain a cost that rose, however closely its small wander
	// follows the time.
	contentionRiseShare = 0.1
	contentionRiseMin   = 0.05
	// levelBins and levelBinWindows: a contention figure that moved is
	// fitted with up to levelBins level bins, one per levelBinWindows
	// windows (levelBasis).
	levelBins       = 4
	levelBinWindows = 8
)

// Contention is the machine's contention over each cost window: Others,
// the cores busy with other work than the target's and soakd's (steal
// included, for /proc/stat counts it busy); Wait, the target's run-queue
// wait per CPU second it got (schedstat), which still moves when Others
// is pinned at a full machine; Client, soakd's own cores, given only in
// an open loop (in a closed loop soakd's load follows the target's
// throughput, and so its cost: counted, a leak's own fall of throughput
// would read as contention in step with it). Any may be nil when unknown.
// The CPU clock's frequency is not read: /sys/devices/system/cpu/*/cpufreq
// is absent in containers and VMs, where shared machines mostly are.
type Contention struct {
	Others, Wait, Client []float64
}

// partialFit is the cost's time slope once the contention is regressed
// out (Frisch–Waugh: time and cost are both regressed on the contention,
// then the residual cost on the residual time), with its standard error
// (inflated by the wander of the residuals) and the share of the time's variance that the contention follows (R²).
type partialFit struct {
	Slope, SE, R2 float64
	DF            int
	ok            bool
}

// fitPartial fits y = a + b·t + Σ cₖ·zₖ by least squares and returns b;
// a covariate that barely varies, or that the others already span, is
// left out.
func fitPartial(t, y []float64, zs ...[]float64) partialFit {
	basis := orthoBasis(zs, len(t))
	if len(basis) == 0 {
		return partialFit{}
	}
	tr, yr := residualOn(basis, t), residualOn(basis, y)
	tc := residualOn(nil, t)
	stt, sty, tt := dot(tr, tr), dot(tr, yr), dot(tc, tc)
	df := len(t) - 2 - len(basis)
	if df < 1 || tt <= 0 || stt <= 1e-9*tt {
		return partialFit{R2: 1}
	}
	b := sty / stt
	var ss float64
	for i := range yr {
		e := yr[i] - b*tr[i]
		ss += e * e
	}
	// The windows wander about the fit as they do about the time-only
	// line: the slope's variance is inflated by the wander its residuals
	// show (trend.WanderPosterior), as the time-only decision's is, or a
	// cost that stepped with the contention and then wandered reads as a
	// rise beyond it.
	res := make([]float64, len(yr))
	for i := range yr {
		res[i] = yr[i] - b*tr[i]
	}
	vif := trend.WanderPosterior(t, res).Inflation(t)
	return partialFit{Slope: b, SE: math.Sqrt(ss / float64(df) / stt * vif), R2: 1 - stt/tt, DF: df, ok: true}
}

// withoutContention is y less the part of it that the contention
// figures zs follow beyond the trend along u: each figure that varies
// (contentionMinSD) is taken off the line in u and off the figures
// before it, and its share of y removed. The least-squares slope of y on
// u is unchanged; what goes is the cost's wander that the machine's
// contention explains (a contention that jitters about a constant
// level makes the cost jitter with it), which would otherwise read as
// wander of the cost and widen the trend test.
func withoutContention(u, y []float64, zs ...[]float64) []float64 {
	basis := [][]float64{residualOn(nil, u)}
	for _, z := range zs {
		if len(z) != len(y) || sd(z) < contentionMinSD {
			continue
		}
		c := residualOn(nil, z)
		if r := residualOn(basis, z); dot(r, r) > 0.1*dot(c, c) {
			basis = append(basis, r)
		}
	}
	out := append([]float64(nil), y...)
	yc := residualOn(nil, y)
	for _, q := range basis[1:] {
		g := dot(yc, q) / dot(q, q)
		for i := range out {
			out[i] -= g * q[i]
		}
	}
	return out
}

// orthoBasis centres the covariates of length n and orthogonalises them
// (Gram–Schmidt), dropping one that is missing, barely varies
// (contentionMinSD) or lies in the span of those before it.
func orthoBasis(zs [][]float64, n int) [][]float64 {
	var basis [][]float64
	for _, z := range zs {
		if len(z) != n || sd(z) < contentionMinSD {
			continue
		}
		c := residualOn(nil, z)
		r := residualOn(basis, z)
		if dot(r, r) > 1e-6*dot(c, c) {
			basis = append(basis, r)
		}
	}
	return basis
}

// residualOn is y centred, less its projection on each of the orthogonal,
// centred columns of basis.
func residualOn(basis [][]float64, y []float64) []float64 {
	m := mean(y)
	r := make([]float64, len(y))
	for i := range y {
		r[i] = y[i] - m
	}
	for _, q := range basis {
		f := dot(r, q) / dot(q, q)
		for i := range r {
			r[i] -= f * q[i]
		}
	}
	return r
}

// dot is the dot product of a and b, of equal length.
func dot(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
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

// tCritical005 is Student's t at one-sided α = 0.005 (costAlpha, the
// level of the time-only trend test) by degrees of freedom.
var tCritical005 = tTable{normal: 2.576, rows: []tRow{{1, 63.66}, {2, 9.925}, {3, 5.841}, {4, 4.604}, {5, 4.032},
	{6, 3.707}, {7, 3.499}, {8, 3.355}, {9, 3.250}, {10, 3.169}, {12, 3.055}, {15, 2.947}, {20, 2.845},
	{30, 2.750}, {60, 2.660}, {120, 2.617}}}

// tQuantile005 is tCritical005 at df; +Inf below one degree of freedom.
func tQuantile005(df int) float64 {
	if df < 1 {
		return math.Inf(1)
	}
	return tCritical005.at(df)
}

// edgeMeans is the mean of v over the first and the last third of the
// windows, in time order.
func edgeMeans(v []float64) (first, last float64) {
	k := max(len(v)/3, 1)
	return mean(v[:k]), mean(v[len(v)-k:])
}

// adjustForContention rechecks a time-only rise against the contention
// of each window. It keeps d rising when the time slope, with the
// contention regressed out, is still significant (t at α = 0.005, its
// variance inflated by the wander of the fit's residuals) and
// still at least costRise over the soak; otherwise it makes the cost
// inconclusive and says why. A constant or unknown contention leaves d as
// it is.
func adjustForContention(d CostDrift, x, y []float64, c Contention) CostDrift {
	d = contentionEdges(d, len(x), c)
	if !d.Rising {
		return d
	}
	// Only a contention figure that moved can explain a cost that rose:
	// one that held is left out of the fit, for its small wander can
	// follow the time by chance. Each counts when it rose or when it fell,
	// for a request's CPU cost moves either way with it: shared caches
	// and a lower clock make it dearer on a busy machine, and a ping-pong
	// over loopback is dearer on a quiet one, where its client and server
	// run on separate cores and every request crosses between them (a
	// clean C server's cost rose 73 % when other work fell from 1.6 to
	// 0.66 cores; a clean Go server's rose 55 % at --rate 1000 while
	// other work held and the target's run-queue wait fell). A leak's own
	// longer requests also lower the wait per CPU second, so on a busy
	// machine a real CPU leak whose wait falls in step reads inconclusive;
	// on a quiet one the wait stays near zero and does not count.
	var rose [][]float64
	if contentionMoved(d.ContentionStart, d.ContentionEnd, len(c.Others) == len(x)) {
		rose = append(rose, c.Others)
	}
	if contentionMoved(d.WaitStart, d.WaitEnd, len(c.Wait) == len(x)) {
		rose = append(rose, c.Wait)
	}
	if contentionMoved(d.ClientStart, d.ClientEnd, len(c.Client) == len(x)) {
		rose = append(rose, c.Client)
	}
	if len(rose) == 0 {
		d.AdjustedChange = d.Change
		return d // no contention figure moved: none explains a rise
	}
	f := fitPartial(x, y, levelBasis(rose, len(x))...)
	if !f.ok && f.R2 == 0 {
		d.AdjustedChange = d.Change
		return d // the contention held still, or is unknown: the time-only fit stands
	}
	t0, t1 := minMax(x)
	if base := mean(y) - f.Slope*(mean(x)-t0); base > 0 {
		d.AdjustedChange = f.Slope * (t1 - t0) / base
	}
	machine := contentionText(d)
	switch {
	case !f.ok || f.R2 >= contentionCollinear:
		d.Reason = fmt.Sprintf("CPU per request inconclusive: it rose %+.0f %% while %s, in step with it; cannot tell a leak from the machine's contention (soak on a quieter machine)",
			100*d.Change, machine)
	case f.Slope/f.SE >= tQuantile005(f.DF) && d.AdjustedChange >= costRise:
		d.Reason += fmt.Sprintf(" (%+.0f %% of it beyond what the machine's contention explains: %s)", 100*d.AdjustedChange, machine)
		return d
	default:
		d.Reason = fmt.Sprintf("CPU per request inconclusive: it rose %+.0f %% while %s; the contention explains the rise (what is left to time, %+.0f %%, is not significant or under %.0f %%)",
			100*d.Change, machine, 100*d.AdjustedChange, 100*costRise)
	}
	d.Rising, d.Inconclusive = false, true
	return d
}

// contentionEdges sets d's contention figures over the first and last
// third of the n windows, for each figure known over all of them.
func contentionEdges(d CostDrift, n int, c Contention) CostDrift {
	if len(c.Others) == n {
		d.ContentionStart, d.ContentionEnd = edgeMeans(c.Others)
	}
	if len(c.Wait) == n {
		d.WaitStart, d.WaitEnd = edgeMeans(c.Wait)
	}
	if len(c.Client) == n {
		d.ClientStart, d.ClientEnd = edgeMeans(c.Client)
	}
	return d
}

// contentionRose tells whether a contention figure, when known, rose
// over the soak from first to last (the thirds' means).
func contentionRose(first, last float64, known bool) bool {
	return known && last-first >= max(contentionRiseShare*first, contentionRiseMin)
}

// contentionMoved tells whether a contention figure, when known, rose or
// fell over the soak by as much as contentionRose asks of a rise.
func contentionMoved(first, last float64, known bool) bool {
	return contentionRose(first, last, known) || contentionRose(last, first, known)
}

// contentionText says how the machine's contention went over the soak.
func contentionText(d CostDrift) string {
	s := fmt.Sprintf("the machine's other work went from %.2f to %.2f cores", d.ContentionStart, d.ContentionEnd)
	if d.WaitStart > 0 || d.WaitEnd > 0 {
		s += fmt.Sprintf(", the target's run-queue wait from %.2f to %.2f s per CPU second", d.WaitStart, d.WaitEnd)
	}
	if d.ClientStart > 0 || d.ClientEnd > 0 {
		s += fmt.Sprintf(", soakd's own CPU from %.2f to %.2f cores", d.ClientStart, d.ClientEnd)
	}
	return s
}

// levelBasis is each contention figure of zs as it is, followed by
// indicators of its level bins (up to levelBins, cut at its quantiles):
// the cost's dependence on the contention is fitted as a line plus one
// step per bin, which takes in an effect that curves (a ping-pong over
// loopback is far dearer on an idle machine than on one with a little
// other work) and one that lags the figure, read every few seconds.
func levelBasis(zs [][]float64, n int) [][]float64 {
	k := min(levelBins, n/levelBinWindows)
	var out [][]float64
	for _, z := range zs {
		out = append(out, z)
		if k < 2 || len(z) != n {
			continue
		}
		s := slices.Clone(z)
		slices.Sort(s)
		for j := 1; j < k; j++ {
			cut := s[j*n/k]
			ind := make([]float64, n)
			for i, v := range z {
				if v >= cut {
					ind[i] = 1
				}
			}
			out = append(out, ind)
		}
	}
	return out
}
