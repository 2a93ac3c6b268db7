package verdict

import (
	"math"

	"github.com/soakd/soakd/soak/trend"
)

// ResourceOptions describe one resource to analyse.
type ResourceOptions struct {
	Name       string // shown in the reason, e.g. "RSS"
	Unit       string // "bytes", "fds", "threads", "sockets"
	Thresholds Thresholds
	Limit      float64 // 0 = none
	// RequestsPerHour is the soak throughput that turns per-request growth
	// into per-hour growth; 0 = take it from the fitted points' requests
	// over their seconds.
	RequestsPerHour float64
}

// withDefaults fills a zero Thresholds from the unit, and a zero Alpha.
func (o ResourceOptions) withDefaults() ResourceOptions {
	if o.Thresholds == (Thresholds{}) {
		o.Thresholds = CountThresholds
		switch o.Unit {
		case "bytes", "":
			o.Thresholds = MemoryThresholds
		case "fds":
			o.Thresholds = FDThresholds
		}
	}
	if o.Thresholds.Alpha <= 0 {
		o.Thresholds.Alpha = MemoryThresholds.Alpha
	}
	if o.Name == "" {
		o.Name = "value"
	}
	return o
}

// methodEnvelope names the fit the verdicts use: Theil–Sen and
// Mann–Kendall on the lower envelope (minimum per bin of requests).
const methodEnvelope = "lower-envelope"

// AnalyzeResource judges one resource's samples over a run.
//
// Warm-up points are ignored, soak points are fitted against cumulative
// completed requests, and cool-down points serve only the release check.
// A restart (a new Incarnation) splits the series: each incarnation stands
// alone and the one whose soak covered the most requests drives the
// verdict; Incarnations reports how many there were.
//
// The fit is on the lower envelope: the soak is cut into bins of requests
// (see binCount) and each bin keeps its minimum, so a GC sawtooth's peaks
// and short allocation bursts drop out and the troughs, the live heap,
// remain. Measured on the synthetic series in verdict_test.go (500 stable
// series per noise model, 200 leaky ones; go test -run
// TestMethodComparison -v ./soak/verdict/), the envelope and the bin
// median both kept false alarms at 0 %, but the median's interval on a
// leak under a sawtooth covers the live-heap slope far less often than
// the envelope's (the sawtooth's peaks grow at twice the live heap's
// rate), so the envelope is the fit: see the figures logged by that test
// and repeated in README-style form in doc.go.
//
// A leak needs all of: a Mann–Kendall p (one-sided, increase) below Alpha;
// a 95 % Theil–Sen interval whose lower bound exceeds MinPerRequest; fitted
// growth (slope × requests) above MinTotal; growth continuing through the
// last third of the soak (its slope at least half the whole soak's, its
// own interval above zero); and, when a cool-down ran, no release.
func AnalyzeResource(pts []Point, opt ResourceOptions) Resource {
	return analyze(pts, opt, trend.ByMin)
}

func analyze(pts []Point, opt ResourceOptions, r trend.Reduce) Resource {
	opt = opt.withDefaults()
	by, incs := splitSoak(pts)
	res := Resource{Unit: opt.Unit, Limit: opt.Limit, Incarnations: incs, Method: methodName(r)}
	s := driving(by)
	if s == nil || len(s.x) < minSoakPoints {
		return tooFew(res, s, opt)
	}
	f := fitSeries(s, r)
	res.Points = len(s.x)
	rph := opt.RequestsPerHour
	if rph <= 0 && f.seconds > 0 {
		rph = f.span / f.seconds * 3600
	}
	fill(&res, f, rph)
	rel, level, idle := released(pts, s.inc, f)
	res.ReleasedAfterCooldown, res.CooldownLevel = rel, level
	d := decide(f, opt.Thresholds, rel)
	res.Verdict, res.Settle = d.verdict, settleText(d.more, rph)
	res.Reason = reason(opt, res, f, d, idle)
	res.TimeToExhaustionSeconds = exhaustion(f, opt.Limit, res.PerHour, rel, opt.Thresholds.Alpha)
	return res
}

func methodName(r trend.Reduce) string {
	if r == trend.ByMedian {
		return "bin-median"
	}
	return methodEnvelope
}

func fill(res *Resource, f fit, rph float64) {
	res.PerRequest = f.whole.Slope
	res.CI95 = [2]float64{f.whole.Lo, f.whole.Hi}
	res.PerHour = f.whole.Slope * rph
	res.PValue = f.mk.PIncrease
	res.LastThirdPerRequest = f.last.Slope
	res.Start, res.End, res.Growth = f.start, f.end, f.end-f.start
}

func tooFew(res Resource, s *series, opt ResourceOptions) Resource {
	n := 0
	if s != nil {
		n = len(s.x)
		res.Points = n
	}
	res.Verdict = Inconclusive
	res.Reason = opt.Name + ": only " + itoa(n) + " soak samples in one incarnation; the verdict needs at least " + itoa(minSoakPoints)
	res.Settle = "run a soak with at least " + itoa(minSoakPoints) + " samples"
	return res
}

// exhaustion is (Limit − current) / per-hour growth, in seconds, when the
// resource is growing significantly and has not flattened or been
// released; nil otherwise ("never").
func exhaustion(f fit, limit, perHour float64, rel *bool, alpha float64) *float64 {
	growing := f.significant(alpha) && f.whole.Lo > 0 && !f.flattened() && (rel == nil || !*rel)
	if limit <= 0 || !growing || perHour <= 0 {
		return nil
	}
	t := math.Max(0, (limit-f.current)/perHour*3600)
	return &t
}
