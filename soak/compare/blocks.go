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
	cpu, cpuRequests          float64   // over the blocks with a CPU reading
	ctlCPU, ctlSelf           float64   // over the blocks with both the target's and soakd's CPU
	p50, latRequests          float64   // request-weighted sum of the blocks' p50s
	p99, p999                 []float64 // the blocks' intervals' p99s and p99.9s: the figure is their median
}

func (t *totals) add(b Block) {
	t.seconds += b.Seconds
	t.requests += b.Requests
	t.errors += b.Errors
	if !math.IsNaN(b.CPUSeconds) && b.Requests > 0 {
		t.cpu += b.CPUSeconds
		t.cpuRequests += b.Requests
		if b.SelfCPUSeconds > 0 {
			t.ctlCPU += b.CPUSeconds
			t.ctlSelf += b.SelfCPUSeconds
		}
	}
	if b.P99 > 0 && b.Requests > 0 {
		t.p50 += b.P50 * b.Requests
		t.latRequests += b.Requests
		t.p99 = append(t.p99, b.intervals(b.P99s, b.P99)...)
	}
	if b.P999 > 0 && b.Requests > 0 {
		t.p999 = append(t.p999, b.intervals(b.P999s, b.P999)...)
	}
}

// intervals are a block's intervals' values of a quantile: those it
// holds, or its own figure as one when it holds none.
func (b Block) intervals(v []float64, fig float64) []float64 {
	if len(v) > 0 {
		return v
	}
	return []float64{fig}
}

// figures are a run's block metrics: latency p50 (the blocks' mean,
// weighted by requests), p99 and p99.9 (the median over the blocks'
// intervals: see Block.P99), in seconds, CPU seconds per request,
// requests per second, and the
// target's CPU per CPU second of soakd's own (the controlled CPU cost:
// see controlCPU); NaN when not known.
type figures [6]float64

const (
	fP50 = iota
	fP99
	fP999
	fCPU
	fTput
	fCPUCtl
)

func (t totals) figures() figures {
	return figures{ratio(t.p50, t.latRequests), median(t.p99), median(t.p999),
		ratio(t.cpu, t.cpuRequests), ratio(t.requests, t.seconds), ratio(t.ctlCPU, t.ctlSelf)}
}

// median of v, which it leaves alone; NaN when v is empty.
func median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	return quantile(slices.Sorted(slices.Values(v)), 0.5)
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

// resample sums len(old) block pairs drawn with replacement: the same
// index from each run, so that what the two runs share by their position
// in the soak (a warm-up's tail, a leak's growing cost, and a run
// compared with itself wholly) falls on both alike.
func resample(rng *rand.Rand, old, cur []Block) (to, tn totals) {
	for range old {
		j := rng.IntN(len(old))
		to.add(old[j])
		tn.add(cur[j])
	}
	return to, tn
}

// logRatio is ln(n/o), NaN when either is not a positive number.
func logRatio(n, o float64) float64 {
	if !(n > 0 && o > 0) || math.IsInf(n, 0) || math.IsInf(o, 0) {
		return math.NaN()
	}
	return math.Log(n / o)
}

// relatives bootstraps ln(new/old) of each figure over pairs of blocks,
// the old run's block j with the new run's block j (both cut into as many
// blocks: see align), and gives the point and the percentile interval on
// that scale, widened by √(k/(k−1)) for the few blocks (a percentile
// interval from k blocks is too narrow by about that much) and for the
// pairs' autocorrelation (see inflation). On the log scale a ratio's
// interval respects its bound: back as new/old − 1 it never reaches
// below −100 %. A run compared with itself has a zero difference in every
// pair, and so an interval of [0, 0].
//
// spread is each figure's between-run spread (RunSpread, on the same log
// scale): what the blocks cannot see, a constant offset of one run
// against the other. Each side of the interval is widened by
// zSpread·√2·spread in quadrature (two runs, each with its own offset).
func relatives(old, cur []Block, o Options, spread figures) (point figures, cis [len(figures{})][2]float64) {
	old, cur = align(old, cur)
	fo, fn := sum(old).figures(), sum(cur).figures()
	for i := range point {
		point[i] = logRatio(fn[i], fo[i])
	}
	rng := rand.New(rand.NewPCG(o.Seed, 0x5eed))
	draws := make([][]float64, len(point))
	for range o.Resamples {
		to, tn := resample(rng, old, cur)
		ro, rn := to.figures(), tn.figures()
		for i := range point {
			if d := logRatio(rn[i], ro[i]); !math.IsNaN(d) {
				draws[i] = append(draws[i], d)
			}
		}
	}
	k := float64(len(old))
	for i := range point {
		widen := math.Sqrt(k/(k-1)) * inflation(old, cur, i)
		cis[i] = [2]float64{math.NaN(), math.NaN()}
		if len(draws[i]) < o.Resamples/2 || math.IsNaN(point[i]) {
			continue
		}
		slices.Sort(draws[i])
		lo, hi := quantile(draws[i], 0.025), quantile(draws[i], 0.975)
		b := zSpread * math.Sqrt2 * spread[i]
		cis[i] = [2]float64{point[i] - math.Hypot(widen*(point[i]-lo), b), point[i] + math.Hypot(widen*(hi-point[i]), b)}
	}
	return point, cis
}

// inflation widens an interval for the pairs' autocorrelation, which a
// bootstrap of whole blocks takes for independent: √((1+ρ)/(1−ρ)), ρ the
// lag-1 autocorrelation of the pairs' ln(new/old) about their mean, at
// least 0 and at most 0.8. A drift both runs share by position cancels in
// the pairs and does not widen it.
func inflation(old, cur []Block, fig int) float64 {
	var v []float64
	for j := range old {
		var to, tn totals
		to.add(old[j])
		tn.add(cur[j])
		if d := logRatio(tn.figures()[fig], to.figures()[fig]); !math.IsNaN(d) {
			v = append(v, d)
		}
	}
	if len(v) < 3 {
		return 1
	}
	var mean, num, den float64
	for _, x := range v {
		mean += x / float64(len(v))
	}
	for j, x := range v {
		den += (x - mean) * (x - mean)
		if j > 0 {
			num += (x - mean) * (v[j-1] - mean)
		}
	}
	if den <= 0 {
		return 1
	}
	rho := min(max(num/den, 0), 0.8)
	return math.Sqrt((1 + rho) / (1 - rho))
}

// align cuts two runs' blocks to as many: the run with more has its
// neighbours merged (block i of n into block ⌊i·k/n⌋ of k), so that
// block j of each covers the same share of its soak.
func align(old, cur []Block) ([]Block, []Block) {
	k := min(len(old), len(cur))
	return merge(old, k), merge(cur, k)
}

// merge merges bs into k consecutive blocks, k ≤ len(bs): totals summed
// (CPU NaN when any part's is), p50 weighted by requests, the parts'
// intervals' p99s and p99.9s joined (Block.P99).
func merge(bs []Block, k int) []Block {
	if len(bs) == k {
		return bs
	}
	out := make([]Block, k)
	w50 := make([]float64, k)
	for i, b := range bs {
		j := i * k / len(bs)
		m := &out[j]
		if w50[j] == 0 && m.Seconds == 0 {
			m.Start = b.Start
		}
		m.Seconds += b.Seconds
		m.Requests += b.Requests
		m.Errors += b.Errors
		m.CPUSeconds += b.CPUSeconds // NaN stays NaN
		switch first := i == 0 || (i-1)*k/len(bs) != j; {
		case b.SelfCPUSeconds > 0 && (first || m.SelfCPUSeconds > 0):
			m.SelfCPUSeconds += b.SelfCPUSeconds
		default:
			m.SelfCPUSeconds = math.Inf(-1) // a part without it: none (0, below)
		}
		if b.P99 > 0 && b.Requests > 0 {
			m.P50 += b.P50 * b.Requests
			w50[j] += b.Requests
			m.P99s = append(m.P99s, b.intervals(b.P99s, b.P99)...)
		}
		if b.P999 > 0 && b.Requests > 0 {
			m.P999s = append(m.P999s, b.intervals(b.P999s, b.P999)...)
		}
	}
	for j := range out {
		if math.IsInf(out[j].SelfCPUSeconds, -1) {
			out[j].SelfCPUSeconds = 0
		}
		if w50[j] > 0 {
			out[j].P50, out[j].P99 = out[j].P50/w50[j], median(out[j].P99s)
		}
		if len(out[j].P999s) > 0 {
			out[j].P999 = median(out[j].P999s)
		}
	}
	return out
}

// AgainstSoakdCPU is Metric.Against for CPU per request judged against
// soakd's own.
const AgainstSoakdCPU = "soakd_cpu"

// controlCPU tells whether CPU per request is judged against soakd's own
// CPU per request (Options.ControlCPU): the same load (mode, concurrency
// and rate) in both runs, soakd's CPU read in every block of both, and
// both runs' points defined. soakd's load engine does the same work per
// request in both runs, so its own CPU per request moves only with the
// machine's cost per request (a loopback round trip that crosses cores or
// not, caches, frequency), which moves the target's alike: over 12 runs
// of one build on one machine the two correlated at 0.97, and the
// target's CPU per request relative to soakd's spread 3 times less than
// the target's own (docs/compare.md).
func controlCPU(old, cur Run, o Options, point figures) bool {
	if !o.ControlCPU || old.Rate != cur.Rate || old.Concurrency != cur.Concurrency || old.Concurrency == 0 {
		return false
	}
	for _, bs := range [][]Block{old.Blocks, cur.Blocks} {
		for _, b := range bs {
			if !(b.SelfCPUSeconds > 0) || math.IsNaN(b.CPUSeconds) {
				return false
			}
		}
	}
	return !math.IsNaN(point[fCPUCtl]) && !math.IsNaN(point[fCPU])
}

// runSpread is each block figure's between-run spread for these two
// runs: none when they are one run (every block alike: a run compared
// with itself has no offset against itself), none for throughput when
// both ran an open loop at one rate (the load set it, not the target),
// else rs's.
func runSpread(old, cur Run, rs RunSpread) figures {
	if sameBlocks(old.Blocks, cur.Blocks) {
		return figures{}
	}
	f := figures{fP50: rs.P50, fP99: rs.P99, fP999: rs.P999, fCPU: rs.CPU, fTput: rs.Throughput, fCPUCtl: rs.CPUControlled}
	if old.Rate > 0 && old.Rate == cur.Rate {
		f[fTput] = 0
	}
	return f
}

// sameBlocks tells whether two runs' blocks are identical: one run read
// twice.
func sameBlocks(a, b []Block) bool {
	eq := func(x, y float64) bool { return x == y || (math.IsNaN(x) && math.IsNaN(y)) }
	return slices.EqualFunc(a, b, func(x, y Block) bool {
		return eq(x.Seconds, y.Seconds) && eq(x.Requests, y.Requests) && eq(x.Errors, y.Errors) && eq(x.CPUSeconds, y.CPUSeconds) && eq(x.SelfCPUSeconds, y.SelfCPUSeconds) &&
			eq(x.P50, y.P50) && eq(x.P99, y.P99) && eq(x.P999, y.P999) && eq(x.Start, y.Start) &&
			slices.Equal(x.P99s, y.P99s) && slices.Equal(x.P999s, y.P999s)
	})
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
	marginOf       string // the margin's key
	margin         func(Margins) float64
	higherIsBetter bool
}

var blockMetrics = []blockMetric{
	{LatencyP50, "seconds", fP50, MarginLatency, func(m Margins) float64 { return m.Latency }, false},
	{LatencyP99, "seconds", fP99, MarginLatencyP99, func(m Margins) float64 { return m.LatencyP99 }, false},
	{LatencyP999, "seconds", fP999, MarginLatencyP999, func(m Margins) float64 { return m.LatencyP999 }, false},
	{CPUPerRequest, "seconds/request", fCPU, MarginCPU, func(m Margins) float64 { return m.CPU }, false},
	{Throughput, "requests/second", fTput, MarginThroughput, func(m Margins) float64 { return m.Throughput }, true},
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
	spread := runSpread(old, cur, o.RunSpread)
	if !few {
		point, cis = relatives(old.Blocks, cur.Blocks, o, spread)
	}
	for _, bm := range blockMetrics {
		if math.IsNaN(fo[bm.fig]) && math.IsNaN(fn[bm.fig]) {
			continue // neither run has it: no load, or no CPU readings
		}
		m := Metric{Unit: bm.unit, Old: fo[bm.fig], New: fn[bm.fig], Relative: true, Margin: bm.margin(o.Margins), MarginOf: bm.marginOf, MarginBy: o.MarginNames[bm.marginOf],
			HigherIsBetter: bm.higherIsBetter, Difference: fn[bm.fig]/fo[bm.fig] - 1, CI95: [2]float64{math.NaN(), math.NaN()}}
		if few {
			m.Verdict, m.Reason = Inconclusive, fmt.Sprintf("a run has fewer than %d time blocks in its soak (old %d, new %d): run both longer", MinBlocks, len(old.Blocks), len(cur.Blocks))
		} else {
			fig := bm.fig
			if fig == fCPU && controlCPU(old, cur, o, point) {
				// Judged on the target's CPU per CPU second of soakd's
				// own: see controlCPU. The raw figures stay Old and New.
				fig = fCPUCtl
				m.Control, m.Against = math.Expm1(point[fCPU]-point[fCPUCtl]), AgainstSoakdCPU
			}
			ci := cis[fig]
			m.Difference, m.CI95 = math.Expm1(point[fig]), [2]float64{math.Expm1(ci[0]), math.Expm1(ci[1])}
			if spread[fig] > 0 {
				m.RunSpread = math.Expm1(zSpread * math.Sqrt2 * spread[fig])
			}
			m.Verdict, m.Reason = judgeRelative(m)
			if fig == fCPUCtl {
				m.Reason = fmt.Sprintf("raw %+.1f %%, and soakd's own CPU per request %+.1f %% (the machine's cost per request: soakd's load did the same work in both runs); the target's against soakd's: %s",
					100*(fn[fCPU]/fo[fCPU]-1), 100*m.Control, m.Reason)
			}
		}
		out[bm.name] = m
	}
	if t := sum(old.Blocks); t.requests > 0 || sum(cur.Blocks).requests > 0 {
		out[ErrorRate] = compareErrors(old.Blocks, cur.Blocks, o.Margins, few)
	}
	if so, sn := stalledShare(old.Blocks), stalledShare(cur.Blocks); !math.IsNaN(so) && !math.IsNaN(sn) {
		out[StalledSeconds] = Metric{Unit: "points", Old: 100 * so, New: 100 * sn, Difference: 100 * (sn - so), CI95: [2]float64{math.NaN(), math.NaN()},
			Verdict: Unjudged, Reason: fmt.Sprintf("the share of the seconds whose p99 is over %g× the run's typical p99: shown, not judged, "+
				"because two runs of one build stalled in 0 %% to 22 %% of their seconds by themselves (docs/compare.md); "+
				"latency_p99 is the typical second's and does not see stalls in a minority of the seconds", StallFactor)}
	}
	guardContention(out, old.Contention, cur.Contention)
	if _, judged := out[LatencyP999]; !judged && old.P999 > 0 && cur.P999 > 0 {
		out[LatencyP999] = Metric{Unit: "seconds", Old: old.P999, New: cur.P999, Difference: cur.P999/old.P999 - 1,
			CI95: [2]float64{math.NaN(), math.NaN()}, Relative: true, Margin: o.Margins.LatencyP999, MarginOf: MarginLatencyP999, Verdict: Unjudged,
			Reason: "the runs hold p99.9 for the whole run only, not per time block: shown, not judged"}
	}
	return out
}

// StallFactor is how many times a run's typical (median) p99 an
// interval's p99 must exceed to count as stalled.
const StallFactor = 3.0

// stalledShare is the share of the blocks' progress intervals whose p99
// is over StallFactor times their median; NaN with fewer than 20
// intervals. A stall (a collector's pause, a machine that took the
// cores) shows in a minority of the seconds, which the typical second's
// p99 (Block.P99) leaves out: this shows it.
func stalledShare(bs []Block) float64 {
	v := sum(bs).p99
	if len(v) < 20 {
		return math.NaN()
	}
	typical, n := median(v), 0
	for _, x := range v {
		if x > StallFactor*typical {
			n++
		}
	}
	return float64(n) / float64(len(v))
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
	spread := ""
	if m.RunSpread > 0 {
		spread = fmt.Sprintf(" (widened by ±%.0f %% for how far two runs of one build differ by themselves)", 100*m.RunSpread)
	}
	switch v {
	case Regressed:
		return v, fmt.Sprintf("worse by more than the margin, %s: the interval is [%s, %s]%s", m.MarginText(), pct(m.CI95[0]), pct(m.CI95[1]), spread)
	case Same:
		return v, fmt.Sprintf("the interval [%s, %s]%s lies within %s", pct(m.CI95[0]), pct(m.CI95[1]), spread, m.MarginText())
	case Improved:
		return v, fmt.Sprintf("better by more than the margin, %s: the interval is [%s, %s]%s", m.MarginText(), pct(m.CI95[0]), pct(m.CI95[1]), spread)
	}
	if m.RunSpread >= m.Margin {
		// Longer runs narrow what the blocks show, not the runs' own
		// offsets: this margin is finer than separate runs resolve.
		return v, fmt.Sprintf("the interval [%s, %s]%s is too wide to decide against %s, and two separate runs differ by themselves by more than that margin: interleave the builds (soakd ab), or widen %s",
			pct(m.CI95[0]), pct(m.CI95[1]), spread, m.MarginText(), m.marginFlag())
	}
	return v, fmt.Sprintf("the interval [%s, %s]%s is too wide to decide against %s: run both longer (or interleave them: soakd ab)",
		pct(m.CI95[0]), pct(m.CI95[1]), spread, m.MarginText())
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
	mt := Metric{Unit: "points", Old: 100 * ro, New: 100 * rn, Difference: d, CI95: [2]float64{d - half, d + half}, Margin: m.ErrorPoints, MarginOf: MarginErrorPoints}
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
// ContentionBusy is the contention at or above which the machine counts
// as busy whatever the share: the target's threads waited for a core at
// least as long as they ran.
const (
	ContentionShare = 0.25
	ContentionFloor = 0.2
	ContentionBusy  = 1.0
)

// guardContention turns a regressed or improved latency, CPU per request
// or throughput into inconclusive when the machine's contention differed
// between the runs, or the machine was busy (ContentionDeclines): a
// target that waits longer for a core also spends more CPU per request
// (caches and TLBs shared with the other load) and answers later, and an
// interval from within each run cannot tell that from the build; on a
// busy machine two processes of one build differ by where they ran (a
// soakd ab of identical builds with its threads waiting 2.5-3 s per CPU
// second read CPU per request +22 %, throughput −23 %, regressed). A same
// verdict stands.
func guardContention(ms map[string]Metric, old, cur float64) {
	why := ContentionDeclines(old, cur)
	if why == "" {
		return
	}
	for _, bm := range blockMetrics {
		m, ok := ms[bm.name]
		if !ok || !ContentionBound(bm.name, m.Verdict) {
			continue
		}
		m.Reason = fmt.Sprintf("%s, but %s (the target waited %.2f s for a core per CPU second it ran in the old run, %.2f s in the new): the difference may be the machine's, not the build's; compare them on a quieter machine",
			m.Verdict, why, old, cur)
		m.Verdict = Inconclusive
		ms[bm.name] = m
	}
}

// ContentionDeclines says why two contention readings (seconds waited
// for a core per CPU second) leave a latency, CPU or throughput verdict
// of regressed or improved to the machine, or "" when they do not: "the
// machine was busy" when either is at least ContentionBusy, "the
// machine's contention differed" when they differ by more than
// ContentionShare of the larger, the larger above ContentionFloor. ""
// when either is unknown (NaN).
func ContentionDeclines(old, cur float64) string {
	if math.IsNaN(old) || math.IsNaN(cur) {
		return ""
	}
	hi := math.Max(old, cur)
	switch {
	case hi >= ContentionBusy:
		return "the machine was busy"
	case hi >= ContentionFloor && math.Abs(cur-old) > ContentionShare*hi:
		return "the machine's contention differed"
	}
	return ""
}

// ContentionBound tells whether a metric's verdict must give way to a
// contention that differed: a regressed or improved latency, CPU per
// request or throughput.
func ContentionBound(metric, verdict string) bool {
	if verdict != Regressed && verdict != Improved {
		return false
	}
	for _, bm := range blockMetrics {
		if bm.name == metric {
			return true
		}
	}
	return false
}

// zSpread is the normal quantile the between-run spread is taken at:
// 99 %, not the blocks' 95 %. The spread is estimated from a dozen runs,
// and its tails are heavier than a normal's (a stall of a second moves a
// run's p99 threefold); at 95 % the simulated same server read regressed
// or improved in 8 of 600 pairs (1.3 %), at 99 % in 1 (sim_test.go,
// SOAKD_COMPARE_PAIRS=200).
const zSpread = 2.5758293035489
