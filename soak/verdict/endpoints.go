package verdict

import (
	"fmt"
	"math"
	"slices"

	"github.com/soakd/soakd/soak/trend"
)

// EndpointFit is one endpoint's part in a resource's growth: the report's
// resources.<name>.endpoints[i].
type EndpointFit struct {
	Endpoint   string     `json:"endpoint"`    // "GET /s/scgi/"
	PerRequest float64    `json:"per_request"` // growth per request of this endpoint, in the resource's unit
	CI95       [2]float64 `json:"ci95"`
	Verdict    string     `json:"verdict"`  // leak, stable or inconclusive
	Requests   float64    `json:"requests"` // this endpoint's soak requests that the fit covered
	// Reason says why an endpoint could not be judged; "" when it was.
	Reason string `json:"reason,omitempty"`
	// Source names the series split when it is not the resource's own:
	// LiveHeapSource on a garbage-collected runtime whose live heap
	// soakd read (AttributeLiveHeap).
	Source string `json:"source,omitempty"`
}

// Attribution: growth = a + Σⱼ bⱼ·countⱼ + wander, fitted jointly over the
// soak. A fixed mix makes the counts proportional and the bⱼ unidentified;
// the load's designed mix (load.Engine.Favour) varies it in blocks, which
// identifies them.
//
// The fit is the single slope's machinery carried to several counts. The
// soak of the driving incarnation is reduced to its lower envelope (bins
// of equal sample counts, each keeping its lowest sample and that
// sample's counts), so GC peaks drop out. The bⱼ are least squares on
// the envelope. Their intervals are corrected for AR(1) wander the way
// trend.VarianceInflation corrects the single slope: ρ from trend.Lag1 on
// the residuals, and each bⱼ's variance scaled by the exact ratio, for
// this design, of its variance under AR(1) errors to what the residuals'
// spread suggests under independence:
// (aⱼ'Raⱼ/aⱼ'aⱼ)·(n−p)/tr(MR), with aⱼ the row of (X'X)⁻¹X' that gives
// bⱼ. The interval is Student's t with (n−p)/VIF degrees of freedom,
// widened by one quantum over the endpoint's span, like the single slope.
//
// Measured on seeded synthetic soaks (TestAttributeCoverage, 400 series
// each: two endpoints, 100 B/request on one, AR(1) wander of 0.5–1 MiB
// or 128 KiB steps, GC-like peaks, 4 KiB pages, 300 samples in blocks of
// 12 or 120 in blocks of 3), the leaking endpoint's interval covers its
// truth in 94.5–99 % of series and a clean endpoint is called a leak in
// 0–0.25 % (docs/attribution.md).
// The envelope's bins were chosen by that measurement: 64 bins covered
// 89.5 % under fast wander (the lowest of many samples about a fitted
// plane confirms the plane), 128 bins 94.5 %.

// endpointBins is the envelope's number of bins.
const endpointBins = 128

// minPointsPerEndpoint: the fewest envelope points per fitted count.
const minPointsPerEndpoint = 4

// AttributeEndpoints splits a resource's growth between endpoints: counts
// holds, for each of pts, every endpoint's cumulative completed requests
// (in the order of names). It returns one EndpointFit per name, judged
// against the floors AnalyzeResource uses, at each endpoint's own
// throughput: leak when the interval's lower end clears a floor (and the
// growth is significant at Alpha), stable when the growth is negligible
// (see floors.negligible), else inconclusive. It returns nil with fewer
// than two names or counts that do not match the points.
func AttributeEndpoints(pts []Point, counts [][]float64, names []string, opt ResourceOptions) []EndpointFit {
	return attributeWith(pts, counts, names, opt, splitWay{
		minPer: minPointsPerEndpoint,
		tooFew: "too few soak samples (%d) to split the growth between %d endpoints: soak longer, or sample more often",
		fit:    func(d *design, quantum float64) (jointFit, error) { return d.fit(quantum) },
	})
}

// splitWay is what tells the two splits apart: the fewest points per
// fitted count, the reason given with fewer, the fit (the envelope's, or
// the whole series'), and the source named on each endpoint.
type splitWay struct {
	minPer int
	tooFew string // fmt: the points, the endpoints
	fit    func(d *design, quantum float64) (jointFit, error)
	source string
}

// attributeWith is a split: the soak's design, the joint fit, each
// endpoint judged on the resource's floors; on a garbage-collected
// runtime an RSS split (no source) is not judged.
func attributeWith(pts []Point, counts [][]float64, names []string, opt ResourceOptions, w splitWay) []EndpointFit {
	k := len(names)
	if k < 2 || len(counts) != len(pts) {
		return nil
	}
	opt = opt.withDefaults()
	out := make([]EndpointFit, k)
	for j, n := range names {
		out[j] = EndpointFit{Endpoint: n, Verdict: Inconclusive, Source: w.source}
	}
	d := soakDesign(pts, counts, k)
	if d == nil || len(d.y) < w.minPer*(k+1) {
		n := 0
		if d != nil {
			n = len(d.y)
		}
		return withReason(out, fmt.Sprintf(w.tooFew, n, k))
	}
	for j := range out {
		out[j].Requests = d.spanOf(j)
	}
	jf, err := w.fit(d, opt.Quantum)
	if err != nil {
		return withReason(out, err.Error())
	}
	seconds := d.sec[len(d.sec)-1] - d.sec[0]
	for j := range out {
		judgeEndpoint(&out[j], jf.at(j), opt, seconds, d.y[len(d.y)-1])
		if w.source == "" && opt.Collected != "" && out[j].Reason == "" {
			out[j].Verdict, out[j].Reason = Inconclusive, collectedReason(opt.Collected)
		}
	}
	return out
}

// LiveHeapSource is EndpointFit.Source of a split read from the live heap.
const LiveHeapSource = "live heap"

// minLiveHeapReadings: the fewest live-heap readings per fitted count
// (an intercept and k slopes need some residual degrees of freedom left
// for the wander's correction).
const minLiveHeapReadings = 4

// AttributeLiveHeap splits a memory resource's growth between endpoints
// on a garbage-collected runtime, from the live heap read at the designed
// mix's block boundaries (pts: one point per reading, Value the live
// bytes; counts: every endpoint's cumulative requests then). The runtime
// measures the live heap after a forced collection, so the series has no
// collector's sawtooth and needs no envelope: it is fitted whole, by the
// same least squares and AR(1) correction as AttributeEndpoints, and
// judged on the same floors. Every fit names LiveHeapSource. A
// resource's own verdict is not touched; the figures are bytes of live
// heap per request (the RSS that holds them is about twice that under
// GOGC=100).
func AttributeLiveHeap(pts []Point, counts [][]float64, names []string, opt ResourceOptions) []EndpointFit {
	return attributeWith(pts, counts, names, opt, splitWay{
		minPer: minLiveHeapReadings,
		tooFew: "too few live-heap readings in the soak (%d, one per block of the designed mix) to split the growth between %d endpoints: soak longer",
		fit:    func(d *design, quantum float64) (jointFit, error) { return fitJoint(d.x, d.y, quantum) },
		source: LiveHeapSource,
	})
}

// collectedReason is why the split is not judged on a garbage-collected
// runtime. Its memory grows when the collector's heap target rises (Go:
// twice the live heap after a collection, and RSS keeps the peak), and
// the heap reaches that target by the garbage of every endpoint: the
// growth lands in whichever block is served while the heap fills, a
// collector's cycle or more after the requests that kept the memory, and
// the cycle outgrows any block as the live heap grows. The timing then
// says nothing of which endpoint keeps memory, and an endpoint that keeps
// none reads about half of the other's figure with an interval that
// excludes zero (TestAttributeGCRuntime: in 197–200 of 200 series of a
// seeded model of a Go heap, whatever the blocks, the favoured share or
// the envelope's bins). The figures stay, for what they are.
func collectedReason(runtime string) string {
	how := "the allocation sites name the leak: --pprof, a JVM's class histogram"
	switch runtime {
	case "Go":
		how = "serve net/http/pprof, or give --pprof, and soakd splits the live heap instead"
	case "JVM":
		how = "soakd splits the heap a HotSpot JVM keeps after its young collections when it can read its hsperfdata file (-XX:+UsePerfData, the default; its /tmp readable from soakd's); the class histogram names the leak"
	case "Node":
		how = "start it with node --inspect=127.0.0.1:PORT and give --node-inspect 127.0.0.1:PORT, and soakd splits the live heap instead"
	}
	return fmt.Sprintf("not judged: %s collects garbage, so this memory grows while its heap fills with any endpoint's garbage, not with the requests that keep it (%s)", runtime, how)
}

// CapEndpoints keeps the endpoints' verdicts within the resource's: an
// endpoint whose growth clears a floor is a leak only when the resource
// as a whole is one (the whole's checks, the transient rule and the
// release after the cool-down, are not made per endpoint); otherwise it
// is inconclusive, with its figures and that reason.
func CapEndpoints(fits []EndpointFit, whole Resource) {
	if whole.Verdict == Leak {
		return
	}
	for i := range fits {
		if fits[i].Verdict == Leak {
			fits[i].Verdict = Inconclusive
			fits[i].Reason = fmt.Sprintf("it grows, but the resource as a whole is %s (see its reason)", whole.Verdict)
		}
	}
}

// withReason marks every endpoint inconclusive for why.
func withReason(out []EndpointFit, why string) []EndpointFit {
	for j := range out {
		out[j].Verdict, out[j].Reason = Inconclusive, why
	}
	return out
}

// judgeEndpoint fills an endpoint's slope, interval and verdict.
func judgeEndpoint(e *EndpointFit, t trend.Fit, opt ResourceOptions, seconds, current float64) {
	if math.IsNaN(t.Slope) {
		e.Reason = "its count did not vary apart from the others' (no designed mix: --attribute=off, or a weight of 0)"
		return
	}
	e.PerRequest, e.CI95 = t.Slope, [2]float64{t.Lo, t.Hi}
	rph := opt.RequestsPerHour
	if seconds > 0 {
		rph = e.Requests / seconds * 3600
	}
	fl := floorsFor(opt.Thresholds, rph, opt.Limit, current)
	switch {
	case t.Lo > fl.leak() && slopeP(t) < opt.Thresholds.Alpha:
		e.Verdict = Leak
	case t.Hi < fl.perRequest:
		// Proven under the per-request floor: the split answers which
		// endpoint leaks per request. Whether the resource as a whole
		// stays under the horizon floor is the resource's verdict; an
		// endpoint's interval, widened by the designed mix (±9 B/request
		// on a flat C page beside a leaking one over 150 000 requests),
		// is not asked to prove 64 MiB a day at its own share of the
		// throughput.
		e.Verdict = Stable
	default:
		e.Verdict = Inconclusive
	}
}

// design is the driving incarnation's soak: the resource and every
// endpoint's count at each sample, in time order.
type design struct {
	x   [][]float64 // x[i][j]: endpoint j's count at sample i
	y   []float64
	sec []float64
}

// soakDesign takes the soak points of the incarnation with the most of
// them, dropping points with a non-finite value or count.
func soakDesign(pts []Point, counts [][]float64, k int) *design {
	n := map[int]int{}
	for _, p := range pts {
		if p.Phase == Soak {
			n[p.Incarnation]++
		}
	}
	inc, most := 0, 0
	for i, c := range n {
		if c > most || (c == most && i < inc) {
			inc, most = i, c
		}
	}
	if most == 0 {
		return nil
	}
	d := &design{}
	for i, p := range pts {
		if p.Phase != Soak || p.Incarnation != inc || !finitePoint(p) || len(counts[i]) != k || !allFinite(counts[i]) {
			continue
		}
		d.x, d.y, d.sec = append(d.x, counts[i]), append(d.y, p.Value), append(d.sec, p.Seconds)
	}
	if len(d.y) == 0 {
		return nil
	}
	return d
}

func allFinite(v []float64) bool {
	return !slices.ContainsFunc(v, func(f float64) bool { return math.IsNaN(f) || math.IsInf(f, 0) })
}

// spanOf is endpoint j's requests over the soak.
func (d *design) spanOf(j int) float64 { return d.x[len(d.x)-1][j] - d.x[0][j] }

// fit fits the envelope twice: about a flat line, then about the first
// fit's plane. Within a bin the later samples carry more growth, so the
// lowest sample about a flat line is more often an early one with a low
// wander, and the slopes read a few per cent low; the lowest about the
// fitted plane is not biased so.
func (d *design) fit(quantum float64) (jointFit, error) {
	e := d.envelope(nil)
	f, err := fitJoint(e.x, e.y, quantum)
	if err != nil {
		return f, err
	}
	e = d.envelope(f.slope)
	return fitJoint(e.x, e.y, quantum)
}

// envelope keeps, of each of endpointBins bins of consecutive samples,
// the lowest sample (with its counts) about the plane of slopes b (flat
// when nil; NaN slopes count as 0); fewer samples are kept whole.
func (d *design) envelope(b []float64) design {
	n := len(d.y)
	bins := min(n, endpointBins)
	level := func(i int) float64 {
		v := d.y[i]
		for j, s := range b {
			if !math.IsNaN(s) {
				v -= s * d.x[i][j]
			}
		}
		return v
	}
	e := design{}
	for b := range bins {
		lo, hi := b*n/bins, (b+1)*n/bins
		best := lo
		for i := lo + 1; i < hi; i++ {
			if level(i) < level(best) {
				best = i
			}
		}
		e.x, e.y, e.sec = append(e.x, d.x[best]), append(e.y, d.y[best]), append(e.sec, d.sec[best])
	}
	return e
}

// jointFit is the least-squares fit of the envelope on the counts, each
// slope with its interval corrected for AR(1) wander.
type jointFit struct {
	slope, lo, hi []float64 // per endpoint; NaN for a count that did not vary
}

func (f jointFit) at(j int) trend.Fit {
	return trend.Fit{Slope: f.slope[j], Lo: f.lo[j], Hi: f.hi[j]}
}

// fitJoint fits y on an intercept and the counts x (see the comment on
// Attribution).
func fitJoint(x [][]float64, y []float64, quantum float64) (jointFit, error) {
	n, k := len(y), len(x[0])
	cols, scale, span := designColumns(x)
	p := len(cols)
	if p < 2 {
		return jointFit{}, fmt.Errorf("no endpoint's count varied over the soak")
	}
	if n-p < 2 {
		return jointFit{}, fmt.Errorf("too few soak samples (%d) for %d endpoints", n, p-1)
	}
	g := gram(cols, cols)
	gi, ok := invert(g)
	if !ok {
		return jointFit{}, fmt.Errorf("the endpoints' counts moved together (the mix did not vary): use --attribute=on, or soak longer")
	}
	a := make([][]float64, p) // a[j] = row j of (X'X)⁻¹X'
	for j := range a {
		a[j] = make([]float64, n)
		for c := range cols {
			for i := range n {
				a[j][i] += gi[j][c] * cols[c][i]
			}
		}
	}
	b := make([]float64, p)
	for j := range b {
		b[j] = dot(a[j], y)
	}
	resid := slices.Clone(y)
	for c := range cols {
		for i := range n {
			resid[i] -= b[c] * cols[c][i]
		}
	}
	rho := trend.Lag1(resid)
	s2 := dot(resid, resid) / float64(n-p)
	trMR := float64(n) - traceProduct(gi, gram(cols, arMulAll(cols, rho)))
	f := jointFit{slope: nanSlice(k), lo: nanSlice(k), hi: nanSlice(k)}
	c := 1
	for j := range k {
		if scale[j] == 0 {
			continue
		}
		aa := dot(a[c], a[c])
		vif := 1.0
		if rho > 0 && trMR > 0 && aa > 0 {
			vif = math.Max(1, dot(a[c], arMul(a[c], rho))/aa*float64(n-p)/trMR)
		}
		se := math.Sqrt(s2*aa*vif) / scale[j]
		half := t975(int(float64(n-p)/vif))*se + quantum/span[j]
		f.slope[j] = b[c] / scale[j]
		f.lo[j], f.hi[j] = f.slope[j]-half, f.slope[j]+half
		c++
	}
	return f, nil
}

// designColumns are the intercept and each varying count, centred and
// scaled to unit spread (scale 0 marks a count left out); span is each
// count's range.
func designColumns(x [][]float64) (cols [][]float64, scale, span []float64) {
	n, k := len(x), len(x[0])
	ones := make([]float64, n)
	for i := range ones {
		ones[i] = 1
	}
	cols = [][]float64{ones}
	scale, span = make([]float64, k), make([]float64, k)
	for j := range k {
		v := make([]float64, n)
		var m float64
		for i := range n {
			v[i] = x[i][j]
			m += v[i]
		}
		m /= float64(n)
		var ss float64
		for i := range v {
			v[i] -= m
			ss += v[i] * v[i]
		}
		lo, hi := minMax(v)
		span[j] = hi - lo
		if ss == 0 || span[j] == 0 {
			continue
		}
		scale[j] = math.Sqrt(ss / float64(n))
		for i := range v {
			v[i] /= scale[j]
		}
		cols = append(cols, v)
	}
	return cols, scale, span
}

// gram is the matrix of dot products u[a]·v[b].
func gram(u, v [][]float64) [][]float64 {
	g := make([][]float64, len(u))
	for a := range u {
		g[a] = make([]float64, len(v))
		for b := range v {
			g[a][b] = dot(u[a], v[b])
		}
	}
	return g
}

// traceProduct is tr(A·B) for square matrices.
func traceProduct(a, b [][]float64) float64 {
	var t float64
	for i := range a {
		for j := range a {
			t += a[i][j] * b[j][i]
		}
	}
	return t
}

// invert inverts a small symmetric positive definite matrix by
// Gauss–Jordan with partial pivoting; ok is false when it is singular or
// nearly so.
func invert(g [][]float64) ([][]float64, bool) {
	p := len(g)
	m := make([][]float64, p)
	for i := range m {
		m[i] = make([]float64, 2*p)
		copy(m[i], g[i])
		m[i][p+i] = 1
	}
	for c := range p {
		piv := c
		for r := c + 1; r < p; r++ {
			if math.Abs(m[r][c]) > math.Abs(m[piv][c]) {
				piv = r
			}
		}
		if math.Abs(m[piv][c]) < 1e-9*math.Max(1, math.Abs(g[c][c])) {
			return nil, false
		}
		m[c], m[piv] = m[piv], m[c]
		d := m[c][c]
		for j := range m[c] {
			m[c][j] /= d
		}
		for r := range p {
			if r == c || m[r][c] == 0 {
				continue
			}
			f := m[r][c]
			for j := range m[r] {
				m[r][j] -= f * m[c][j]
			}
		}
	}
	inv := make([][]float64, p)
	for i := range inv {
		inv[i] = m[i][p:]
	}
	return inv, true
}

// arMul is R·v for the AR(1) correlations R = ρ^|i−j|, in O(n): the sums
// forwards and backwards, less v counted twice.
func arMul(v []float64, rho float64) []float64 {
	n := len(v)
	out := make([]float64, n)
	var f float64
	for i := range n {
		f = v[i] + rho*f
		out[i] = f
	}
	var b float64
	for i := n - 1; i >= 0; i-- {
		b = v[i] + rho*b
		out[i] += b - v[i]
	}
	return out
}

func arMulAll(cols [][]float64, rho float64) [][]float64 {
	out := make([][]float64, len(cols))
	for i, c := range cols {
		out[i] = arMul(c, rho)
	}
	return out
}

func nanSlice(k int) []float64 {
	v := make([]float64, k)
	for i := range v {
		v[i] = math.NaN()
	}
	return v
}

// tTable975 is Student's t 97.5 % quantile by degrees of freedom.
var tTable975 = tTable{normal: 1.960, rows: []tRow{{1, 12.706}, {2, 4.303}, {3, 3.182}, {4, 2.776}, {5, 2.571},
	{6, 2.447}, {7, 2.365}, {8, 2.306}, {9, 2.262}, {10, 2.228}, {12, 2.179}, {15, 2.131}, {20, 2.086},
	{30, 2.042}, {60, 2.000}, {120, 1.980}}}

// t975 is Student's t 97.5 % quantile with df degrees of freedom (at
// least one).
func t975(df int) float64 { return tTable975.at(max(df, 1)) }
