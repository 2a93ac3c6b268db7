package abrun

import (
	"math"

	"github.com/soakd/soakd/soak/verdict"
)

// Margins say how much worse B may be and still be the same. A slope's
// margin is the larger of its absolute floor and its share of A's slope;
// the others are shares of A's value (0.05 = 5 %), or percentage points
// for the error rate.
type Margins struct {
	LeakBytes   float64 // bytes per request, default 16
	LeakShare   float64 // of A's slope, default 0.25
	FDs         float64 // fds per request, default 0.001
	CPU         float64 // default 0.05
	Latency     float64 // p50, p99, p99.9; default 0.10
	Throughput  float64 // default 0.10
	ErrorPoints float64 // default 0.5
}

// DefaultMargins are the margins of soakd compare.
var DefaultMargins = Margins{LeakBytes: 16, LeakShare: 0.25, FDs: 0.001,
	CPU: 0.05, Latency: 0.10, Throughput: 0.10, ErrorPoints: 0.5}

// withDefaults fills each zero margin from DefaultMargins.
func (m Margins) withDefaults() Margins {
	d := DefaultMargins
	for _, f := range []struct{ v, d *float64 }{
		{&m.LeakBytes, &d.LeakBytes}, {&m.LeakShare, &d.LeakShare}, {&m.FDs, &d.FDs},
		{&m.CPU, &d.CPU}, {&m.Latency, &d.Latency}, {&m.Throughput, &d.Throughput},
		{&m.ErrorPoints, &d.ErrorPoints},
	} {
		if *f.v <= 0 {
			*f.v = *f.d
		}
	}
	return m
}

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

// metricDef is one judged metric.
type metricDef struct {
	name string // the JSON key, e.g. "rss_per_request"
	unit string
	kind kind
	// resource names the points of a slope metric; value reads a paired
	// metric from a block.
	resource string
	value    func(Block) float64
	// better is true when a larger value is better (throughput): the
	// difference is then judged as A over B.
	better bool
	// margin is the metric's margin given A's value, in the difference's
	// units (a share for logRatio).
	margin func(m Margins, a float64) float64
}

// Resources name the resource series a run records for each build.
const (
	ResourceRSS = "rss"
	ResourceFDs = "fds"
)

// defs is the table of judged metrics, in report order.
var defs = []metricDef{
	{name: "rss_per_request", unit: "bytes", kind: slope, resource: ResourceRSS,
		margin: func(m Margins, a float64) float64 { return math.Max(m.LeakBytes, m.LeakShare*math.Max(a, 0)) }},
	{name: "fds_per_request", unit: "fds", kind: slope, resource: ResourceFDs,
		margin: func(m Margins, a float64) float64 { return math.Max(m.FDs, m.LeakShare*math.Max(a, 0)) }},
	{name: "cpu_per_request", unit: "seconds", kind: logRatio, value: Block.CPUPerRequest,
		margin: func(m Margins, _ float64) float64 { return m.CPU }},
	{name: "latency_p50", unit: "seconds", kind: logRatio, value: func(b Block) float64 { return b.P50 },
		margin: func(m Margins, _ float64) float64 { return m.Latency }},
	{name: "latency_p99", unit: "seconds", kind: logRatio, value: func(b Block) float64 { return b.P99 },
		margin: func(m Margins, _ float64) float64 { return m.Latency }},
	{name: "latency_p99_9", unit: "seconds", kind: logRatio, value: func(b Block) float64 { return b.P999 },
		margin: func(m Margins, _ float64) float64 { return m.Latency }},
	{name: "throughput", unit: "requests/s", kind: logRatio, value: Block.Throughput, better: true,
		margin: func(m Margins, _ float64) float64 { return m.Throughput }},
	{name: "error_rate", unit: "percent", kind: diff, value: Block.ErrorPercent,
		margin: func(m Margins, _ float64) float64 { return m.ErrorPoints }},
}

// estimate is a metric's difference at one look, oriented so that a
// positive value is worse for B, on the scale the test runs on (ln of
// the ratio for logRatio), with its standard error and margin on the
// same scale; a and b are the builds' values in the metric's unit.
type estimate struct {
	a, b, d, se, margin float64
	nu                  float64 // the degrees of freedom of se; 0 = known
}

// estimateOf estimates metric def from the tally; se is +Inf when there
// is not yet enough to tell.
func estimateOf(def metricDef, t *Tally, m Margins) estimate {
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
		sa, sb = sa+va, sb+vb
		switch {
		case def.kind == diff:
			xs = append(xs, vb-va)
		case va > 0 && vb > 0 && def.better:
			xs = append(xs, math.Log(va/vb))
		case va > 0 && vb > 0:
			xs = append(xs, math.Log(vb/va))
		}
	}
	n := float64(len(xs))
	e := estimate{a: sa / n, b: sb / n, se: math.Inf(1)}
	e.d, e.se, e.nu = meanSE(xs)
	e.margin = def.margin(m, e.a)
	if def.kind == logRatio {
		e.margin = math.Log1p(e.margin)
	}
	return e
}

// slopeEstimate is B's slope minus A's, each from the verdict's own fit
// (a robust slope with an interval honest under autocorrelation), its
// standard error read off the two 95 % intervals.
func slopeEstimate(def metricDef, t *Tally, m Margins) estimate {
	var fit [2]verdict.Resource
	se := [2]float64{}
	for _, b := range []Build{A, B} {
		fit[b] = verdict.AnalyzeResource(t.Points[b][def.resource], verdict.ResourceOptions{
			Name: def.resource, Unit: def.unit})
		se[b] = math.Inf(1)
		if w := fit[b].CI95[1] - fit[b].CI95[0]; fit[b].Points >= 6 && w >= 0 {
			se[b] = w / (2 * 1.959963984540054)
		}
	}
	return estimate{a: fit[A].PerRequest, b: fit[B].PerRequest, d: fit[B].PerRequest - fit[A].PerRequest,
		se: math.Hypot(se[A], se[B]), margin: def.margin(m, fit[A].PerRequest)}
}
