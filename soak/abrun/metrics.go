package abrun

import (
	"math"

	"github.com/soakd/soakd/soak/compare"
	"github.com/soakd/soakd/soak/verdict"
)

// kind is how a metric's difference is estimated.
type kind int

const (
	// slope: B's per-request slope minus A's, each fitted on its own
	// requests; independent, so their variances add.
	slope kind = iota
	// logRatio: the mean over pairs of ln(B/A), reported as a share.
	logRatio
	// diff: the mean over pairs of B − A.
	diff
)

// metricDef is one judged metric, named and united as soakd compare
// names them.
type metricDef struct {
	name string // the JSON key, e.g. "rss_per_request"
	unit string
	kind kind
	// resource names the points of a slope metric; value reads a paired
	// metric from a block.
	resource string
	value    func(Block) float64
	// better is true when a larger value is better (throughput): its
	// regression is a drop.
	better bool
	// margin is the metric's margin as compare reports it, given A's
	// value (units per request, a share, or points), and its key.
	margin func(m compare.Margins, a float64) (float64, string)
}

// Columns name the table's columns of an A/B result: the builds' figures
// are each one's over all its blocks, the difference is paired.
var Columns = compare.Columns{
	Old: "A (pooled)", New: "B (pooled)", Difference: "B vs A (paired)",
	Note: "A and B (pooled): each build's figure over all its blocks (its own fit, for a slope). " +
		"B vs A (paired): the mean over pairs of blocks of ln(B/A), as a share (throughput, latency, CPU per request), " +
		"or of B − A (the error rate, in points); for a slope B's fit less A's. The interval and the verdict are the paired difference's.",
}

// Resources name the resource series a run records for each build.
const (
	ResourceRSS = "rss"
	ResourceFDs = "fds"
)

// defs is the table of judged metrics.
var defs = []metricDef{
	{name: compare.SlopeMetric(ResourceRSS), unit: "bytes/request", kind: slope, resource: ResourceRSS,
		margin: func(m compare.Margins, a float64) (float64, string) { return m.SlopeMarginOf("bytes", a) }},
	{name: compare.SlopeMetric(ResourceFDs), unit: "fds/request", kind: slope, resource: ResourceFDs,
		margin: func(m compare.Margins, a float64) (float64, string) { return m.SlopeMarginOf("fds", a) }},
	{name: compare.CPUPerRequest, unit: "seconds/request", kind: logRatio, value: Block.CPUPerRequest,
		margin: func(m compare.Margins, _ float64) (float64, string) { return m.CPU, compare.MarginCPU }},
	{name: compare.LatencyP50, unit: "seconds", kind: logRatio, value: func(b Block) float64 { return b.P50 },
		margin: func(m compare.Margins, _ float64) (float64, string) { return m.Latency, compare.MarginLatency }},
	{name: compare.LatencyP99, unit: "seconds", kind: logRatio, value: func(b Block) float64 { return b.P99 },
		margin: func(m compare.Margins, _ float64) (float64, string) { return m.LatencyP99, compare.MarginLatencyP99 }},
	{name: compare.LatencyP999, unit: "seconds", kind: logRatio, value: func(b Block) float64 { return b.P999 },
		margin: func(m compare.Margins, _ float64) (float64, string) { return m.LatencyP999, compare.MarginLatencyP999 }},
	{name: compare.Throughput, unit: "requests/second", kind: logRatio, value: Block.Throughput, better: true,
		margin: func(m compare.Margins, _ float64) (float64, string) { return m.Throughput, compare.MarginThroughput }},
	{name: compare.ErrorRate, unit: "points", kind: diff, value: Block.ErrorPercent,
		margin: func(m compare.Margins, _ float64) (float64, string) { return m.ErrorPoints, compare.MarginErrorPoints }},
}

// estimate is a metric's difference at one look on the scale the test
// runs on, oriented so that a positive value is worse for B (ln B/A, or
// ln A/B for throughput), with its standard error and margin on that
// scale; a and b are the builds' values in the metric's unit, and
// margin0 the margin as reported.
type estimate struct {
	a, b, d, se, margin, margin0 float64
	marginOf                     string  // margin0's key
	nu                           float64 // the degrees of freedom of se; 0 = known
	// aLeaks and bLeaks, for a slope, say whether each build's own fit
	// reads a leak; gated says they are set (see heldBack).
	aLeaks, bLeaks, gated bool
}

// testMargin is a reported margin on the test's scale: ln(1+m) for a
// ratio that must not rise by m, −ln(1−m) for one that must not drop by
// m (B/A < 1−m is a regression, as compare judges it).
func testMargin(def metricDef, m float64) float64 {
	switch {
	case def.kind != logRatio:
		return m
	case def.better:
		return -math.Log1p(-m)
	}
	return math.Log1p(m)
}

// estimateOf estimates metric def from the tally; se is +Inf when there
// is not yet enough to tell.
func estimateOf(def metricDef, t *Tally, m compare.Margins) estimate {
	if def.kind == slope {
		return slopeEstimate(def, t, m)
	}
	var xs []float64
	var sa, sb float64
	for _, p := range t.Pairs() {
		va, vb := def.value(p[A]), def.value(p[B])
		if math.IsNaN(va) || math.IsNaN(vb) {
			continue
		}
		switch {
		case def.kind == diff:
			xs = append(xs, vb-va)
		case va > 0 && vb > 0 && def.better:
			xs = append(xs, math.Log(va/vb))
		case va > 0 && vb > 0:
			xs = append(xs, math.Log(vb/va))
		default:
			continue
		}
		sa, sb = sa+va, sb+vb
	}
	n := float64(len(xs))
	e := estimate{a: sa / n, b: sb / n}
	e.d, e.se, e.nu = meanSE(xs)
	e.margin0, e.marginOf = def.margin(m, e.a)
	e.margin = testMargin(def, e.margin0)
	return e
}

// slopeEstimate is B's slope minus A's, each from the verdict's own fit
// (a robust slope with an interval honest under autocorrelation), its
// standard error read off the two 95 % intervals.
func slopeEstimate(def metricDef, t *Tally, m compare.Margins) estimate {
	var fit [2]verdict.Resource
	se := [2]float64{}
	for _, b := range []Build{A, B} {
		fit[b] = verdict.AnalyzeResource(warmedUp(t.Points[b][def.resource]), verdict.ResourceOptions{
			Name: def.resource, Unit: resourceUnit[def.resource]})
		se[b] = math.Inf(1)
		if w := fit[b].CI95[1] - fit[b].CI95[0]; fit[b].Points >= 6 && w >= 0 {
			se[b] = w / (2 * 1.959963984540054)
		}
	}
	mg, key := def.margin(m, fit[A].PerRequest)
	return estimate{a: fit[A].PerRequest, b: fit[B].PerRequest, d: fit[B].PerRequest - fit[A].PerRequest,
		se: math.Hypot(se[A], se[B]), margin: mg, margin0: mg, marginOf: key,
		aLeaks: fit[A].Verdict == verdict.Leak, bLeaks: fit[B].Verdict == verdict.Leak, gated: true}
}

// warmupShare is the share of a build's requests so far whose points
// only warm it up, as `soakd run`'s default --warmup 10%: a runtime sizes
// its heap over its first requests (two Go processes of one build differ
// there by tens of bytes per request over 20 000 requests), and a slope
// that includes it is not the slope the looks converge on.
const warmupShare = 0.1

// warmedUp returns pts with the first warmupShare of the requests so far
// (and any point already marked) in the warm-up phase.
func warmedUp(pts []verdict.Point) []verdict.Point {
	if len(pts) == 0 {
		return pts
	}
	cut := warmupShare * pts[len(pts)-1].Requests
	out := make([]verdict.Point, len(pts))
	for i, p := range pts {
		if p.Requests <= cut {
			p.Phase = verdict.Warmup
		}
		out[i] = p
	}
	return out
}

// resourceUnit is the verdict's unit of each resource.
var resourceUnit = map[string]string{ResourceRSS: "bytes", ResourceFDs: "fds"}
