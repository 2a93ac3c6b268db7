// Package verdict turns a run's samples into verdicts: per-request growth of
// each resource (leak, stable, plateau, inconclusive), release after the
// cool-down, time to exhaustion, and whether the target is CPU-bound, waits
// on I/O, or is held back by the client. It is pure: no I/O.
package verdict

// Phase of a run that a point belongs to.
type Phase int

const (
	Warmup Phase = iota
	Soak
	Cooldown
	// Baseline is the idle phase before the load: the level that
	// "released" is judged against. It comes first in a run but is
	// numbered last, so stored runs keep their phase numbers.
	Baseline
)

// Point is one sample of one resource.
type Point struct {
	Requests    float64 // cumulative completed requests at this sample
	Seconds     float64 // seconds since the run started
	Value       float64 // the resource's value (bytes, fds, threads, sockets)
	Incarnation int     // the target's incarnation; a change is a restart
	Phase       Phase
}

// Thresholds say what growth is a leak. Growth is a leak when it is
// significant and its confidence interval clears any one of the floors:
// the per-request floor (MinPerRequest), the growth it would add over
// Horizon of the observed throughput (HorizonGrowth, or HorizonLimitShare
// of the limit), or reaching the limit within Exhaustion. A zero field
// takes its default from the unit (see Defaults).
type Thresholds struct {
	Alpha         float64 // significance level, default 0.001
	MinPerRequest float64 // CI lower bound floor, units per request
	MinTotal      float64 // minimum total growth over the soak, units

	// Horizon is the time, in seconds at the observed throughput, over
	// which growth is projected; default 24 h.
	Horizon float64
	// HorizonGrowth is the projected growth over Horizon that makes a
	// leak, in units: default 64 MiB for memory, 1000 for counts.
	HorizonGrowth float64
	// HorizonLimitShare is the share of the limit that, projected over
	// Horizon, makes a leak; default 0.1.
	HorizonLimitShare float64
	// Exhaustion: reaching the limit within this many seconds is a leak;
	// default 7 days.
	Exhaustion float64
	// Transient: a soak shorter than this many seconds is a leak only
	// once the resource has grown past the process's size at the load's
	// start: its own level there (the idle baseline, else the soak's
	// start), or, for a part of the tree's memory (PSS, USS), the tree's
	// RSS there when that is larger (ResourceOptions.Size): a runtime that
	// sizes itself to a new load (a Go heap before its first collections,
	// a JVM's young generation, pools and arenas) grows by about that
	// much and then stops, and a short window cannot tell the two apart.
	// Default 10 minutes.
	Transient float64
	// Look says the analysis is one of a running soak's live looks, not
	// its end: slow growth near the floor must then clear the last
	// third's bar (see fit.slow). Hundreds of looks a night each see a
	// soak part-way, where wander as long as the look rises in both of
	// its halves; the run's end judges the whole soak.
	Look bool
	// Level is the confidence of the whole soak's interval, which the
	// leak's floor and the equivalence test of stable read; 0 =
	// DefaultLevel (95 %). An until-decided run's looks raise it (see
	// Thresholds.Spent).
	Level float64
}

// Defaults for memory in bytes and for fds.
var (
	MemoryThresholds = Thresholds{Alpha: 0.001, MinPerRequest: 16, MinTotal: 1 << 20,
		Horizon: 86400, HorizonGrowth: 64 << 20, HorizonLimitShare: 0.1, Exhaustion: 7 * 86400, Transient: 600}
	FDThresholds = Thresholds{Alpha: 0.001, MinPerRequest: 0.001, MinTotal: 5,
		Horizon: 86400, HorizonGrowth: 1000, HorizonLimitShare: 0.1, Exhaustion: 7 * 86400, Transient: 600}
	CountThresholds = FDThresholds
)

// Verdicts of a resource.
const (
	Leak         = "leak"
	Stable       = "stable"
	Plateau      = "plateau"
	Inconclusive = "inconclusive"
)

// Resource is the analysis of one resource, the result of fitting what
// model.ResourceDef defines: the report's "resources.<name>" object.
type Resource struct {
	Verdict string `json:"verdict"`
	Unit    string `json:"unit"` // "bytes", "fds", "threads", "sockets"
	// Series names the samples.csv column fitted, for a resource judged
	// on a part of a reading where the whole is kept too (pss:
	// pss_anon_bytes, or pss_bytes where the part was not read); "" for
	// the others, and in reports made before parts were judged (the
	// whole).
	Series     string  `json:"series,omitempty"`
	PerRequest float64 `json:"per_request"`
	PerHour    float64 `json:"per_hour"`
	// CI95 is the 95 % interval per request that the verdict used: the
	// whole soak's, or the stretch's after a knot (Tail), the lives'
	// (MaskedBy), the joined soaks' (AcrossRuns), or this run's for a
	// leak carried from an earlier run (CarriedFromRun). PValue comes
	// from the same test, except where the reason names the sign test of
	// sudden jumps.
	CI95 [2]float64 `json:"ci95"`
	// LeakCI95 is, for a leak, CI95 again; nil unless the verdict is
	// leak. It was the deciding interval when CI95 was widened to span
	// the second half's too (before issue 41), and is kept for readers
	// of those reports.
	LeakCI95 *[2]float64 `json:"leak_ci95,omitempty"`
	// SecondHalf is, for a leak decided on the whole soak, the slope over
	// its second half with that slope's own 95 % interval: a warm-up
	// that outlasted its phase tilts the whole soak and not the second
	// half. It did not decide the verdict, and no p-value goes with it.
	SecondHalf *SecondHalf `json:"second_half,omitempty"`
	PValue     float64     `json:"p_value"`
	// PTest names the test PValue comes from (see the PTest constants),
	// so that a reader of the JSON can tell, as the reason's text does,
	// whether PValue and CI95 come from the same test.
	PTest string `json:"p_test,omitempty"`
	// Level is the confidence of CI95 when it is not 95 %: the share of
	// the error budget an until-decided run's look spent (see
	// Thresholds.Spent); 0 = 95 %.
	Level float64 `json:"level,omitempty"`
	// LastThirdPerRequest is the slope over the last third of the soak.
	LastThirdPerRequest float64 `json:"last_third_per_request"`
	Start               float64 `json:"start"`  // soak start level (lower envelope, median of the first bins)
	End                 float64 `json:"end"`    // soak end level (likewise, the last bins)
	Growth              float64 `json:"growth"` // End − Start
	// ReleasedAfterCooldown is nil when no cool-down ran.
	ReleasedAfterCooldown *bool `json:"released_after_cooldown"`
	// CooldownLevel is the median of the cool-down's second half.
	CooldownLevel float64 `json:"cooldown_level,omitempty"`
	// CooldownCI95 is the 95 % interval of the cool-down's level above
	// the idle baseline (else the soak's start level, by the same
	// estimator): released means it lies wholly under a quarter of the
	// soak's growth. nil when no cool-down ran.
	CooldownCI95 *[2]float64 `json:"cooldown_ci95,omitempty"`
	Limit        float64     `json:"limit,omitempty"`
	// TimeToExhaustionSeconds is nil when the resource is not growing
	// ("never").
	TimeToExhaustionSeconds *float64 `json:"time_to_exhaustion_seconds"`
	Incarnations            int      `json:"incarnations"`
	// Mappings are the mapping classes that carried a growing memory
	// resource's growth, most first (RSS only; see Mapping).
	Mappings []Mapping `json:"mappings,omitempty"`
	// Sites are the allocation sites or classes that grew, most first
	// (RSS only; see Site).
	Sites []Site `json:"sites,omitempty"`
	// PerDay is the growth over one Horizon (24 h by default) at the
	// observed throughput, in units.
	PerDay float64 `json:"per_day"`
	// BoundPerDay is, for a stable resource or a plateau, the most it
	// can grow over one Horizon at the observed throughput by its
	// interval (the upper end; a plateau's after its knot); 0 otherwise,
	// and for growth released in the cool-down. FloorPerDay is the
	// lowest floor in force over the same horizon: what "stable" was
	// proven under.
	BoundPerDay float64 `json:"bound_per_day,omitempty"`
	FloorPerDay float64 `json:"floor_per_day,omitempty"`
	// Bound says BoundPerDay against FloorPerDay in words, e.g. "under
	// +12 MiB per 24 h at this throughput (95 %; the floor 64 MiB)":
	// what the report's first line says of the resource closest to its
	// floor; "" when BoundPerDay is 0.
	Bound string `json:"bound,omitempty"`
	// MaskedBy is "recycling" when the tree's total stays bounded because
	// growing processes are replaced, and the leak was found in the
	// processes' own growth; Replacements counts the processes (or
	// incarnations) that were replaced during the soak.
	MaskedBy     string `json:"masked_by,omitempty"`
	Replacements int    `json:"replacements,omitempty"`
	// Tail is set for a leak measured after a knot: one whose growth
	// slowed but still clears the floor in force after it (the reason
	// says "slowing but still leaking"), or one under a warm-up that
	// outlasted its phase. It holds both slopes; PerRequest and CI95 are
	// then the slope after the knot. On a plateau it holds the stretch
	// after the knot that the reason cites ("… after the knot (95 % CI
	// …)"), while PerRequest, CI95 and PValue stay the whole soak's.
	Tail *Tail `json:"tail,omitempty"`
	// Change names where a leak's growth rate changed, when the leak is
	// measured from there: ChangeBegan for growth that began late (the
	// reason says "since growth began at request N (T into the run)"),
	// ChangeSlowed for a leak that slowed and still leaks.
	// ChangeAtRequest is the cumulative requests there and
	// ChangeAtSeconds the seconds since the run started; Tail holds the
	// slopes on either side.
	Change          string  `json:"change,omitempty"`
	ChangeAtRequest float64 `json:"change_at_request,omitempty"`
	ChangeAtSeconds float64 `json:"change_at_seconds,omitempty"`
	// Step is set when the soak holds one step (a one-off allocation).
	Step *Step `json:"step,omitempty"`
	// Baseline is the idle level before the load, when one was sampled.
	Baseline float64 `json:"baseline,omitempty"`
	Points   int     `json:"points"` // soak samples of the fitted incarnation
	// CarriedFromRun is the earlier run of the same process whose leak
	// this run's verdict carries: this run alone did not decide, but its
	// growth did not stop (see Earlier).
	CarriedFromRun int64 `json:"carried_from_run,omitempty"`
	// AcrossRuns is the number of runs of the same process whose soaks,
	// joined, decided this run's leak (see Earlier.Points); 0 = this
	// run's own points did.
	AcrossRuns int `json:"across_runs,omitempty"`
	// FirstSeenLevel is set when this run's leak was decided against
	// the level the process had when soakd first saw it, in an earlier
	// run: on its own level at this load's start the transient rule
	// would have kept it inconclusive.
	FirstSeenLevel float64 `json:"first_seen_level,omitempty"`
	Method         string  `json:"method"` // which series the verdict fit, e.g. "lower-envelope"; "exact-count" when the readings' own bound decided (see Exact)
	// Exact is set when the verdict is stable by what a count's (or a
	// page-quantised memory series') readings prove by themselves: CI95
	// is then that bound, not a 95 % confidence interval.
	Exact  *Exact `json:"exact,omitempty"`
	Reason string `json:"reason"`
	// Settle says what would settle an inconclusive verdict.
	Settle string `json:"settle,omitempty"`
	// SettleRequests is the number behind Settle: the extra requests
	// after which the verdict is decided with 80 % power; 0 when none.
	SettleRequests float64 `json:"settle_requests,omitempty"`
	// Endpoints split the growth between the load's endpoints (two or
	// more, see AttributeEndpoints); nil with one.
	Endpoints []EndpointFit `json:"endpoints,omitempty"`
}

// Step is a single jump in a resource's level during the soak.
type Step struct {
	Size     float64 `json:"size"`     // units
	Requests float64 `json:"requests"` // cumulative requests when it happened
	Seconds  float64 `json:"seconds"`  // seconds since the run started
}

// SecondHalf is the growth over the second half of a leak's soak.
type SecondHalf struct {
	PerRequest float64    `json:"per_request"`
	CI95       [2]float64 `json:"ci95"` // per request, 95 %
}

// What Resource.Change names.
const (
	ChangeBegan  = "began"  // growth began late: the rate before was under half the one after
	ChangeSlowed = "slowed" // growth slowed and still leaks
)

// Tail is the growth of a leak after its knot: one that slowed, or one
// that began late.
type Tail struct {
	AtRequests       float64    `json:"at_requests"`        // cumulative requests at the knot
	BeforePerRequest float64    `json:"before_per_request"` // the slope before the knot
	PerRequest       float64    `json:"per_request"`        // the slope after it
	CI95             [2]float64 `json:"ci95"`               // per request, after it
}

// The tests a Resource's PValue comes from (Resource.PTest).
const (
	// PTestSlope: one-sided, a z test of the fit CI95 is from: the slope
	// over the standard error that CI95's lower half implies, (slope −
	// CI95[0])/1.96, so PValue < 0.025 exactly when CI95[0] > 0 (CI95,
	// Theil–Sen inflated, need not be symmetric about the slope;
	// docs/verdict-study.md, "A p that agrees with its interval").
	PTestSlope = "slope"
	// PTestSign: the sign test of the series' sudden jumps up against
	// down, for growth in jumps (a heap expanding, arenas mapped); it is
	// not CI95's test, and CI95 may reach below 0 beside it.
	PTestSign = "sign"
	// PTestFitted: with the method exact-count, CI95 is the exact bound
	// from the readings and PValue the fitted slope's (PTestSlope of the
	// fit's own interval, which the bound replaced).
	PTestFitted = "fitted_slope"
)
