package verdict

import (
	"fmt"
	"math"
	"sort"

	"github.com/soakd/soakd/soak/trend"
)

// ResourceOptions describe one resource to analyse.
type ResourceOptions struct {
	Name string // shown in the reason, e.g. "RSS"
	// Setting is the option that samples the resource more often, named
	// in the advice when there are too few samples; "" = "--interval".
	Setting string
	Unit    string // "bytes", "fds", "threads", "sockets"
	// Quantum is the resolution of a reading, in Unit; 0 = the unit's
	// (4 KiB for bytes, 1 otherwise).
	Quantum    float64
	Thresholds Thresholds
	Limit      float64 // 0 = none
	// RequestsPerHour is the soak throughput that turns per-request growth
	// into per-hour growth; 0 = take it from the fitted points' requests
	// over their seconds.
	RequestsPerHour float64
	// Lives are the readings of each process of the tree over its own
	// life, one slice per process identity {PID, start time}, for the
	// recycling check (a leak hidden by replaced workers); nil = none.
	Lives [][]Point
	// Earlier is the evidence of the job's earlier runs of the same
	// process; nil = a process soakd has not soaked before.
	Earlier *Earlier
	// Size is the process tree's size at the load's start (its RSS's
	// level for the transient rule, see StartLevel) when the resource is
	// a part of its memory (PSS's anonymous pages, USS's dirty ones, a
	// heap the target reports): the transient rule judges the part's
	// growth against the larger of the two. rss, pss and uss grow
	// together from the same anonymous pages, and a part that starts
	// small (a Go server's 1.3 MiB of anonymous memory in an 8.2 MiB
	// RSS) doubles where the process does not. 0 = the resource's own
	// level.
	Size float64
	// Collected names the garbage-collected runtime that manages this
	// memory ("Go", "JVM", "Node"), "" when none does (C, Python, a
	// resource that is not memory). It keeps AttributeEndpoints from
	// judging the endpoints: see collectedReason.
	Collected string
}

// withDefaults fills each zero field of Thresholds from the unit's
// defaults.
func (o ResourceOptions) withDefaults() ResourceOptions {
	o.Thresholds = o.Thresholds.WithDefaults(o.Unit)
	if o.Name == "" {
		o.Name = "value"
	}
	if o.Quantum <= 0 {
		o.Quantum = quantumOf(o.Unit)
	}
	return o
}

// WithDefaults fills each zero (or negative) field from the defaults of
// unit: MemoryThresholds for "bytes" (and ""), FDThresholds otherwise.
func (t Thresholds) WithDefaults(unit string) Thresholds {
	d := CountThresholds
	switch unit {
	case "bytes", "":
		d = MemoryThresholds
	case "fds":
		d = FDThresholds
	}
	for _, f := range []struct {
		v *float64
		d float64
	}{
		{&t.Alpha, d.Alpha}, {&t.MinPerRequest, d.MinPerRequest}, {&t.MinTotal, d.MinTotal},
		{&t.Horizon, d.Horizon}, {&t.HorizonGrowth, d.HorizonGrowth},
		{&t.HorizonLimitShare, d.HorizonLimitShare}, {&t.Exhaustion, d.Exhaustion}, {&t.Transient, d.Transient},
	} {
		if *f.v <= 0 {
			*f.v = f.d
		}
	}
	return t
}

// methodEnvelope names the fit the verdicts use: Theil–Sen and
// Mann–Kendall on the lower envelope (minimum per bin of samples).
const methodEnvelope = "lower-envelope"

// AnalyzeResource judges one resource's samples over a run.
//
// Baseline points give the idle level, warm-up points are ignored, soak
// points are fitted against cumulative completed requests, and cool-down
// points serve the release check. A restart (a new Incarnation) splits
// the series: the incarnation whose soak covered the most requests drives
// the fit; Incarnations reports how many there were. Points with a
// non-finite field are dropped.
//
// The fit is on the lower envelope: the soak is cut into bins of equal
// sample counts (one per point up to 64 points, else bins of about 150 s,
// 32 to 128 of them), each keeping its lowest point, so a GC sawtooth's
// peaks drop out and a throughput drift cannot bias the envelope (a
// series that falls in GC drops keeps each cycle's trough instead). The
// slope is Theil–Sen with Sen's 95 % interval stretched for AR(1)
// autocorrelation of the residuals, and the trend's one-sided p-value
// comes from that interval (see fitSeries and the study in
// docs/verdict-study.md); the interval is widened by one quantum of the
// unit (a 4 KiB page, one fd) over the span.
//
// Growth "clears" when the trend is significant (p < Alpha) and the
// interval's lower bound is above the lowest floor in force: the
// per-request floor, the slope that adds HorizonGrowth (or
// HorizonLimitShare of the limit) over Horizon at the observed
// throughput, or the slope that reaches the limit within Exhaustion.
// Growth that clears is then weighed against other shapes (classify):
//   - a straight line: a leak, unless slow growth does not yet show that
//     it goes on (slow: near the floor, the last third's bar where the
//     soak bends, both halves' growth where it does not), the last third
//     has confidently flattened (inconclusive) or the cool-down released
//     it (stable);
//   - deceleration (a hinge or a significant bend beats the line): a
//     plateau when the growth after the knot is negligible, a leak
//     (measured after the knot) when a hinge's tail is straight and clears
//     a floor on its own, else inconclusive;
//   - growth that began late (a hinge whose slope rises, riseKnot): a
//     leak measured from its knot when the stretch after it decides one
//     on its own (decideLate), the knot named in Change;
//   - one step: stable, with the step reported, when the growth beside it
//     is negligible;
//   - two or three climbing steps: inconclusive, never stable.
//
// Growth that does not clear is stable when negligible (the equivalence
// test: the interval within the lowest floor in force either way, or a
// fall proven faster than it; see floors.negligible), a plateau when it
// grew and then decelerated to negligible, and otherwise inconclusive with
// Settle naming the extra requests that would decide it with 80 % power.
//
// A leak in a soak shorter than Thresholds.Transient stays inconclusive
// until the resource has grown past its own level at the load's start
// (transient): a runtime sizing itself to a new load grows in a straight
// line too.
//
// When the tree's verdict is not a leak, the lives check (lives.go) looks
// for growth that replaced processes carried: a leak found there is
// reported with MaskedBy "recycling", unless the typical life was shorter
// than the transient and grew by less than its own size.
//
// Per-hour growth is per-request growth times RequestsPerHour; PerDay is
// over Horizon. Time to exhaustion is (Limit − last soak value) / per-hour
// growth, set only while the resource grows significantly, has not
// flattened and was not released.
func AnalyzeResource(pts []Point, opt ResourceOptions) Resource {
	return decidedBy(analyze(pts, opt, trend.ByMin))
}

// decidedBy sets a leak's LeakCI95 to its CI95, the interval that
// decided it, and clears it on every other verdict.
func decidedBy(r Resource) Resource {
	switch {
	case r.Verdict != Leak:
		r.LeakCI95 = nil
	case r.LeakCI95 == nil:
		ci := r.CI95
		r.LeakCI95 = &ci
	}
	return r
}

func analyze(pts []Point, opt ResourceOptions, r trend.Reduce) Resource {
	opt = opt.withDefaults()
	th := opt.Thresholds
	pts = splitResets(pts)
	by, incs := splitSoak(pts)
	res := Resource{Unit: opt.Unit, Limit: opt.Limit, Incarnations: incs, Method: methodName(r)}
	s := driving(by)
	if s == nil || len(s.x) < minSoakPoints || s.span() <= 0 {
		res = tooFew(res, s, opt)
		return finite(carry(across(checkLives(res, pts, opt, by, 0, floors{perRequest: th.MinPerRequest}), pts, opt), opt.Earlier))
	}
	f := fitSeries(s, r, opt.Quantum).atLevel(th.level())
	res.Points = len(s.x)
	if lv := th.level(); lv != DefaultLevel {
		res.Level = lv
	}
	rph := opt.RequestsPerHour
	if rph <= 0 && f.seconds > 0 {
		rph = f.span / f.seconds * 3600
	}
	fill(&res, f, rph, th)
	base := baseline(pts, s.inc)
	if base != nil {
		res.Baseline = *base
	}
	cool := released(pts, s.inc, s, f, base)
	var rel *bool
	if cool != nil {
		rel = &cool.ok
		res.ReleasedAfterCooldown, res.CooldownLevel = rel, cool.level
		res.CooldownCI95 = &[2]float64{cool.ci[0], cool.ci[1]}
	}
	fl := floorsFor(th, rph, opt.Limit, f.current)
	d := decide(f, th, fl, rel, longestCycle(s, opt.Quantum))
	if e, ok := exactOf(s, opt.Quantum); ok && exactDecides(d) {
		d = exactDecision(&res, d, e, f, fl, rph, th, opt.Quantum)
	}
	if d.verdict == Leak && d.tail != nil {
		// A leak after a warm-up that outlasted its phase: the stretch
		// after the knot measures it; the whole soak would count the
		// warm-up's tail in.
		t := trend.Fit{Slope: d.tail.slope, Lo: d.tail.lo, Hi: d.tail.hi}
		res.PerRequest, res.CI95, res.PValue, res.PTest = t.Slope, [2]float64{t.Lo, t.Hi}, slopeP(t), PTestSlope
		res.PerHour, res.PerDay = t.Slope*rph, t.Slope*rph*th.Horizon/3600
		at := f.shape.at
		if d.why == whyLate {
			at = d.at
		}
		if d.before == 0 {
			d.before = f.sub(0, at+1).Slope
		}
		res.Tail = &Tail{AtRequests: f.b.X[at], BeforePerRequest: d.before, PerRequest: t.Slope, CI95: res.CI95}
		if d.why == whyLate || d.why == whyLeakSlowing {
			res.Change = ChangeSlowed
			if d.why == whyLate {
				res.Change = ChangeBegan
			}
			res.ChangeAtRequest, res.ChangeAtSeconds = f.b.X[at], stepSeconds(s, f.b.X[at])
		}
	} else if d.verdict == Leak {
		// The second half's own interval, beside the whole soak's that
		// decided: a warm-up that outlasted its phase by too little to
		// show as a knot still tilts the whole soak's slope, and the
		// second half is clear of it. Before issue 41 ci95 was widened
		// to span both, 2–6× the estimates' spread, and read beside
		// the whole soak's p-value.
		_, h, _ := f.halves()
		res.SecondHalf = &SecondHalf{PerRequest: h.Slope, CI95: [2]float64{h.Lo, h.Hi}}
	}
	if d.verdict == Leak {
		own := transient(d, f, th, base, opt.Size, res.PerRequest, rph)
		d = transient(d, f, th, transientBase(f, base, opt.Earlier), opt.Size, res.PerRequest, rph)
		seen := opt.Earlier != nil && opt.Earlier.Level > 0
		d.seen = d.why == whyTransient && seen
		if seen && d.verdict == Leak && own.why == whyTransient {
			res.FirstSeenLevel = opt.Earlier.Level
		}
	}
	d.more = atLeast(d.more, f.span, rph)
	res.Verdict, res.Settle = d.verdict, settleText(d, rph, th, fl, opt.Unit)
	if res.Settle != "" {
		res.SettleRequests = math.Ceil(d.more)
	}
	if f.shape.kind == shapeStep && (d.verdict == Stable || d.why == whyStep) {
		res.Step = &Step{Size: f.shape.size, Requests: f.b.X[f.shape.at], Seconds: stepSeconds(s, f.b.X[f.shape.at])}
	}
	res.TimeToExhaustionSeconds = exhaustion(f, opt, res.PerHour, rel, d)
	res.BoundPerDay, res.FloorPerDay = boundPerDay(res, d, rph, th), fl.leak()*rph*th.Horizon/3600
	res.Bound = boundText(res, d, th)
	res.Reason = relevel(reason(opt, res, f, d, cool, fl), th.level())
	if d.verdict == Inconclusive {
		res.Reason += sawtoothText(s, f, d, rph, opt.Quantum, opt.Unit)
	}
	out := keptBound(finite(carry(across(checkLives(res, pts, opt, by, rph, fl), pts, opt), opt.Earlier)))
	if out.Verdict == Plateau && d.verdict == Plateau && d.tail != nil {
		out.Tail = plateauTail(f, d)
	}
	return out
}

// plateauTail is a plateau's stretch after the knot, the slope and
// interval its reason cites ("… after the knot (95 % CI …)"); CI95 stays
// the whole soak's, beside its p-value. Before issue 41 the JSON carried
// only the whole soak's, and a reader could not find the interval the
// text gave.
func plateauTail(f fit, d decision) *Tail {
	return &Tail{
		AtRequests:       finiteOr0(f.b.X[f.shape.at]),
		BeforePerRequest: finiteOr0(f.sub(0, f.shape.at+1).Slope),
		PerRequest:       finiteOr0(d.tail.slope),
		CI95:             [2]float64{finiteOr0(d.tail.lo), finiteOr0(d.tail.hi)},
	}
}

// keptBound clears the bound of a resource that the lives or an earlier
// run took out of stable or plateau: it no longer says how little it
// grows.
func keptBound(r Resource) Resource {
	if r.Verdict != Stable && r.Verdict != Plateau {
		r.BoundPerDay, r.Bound, r.Exact = 0, "", nil
		if r.Method == methodExact {
			r.Method = methodEnvelope
		}
	}
	return r
}

// exactDecision settles a decision the fit's interval left too wide
// (exactDecides) by what the readings prove (exactOf): stable when the
// bound's upper end lies under the lowest floor in force, reported as
// the interval with the method "exact-count"; else the fit's decision,
// advising no more requests than the bound needs if the readings stay
// as they are.
//
// The upper end alone decides. stable is otherwise two-sided (see
// floors.negligible) because a fit's interval that its noise model read
// too narrow lands where the noise pulled it, and its lower end shows
// that; the bound has no noise model, and its upper end holds whatever
// its lower end. A count that fell by one (a stale fd closed) proves a
// fall of under two over the soak, which the two-sided test would hold
// against it for twice as long.
func exactDecision(res *Resource, d decision, e exactBound, f fit, fl floors, rph float64, th Thresholds, q float64) decision {
	t := e.fit(f.whole.Slope)
	if t.Hi >= fl.leak() {
		d.more = math.Min(d.more, e.more(fl.leak(), q))
		return d
	}
	res.Method, res.Exact = methodExact, &e.Exact
	res.PerRequest, res.CI95, res.PTest = t.Slope, [2]float64{t.Lo, t.Hi}, PTestFitted
	res.PerHour, res.PerDay = t.Slope*rph, t.Slope*rph*th.Horizon/3600
	return decision{verdict: Stable, why: whyExact}
}

// boundPerDay is the most a stable resource or a plateau can grow over
// the horizon by its interval (see Resource.BoundPerDay).
func boundPerDay(res Resource, d decision, rph float64, th Thresholds) float64 {
	up := res.CI95[1]
	switch {
	case d.verdict == Plateau && d.tail != nil:
		up = d.tail.hi
	case d.verdict != Stable || d.why == whyReleased:
		return 0
	}
	return math.Max(up, 0) * rph * th.Horizon / 3600
}

// transientBase is the level for transient, as a baseline: see
// transientLevel.
func transientBase(f fit, base *float64, e *Earlier) *float64 {
	level, seen := transientLevel(f, base, e)
	if !seen && base == nil {
		return nil
	}
	return &level
}

// transient keeps a leak found in a soak shorter than th.Transient
// inconclusive while the resource has not grown past the process's size
// at the load's start: its own level there (the idle baseline, else the
// envelope at the soak's start), or size, the tree's RSS there, when
// the resource is a part of its memory and size is the larger (see
// ResourceOptions.Size). Runtimes size themselves to a new load: a Go
// heap grows to twice its live size before a collection and its RSS
// keeps the peak, a JVM fills its young generation, pools and arenas
// fill. Over a window shorter than their first cycles that growth is a
// straight line, as a leak is. Either a soak long enough for such cycles
// to have turned, or growth that no sizing explains, tells them apart.
// More is the requests to whichever comes first.
func transient(d decision, f fit, th Thresholds, base *float64, size, perRequest, rph float64) decision {
	if f.seconds >= th.Transient {
		return d
	}
	level := f.start
	if base != nil {
		level = *base
	}
	grown := f.end - level
	whole := math.Max(level, size)
	if level <= 0 || grown >= whole {
		return d
	}
	more := math.Inf(1)
	if rph > 0 {
		more = (th.Transient - f.seconds) * rph / 3600
	}
	if perRequest > 0 {
		more = math.Min(more, (whole-grown)/perRequest)
	}
	d = decision{verdict: Inconclusive, why: whyTransient, bind: bindTime, more: more, tail: d.tail, level: level}
	if whole > level {
		d.size = whole
	}
	return d
}

// StartLevel is the level r's transient rule judged its growth against:
// its level when soakd first saw the process (e, from an earlier run),
// else its idle baseline, else its envelope at the soak's start. For the
// tree's RSS it is the size the other memory resources are judged
// against (ResourceOptions.Size).
func StartLevel(r Resource, e *Earlier) float64 {
	switch {
	case e != nil && e.Level > 0:
		return e.Level
	case r.Baseline > 0:
		return r.Baseline
	}
	return r.Start
}

// checkLives overrides a verdict that is not a leak when the lives of the
// tree's processes (or, without them, the target's incarnations) carried
// a leak that their replacement hid.
func checkLives(res Resource, pts []Point, opt ResourceOptions, by map[int]*series, rph float64, fl floors) Resource {
	if res.Verdict == Leak {
		return res
	}
	lives := opt.Lives
	if lives == nil && len(by) > 1 {
		lives = incarnationLives(pts)
	}
	reqs, start := soakSpan(pts)
	lf, ok := fitLives(lives, reqs, start)
	th := opt.Thresholds
	// Growth that recycling hides does not pile up in the tree: the
	// floors that project the tree's level (over the horizon, to the
	// limit) are not in force for it, only the per-request floor (what a
	// process grows per request it serves); and its interval, not its
	// estimate, must pass the total-growth floor.
	fl = floors{perRequest: th.MinPerRequest}
	if !ok || lf.replaced == 0 || lf.p >= th.Alpha || lf.lo <= fl.leak() || lf.lo*reqs <= th.MinTotal {
		return res
	}
	if lf.lifeSeconds < th.Transient && lf.grownShare < 1 {
		// The transient rule (see transient), life by life: a process
		// that lived less than the threshold and did not grow past its
		// own size at its start may have been sizing itself to the
		// load (a Go worker's first collection spans a short life) as
		// well as leaking.
		if res.Verdict == Stable || res.Verdict == Plateau {
			res.Verdict = Inconclusive
		}
		res.Reason += fmt.Sprintf("; the processes that were replaced carried %s over their lives (%d replaced), but a typical one lived only %s and grew by %.0f %% of its own size, as a runtime sizing a new process to the load does: soak with recycling off, or with longer lives, to tell",
			perReq(lf.perRequest, opt.Unit), lf.replaced, secs(lf.lifeSeconds), 100*lf.grownShare)
		if res.Settle == "" {
			res.Settle = "soak with recycling off, or longer lives"
		}
		return res
	}
	res.Verdict, res.MaskedBy, res.Replacements = Leak, "recycling", lf.replaced
	res.PerRequest, res.CI95, res.PValue, res.PTest = lf.perRequest, [2]float64{lf.lo, lf.hi}, lf.p, PTestSlope
	res.PerHour, res.PerDay = lf.perRequest*rph, lf.perRequest*rph*th.Horizon/3600
	res.Settle, res.SettleRequests, res.Step = "", 0, nil
	res.Reason = livesReason(opt, res, lf)
	return res
}

// incarnationLives treats each incarnation's points as one life.
func incarnationLives(pts []Point) [][]Point {
	idx := map[int]int{}
	var lives [][]Point
	for _, p := range pts {
		i, ok := idx[p.Incarnation]
		if !ok {
			i = len(lives)
			idx[p.Incarnation] = i
			lives = append(lives, nil)
		}
		lives[i] = append(lives[i], p)
	}
	return lives
}

// stepSeconds is the time at which the soak reached requests q.
func stepSeconds(s *series, q float64) float64 {
	i := sort.SearchFloat64s(s.x, q)
	return s.sec[min(i, len(s.sec)-1)]
}

// finite replaces NaN and ±Inf, which JSON cannot carry, by 0.
func finite(r Resource) Resource {
	for _, v := range []*float64{&r.PerRequest, &r.PerHour, &r.CI95[0], &r.CI95[1], &r.PValue,
		&r.LastThirdPerRequest, &r.Start, &r.End, &r.Growth, &r.CooldownLevel, &r.PerDay, &r.Baseline, &r.BoundPerDay, &r.FloorPerDay} {
		if math.IsNaN(*v) || math.IsInf(*v, 0) {
			*v = 0
		}
	}
	return r
}

func methodName(r trend.Reduce) string {
	if r == trend.ByMedian {
		return "bin-median"
	}
	return methodEnvelope
}

func fill(res *Resource, f fit, rph float64, th Thresholds) {
	res.PerRequest = f.whole.Slope
	res.PerDay = f.whole.Slope * rph * th.Horizon / 3600
	res.CI95 = [2]float64{f.whole.Lo, f.whole.Hi}
	res.PerHour = f.whole.Slope * rph
	res.PValue, res.PTest = f.p, f.pTest()
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
	res.Reason = opt.Name + ": only " + plural(n, "soak sample") + " in one incarnation; a fit needs at least " + itoa(minSoakPoints)
	setting := opt.Setting
	if setting == "" {
		setting = "--interval"
	}
	res.Settle = "run a longer soak, or sample more often (" + setting + ")"
	if n >= minSoakPoints {
		res.Reason = opt.Name + ": no requests completed during the soak, so there is nothing to fit growth against"
		res.Settle = "run a soak that completes requests"
	}
	return res
}

// exhaustion is (Limit − current) / per-hour growth, in seconds, when the
// resource is growing significantly and has not flattened or been
// released; nil otherwise ("never").
func exhaustion(f fit, opt ResourceOptions, perHour float64, rel *bool, d decision) *float64 {
	th := opt.Thresholds
	growing := f.significant(th.Alpha) && f.whole.Lo > 0 && !f.flattened() && (rel == nil || !*rel) &&
		d.verdict != Plateau && d.verdict != Stable
	if opt.Limit <= 0 || !growing || perHour <= 0 {
		return nil
	}
	t := math.Max(0, (opt.Limit-f.current)/perHour*3600)
	if math.IsInf(t, 0) || math.IsNaN(t) {
		return nil
	}
	return &t
}

// atLeast raises advice to run more to a quarter of the soak's requests
// and a minute at its throughput: a verdict that a soak left undecided is
// not decided by a few more seconds of it, whatever the estimate says.
func atLeast(more, span, rph float64) float64 {
	if more <= 0 || math.IsNaN(more) || math.IsInf(more, 0) {
		return more
	}
	return math.Max(more, math.Max(span/4, rph/60))
}

// longestCycle is the longest stretch, in requests, between two sudden
// drops of the series (a GC sawtooth's cycle, see cycles), a drop being a
// fall of cycleSigmas robust SDs of the changes sample to sample or,
// when that finds fewer than two, of the changes between the means of
// dropWindow samples on either side (see windowDrops); 0 with fewer than
// two drops.
func longestCycle(s *series, quantum float64) float64 {
	at := cycleStarts(s, quantum)
	longest := 0.0
	for j := 1; j < len(at); j++ {
		longest = math.Max(longest, s.x[at[j]]-s.x[at[j-1]])
	}
	return longest
}

// cycleStarts are the first indexes of the series' cycles, after each of
// its sudden drops (see longestCycle); nil with fewer than three samples.
func cycleStarts(s *series, quantum float64) []int {
	if len(s.y) < 3 {
		return nil
	}
	d, med, _ := s.changes(quantum)
	limit := math.Max(cycleSigmas*robustSD(d, med), dropQuanta*quantum)
	at := drops(d, limit)
	if len(at) < 2 {
		at = windowDrops(despike(s.y, d, limit), dropWindow, quantum)
	}
	return at
}

// despike returns y with each one-sample spike (see spike; d are y's
// changes) replaced by the mean of its neighbours: a spike of 20 SDs
// moves a mean of 6 samples as far as a small collection does
// (windowDrops).
func despike(y, d []float64, limit float64) []float64 {
	var out []float64
	for i := 1; i < len(y)-1; i++ {
		if spike(d, i-1, limit) {
			if out == nil {
				out = append([]float64(nil), y...)
			}
			out[i] = (y[i-1] + y[i+1]) / 2
		}
	}
	if out == nil {
		return y
	}
	return out
}

// robustSD is 1.4826 times the median absolute deviation of v from med.
func robustSD(v []float64, med float64) float64 {
	abs := make([]float64, len(v))
	for i, x := range v {
		abs[i] = math.Abs(x - med)
	}
	return 1.4826 * trend.MedianFast(abs)
}

// dropWindow is the samples on either side whose means windowDrops
// compares: a Go heap of 2 MiB under 0.5 MiB of white noise falls by 2.8
// robust SDs of the changes sample to sample, under cycleSigmas, and by
// about 4.5 of the changes between means of 6 samples.
const dropWindow = 6

// windowDrops returns the first index of each cycle of y that falls by
// cycleSigmas robust SDs of the differences between the means of the k
// samples from an index on and the k before it (and by dropQuanta
// quanta): at each local minimum of that difference, within k, that is
// under the bar.
func windowDrops(y []float64, k int, quantum float64) []int {
	n := len(y)
	if n < 4*k {
		return nil
	}
	c := make([]float64, n+1)
	for i, v := range y {
		c[i+1] = c[i] + v
	}
	d := make([]float64, n-2*k+1) // d[j]: at index j+k
	for j := range d {
		i := j + k
		d[j] = (c[i+k] - 2*c[i] + c[i-k]) / float64(k)
	}
	med := trend.Median(d)
	limit := math.Max(cycleSigmas*robustSD(d, med), dropQuanta*quantum)
	var out []int
	for j, v := range d {
		if v-med >= -limit || !localMin(d, j, k) {
			continue
		}
		out = append(out, j+k)
	}
	return out
}

// localMin: d[j] is under every d within k before it and no higher than
// any within k after it.
func localMin(d []float64, j, k int) bool {
	for i := max(0, j-k+1); i < min(len(d), j+k); i++ {
		if i < j && d[i] <= d[j] || i > j && d[i] < d[j] {
			return false
		}
	}
	return true
}

// splitResets gives each stretch of an incarnation after its requests
// counter went back (a reset) an incarnation of its own, as a restart
// would have: a counter that decreases cannot be fitted against, and its
// soak would read as negative requests and seconds. The points are taken
// in their order; pts is returned as it is when no counter went back.
func splitResets(pts []Point) []Point {
	last, next := map[int]float64{}, map[int]int{}
	top := 0
	for _, p := range pts {
		top = max(top, p.Incarnation)
	}
	var out []Point
	for i, p := range pts {
		if !finitePoint(p) {
			continue
		}
		key := p.Incarnation
		if inc, ok := next[key]; ok {
			p.Incarnation = inc
		}
		if prev, ok := last[key]; ok && p.Requests < prev {
			if out == nil {
				out = append(make([]Point, 0, len(pts)), pts[:i]...)
			}
			top++
			next[key], p.Incarnation = top, top
		}
		last[key] = p.Requests
		if out != nil {
			out = append(out, p)
		}
	}
	if out == nil {
		return pts
	}
	return out
}

// cycleSigmas: a fall of this many robust SDs of the sample-to-sample
// changes is a drop that ends a cycle. Lower than dropSigmas (which
// switches the envelope to one trough per cycle and must not be fooled):
// a small Go heap (2–8 MiB) under 0.5 MiB of white noise falls by 3–11
// SDs at each collection, and two false drops in a run of white noise
// at 4.5 SDs (7e-6 a change) are rarer than one in a thousand runs.
const cycleSigmas = 4.5
