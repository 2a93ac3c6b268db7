package compare

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// MinBlocks is the fewest time blocks a run needs for its block metrics
// to be judged.
const MinBlocks = 6

// totals are a resample's sums over its blocks.
type totals struct {
	seconds, requests, errors float64
	cpu, cpuRequests          float64 // over the blocks with a CPU reading
	p50, p99, latRequests     float64 // request-weighted sums of the blocks' quantiles
	p999, p999Requests        float64
}

func (t *totals) add(b Block) {
	t.seconds += b.Seconds
	t.requests += b.Requests
	t.errors += b.Errors
	if !math.IsNaN(b.CPUSeconds) && b.Requests > 0 {
		t.cpu += b.CPUSeconds
		t.cpuRequests += b.Requests
	}
	if b.P99 > 0 && b.Requests > 0 {
		t.p50 += b.P50 * b.Requests
		t.p99 += b.P99 * b.Requests
		t.latRequests += b.Requests
	}
	if b.P999 > 0 && b.Requests > 0 {
		t.p999 += b.P999 * b.Requests
		t.p999Requests += b.Requests
	}
}

// figures are a run's block metrics: latency p50, p99 and p99.9
// (seconds), CPU seconds per request, requests per second; NaN when not
// known.
type figures [5]float64

const (
	fP50 = iota
	fP99
	fP999
	fCPU
	fTput
)

func (t totals) figures() figures {
	return figures{ratio(t.p50, t.latRequests), ratio(t.p99, t.latRequests), ratio(t.p999, t.p999Requests),
		ratio(t.cpu, t.cpuRequests), ratio(t.requests, t.seconds)}
}

func ratio(a, b float64) float64 {
	if b <= 0 {
		return math.NaN()
	}
	return a / b
}

func sum(bs []Block) totals {
	var t totals
	for _, b := range bs {
		t.add(b)
	}
	return t
}

// resample sums len(bs) blocks drawn from bs with replacement.
func resample(rng *rand.Rand, bs []Block) totals {
	var t totals
	for range bs {
		t.add(bs[rng.IntN(len(bs))])
	}
	return t
}

// relatives bootstraps new/old − 1 of each figure: resamples of each
// run's blocks, drawn independently, give the percentile interval, which
// is then widened by √(k/(k−1)) for the few blocks (k the smaller
// count), as a percentile interval from k blocks is too narrow by about
// that much.
func relatives(old, cur []Block, o Options) (point figures, cis [len(figures{})][2]float64) {
	fo, fn := sum(old).figures(), sum(cur).figures()
	for i := range point {
		point[i] = fn[i]/fo[i] - 1
	}
	rng := rand.New(rand.NewPCG(o.Seed, 0x5eed))
	draws := make([][]float64, len(point))
	for range o.Resamples {
		ro, rn := resample(rng, old).figures(), resample(rng, cur).figures()
		for i := range point {
			if d := rn[i]/ro[i] - 1; !math.IsNaN(d) && !math.IsInf(d, 0) {
				draws[i] = append(draws[i], d)
			}
		}
	}
	k := float64(min(len(old), len(cur)))
	for i := range point {
		widen := math.Sqrt(k/(k-1)) * inflation(old, cur, i)
		cis[i] = [2]float64{math.NaN(), math.NaN()}
		if len(draws[i]) < o.Resamples/2 {
			continue
		}
		slices.Sort(draws[i])
		lo, hi := quantile(draws[i], 0.025), quantile(draws[i], 0.975)
		cis[i] = [2]float64{point[i] - widen*(point[i]-lo), point[i] + widen*(hi-point[i])}
	}
	return point, cis
}

// inflation widens an interval for the blocks' autocorrelation, which a
// bootstrap of whole blocks takes for independent: √((1+ρ)/(1−ρ)), ρ the
// lag-1 autocorrelation of the blocks' figures about each run's mean,
// pooled over both runs, at least 0 and at most 0.8.
func inflation(old, cur []Block, fig int) float64 {
	var num, den float64
	for _, bs := range [][]Block{old, cur} {
		var v []float64
		for _, b := range bs {
			var t totals
			t.add(b)
			if f := t.figures()[fig]; !math.IsNaN(f) {
				v = append(v, f)
			}
		}
		if len(v) < 3 {
			continue
		}
		var mean float64
		for _, x := range v {
			mean += x / float64(len(v))
		}
		for j, x := range v {
			den += (x - mean) * (x - mean)
			if j > 0 {
				num += (x - mean) * (v[j-1] - mean)
			}
		}
	}
	if den <= 0 {
		return 1
	}
	rho := min(max(num/den, 0), 0.8)
	return math.Sqrt((1 + rho) / (1 - rho))
}

// quantile of sorted v, interpolated.
func quantile(v []float64, q float64) float64 {
	pos := q * float64(len(v)-1)
	i := int(pos)
	if i+1 >= len(v) {
		return v[len(v)-1]
	}
	return v[i] + (pos-float64(i))*(v[i+1]-v[i])
}

// blockMetric describes one relative block metric.
type blockMetric struct {
	name, unit     string
	fig            int
	margin         func(Margins) float64
	higherIsBetter bool
}

var blockMetrics = []blockMetric{
	{LatencyP50, "seconds", fP50, func(m Margins) float64 { return m.Latency }, false},
	{LatencyP99, "seconds", fP99, func(m Margins) float64 { return m.Latency }, false},
	{LatencyP999, "seconds", fP999, func(m Margins) float64 { return m.Latency }, false},
	{CPUPerRequest, "seconds/request", fCPU, func(m Margins) float64 { return m.CPU }, false},
	{Throughput, "requests/second", fTput, func(m Margins) float64 { return m.Throughput }, true},
}

// compareBlocks judges the block metrics: latency, CPU per request and
// throughput by the bootstrap, the error rate by its overdispersed
// standard errors; p99.9 is shown unjudged when the runs have it for the
// whole run only.
func compareBlocks(old, cur Run, o Options) map[string]Metric {
	out := map[string]Metric{}
	fo, fn := sum(old.Blocks).figures(), sum(cur.Blocks).figures()
	few := len(old.Blocks) < MinBlocks || len(cur.Blocks) < MinBlocks
	var point figures
	var cis [len(figures{})][2]float64
	if !few {
		point, cis = relatives(old.Blocks, cur.Blocks, o)
	}
	for _, bm := range blockMetrics {
		if math.IsNaN(fo[bm.fig]) && math.IsNaN(fn[bm.fig]) {
			continue // neither run has it: no load, or no CPU readings
		}
		m := Metric{Unit: bm.unit, Old: fo[bm.fig], New: fn[bm.fig], Relative: true, Margin: bm.margin(o.Margins),
			HigherIsBetter: bm.higherIsBetter, Difference: fn[bm.fig]/fo[bm.fig] - 1, CI95: [2]float64{math.NaN(), math.NaN()}}
		if few {
			m.Verdict, m.Reason = Inconclusive, fmt.Sprintf("a run has fewer than %d time blocks in its soak (old %d, new %d): run both longer", MinBlocks, len(old.Blocks), len(cur.Blocks))
		} else {
			m.Difference, m.CI95 = point[bm.fig], cis[bm.fig]
			m.Verdict, m.Reason = judgeRelative(m)
		}
		out[bm.name] = m
	}
	if t := sum(old.Blocks); t.requests > 0 || sum(cur.Blocks).requests > 0 {
		out[ErrorRate] = compareErrors(old.Blocks, cur.Blocks, o.Margins, few)
	}
	guardContention(out, old.Contention, cur.Contention)
	if _, judged := out[LatencyP999]; !judged && old.P999 > 0 && cur.P999 > 0 {
		out[LatencyP999] = Metric{Unit: "seconds", Old: old.P999, New: cur.P999, Difference: cur.P999/old.P999 - 1,
			CI95: [2]float64{math.NaN(), math.NaN()}, Relative: true, Margin: o.Margins.Latency, Verdict: Unjudged,
			Reason: "the runs hold p99.9 for the whole run only, not per time block: shown, not judged"}
	}
	return out
}

// judgeRelative judges a relative metric, flipping the interval of one
// whose higher values are better.
func judgeRelative(m Metric) (string, string) {
	ci := m.CI95
	if !finite(ci[0], ci[1]) {
		// relatives' ratios of block sums: a run whose figure is zero or
		// missing in its blocks (no requests, no CPU readings) has none
		return Inconclusive, "no interval: a run's figure is zero or missing in its time blocks (no requests, or no readings), so the ratio of the two is not defined"
	}
	if m.HigherIsBetter {
		ci = [2]float64{-ci[1], -ci[0]}
	}
	v := Judge(ci, m.Margin)
	pct := func(x float64) string { return fmt.Sprintf("%+.1f %%", 100*x) }
	switch v {
	case Regressed:
		return v, fmt.Sprintf("worse by more than the margin (%s): the interval is [%s, %s]", pct(m.Margin), pct(m.CI95[0]), pct(m.CI95[1]))
	case Same:
		return v, fmt.Sprintf("the interval [%s, %s] lies within ±%.1f %%", pct(m.CI95[0]), pct(m.CI95[1]), 100*m.Margin)
	case Improved:
		return v, fmt.Sprintf("better: the interval is [%s, %s]", pct(m.CI95[0]), pct(m.CI95[1]))
	}
	return v, fmt.Sprintf("the interval [%s, %s] is too wide to decide against ±%.1f %%: run both longer (or interleave them: soakd ab)",
		pct(m.CI95[0]), pct(m.CI95[1]), 100*m.Margin)
}

// compareErrors judges the difference of the error rates, in percentage
// points. Each run's standard error is the larger of the binomial one
// (with one error and one success added, so a run with none still has
// one) and the spread of its blocks' rates about the run's (errors come
// in bursts: overdispersion); the two combine in quadrature.
func compareErrors(old, cur []Block, m Margins, few bool) Metric {
	ro, seo := errorRate(old)
	rn, sen := errorRate(cur)
	d := 100 * (rn - ro)
	half := 100 * z95 * math.Hypot(seo, sen)
	mt := Metric{Unit: "points", Old: 100 * ro, New: 100 * rn, Difference: d, CI95: [2]float64{d - half, d + half}, Margin: m.ErrorPoints}
	if !finite(ro, rn) {
		mt.CI95 = [2]float64{math.NaN(), math.NaN()}
		mt.Verdict, mt.Reason = Inconclusive, fmt.Sprintf("a run made no requests in its soak (old %.0f, new %.0f): no error rates to compare", sum(old).requests, sum(cur).requests)
		return mt
	}
	if few {
		mt.CI95 = [2]float64{math.NaN(), math.NaN()}
		mt.Verdict, mt.Reason = Inconclusive, fmt.Sprintf("a run has fewer than %d time blocks in its soak: run both longer", MinBlocks)
		return mt
	}
	mt.Verdict = Judge(mt.CI95, mt.Margin)
	mt.Reason = fmt.Sprintf("%.3g %% → %.3g %% of requests failed; the difference's interval is [%+.3g, %+.3g] points against a margin of ±%.3g",
		mt.Old, mt.New, mt.CI95[0], mt.CI95[1], mt.Margin)
	return mt
}

// errorRate is a run's error rate and its standard error.
func errorRate(bs []Block) (rate, se float64) {
	t := sum(bs)
	if t.requests <= 0 {
		return math.NaN(), math.NaN()
	}
	rate = t.errors / t.requests
	adj := (t.errors + 1) / (t.requests + 2)
	binom := adj * (1 - adj) / (t.requests + 2)
	var ss float64
	for _, b := range bs {
		r := b.Errors - rate*b.Requests
		ss += r * r
	}
	k := float64(len(bs))
	over := 0.0
	if k > 1 {
		over = k / (k - 1) * ss / (t.requests * t.requests)
	}
	return rate, math.Sqrt(math.Max(binom, over))
}

// ContentionShare is how much the runs' contention may differ, as a
// share of the larger, before a difference in latency, CPU per request or
// throughput is no longer the build's to claim; ContentionFloor is the
// contention (seconds waited per CPU second) below which a machine counts
// as quiet whatever the share.
const (
	ContentionShare = 0.25
	ContentionFloor = 0.2
)

// guardContention turns a regressed or improved latency, CPU per request
// or throughput into inconclusive when the machine's contention differed
// between the runs: a target that waits longer for a core also spends
// more CPU per request (caches and TLBs shared with the other load) and
// answers later, and an interval from within each run cannot tell that
// from the build. A same verdict stands.
func guardContention(ms map[string]Metric, old, cur float64) {
	if math.IsNaN(old) || math.IsNaN(cur) {
		return
	}
	hi := math.Max(old, cur)
	if hi < ContentionFloor || math.Abs(cur-old) <= ContentionShare*hi {
		return
	}
	for _, bm := range blockMetrics {
		m, ok := ms[bm.name]
		if !ok || (m.Verdict != Regressed && m.Verdict != Improved) {
			continue
		}
		m.Reason = fmt.Sprintf("%s, but the machine's contention differed between the runs (the target waited %.2f s for a core per CPU second in the old run, %.2f s in the new): the difference may be the machine's, not the build's; compare them interleaved (soakd ab), or on a quieter machine",
			m.Verdict, old, cur)
		m.Verdict = Inconclusive
		ms[bm.name] = m
	}
}
