// Package compare judges whether a new run is worse than an old one: for
// each resource the difference of the two runs' per-request slopes, and for
// latency, CPU per request, error rate and throughput the difference of
// the runs' figures with an interval from a block bootstrap over time
// blocks. Each difference is judged against a margin: regressed when the
// whole interval lies above it, same when the interval lies inside ±margin
// (an equivalence test), improved when the whole interval lies below
// −margin, inconclusive otherwise. It is pure: no I/O.
package compare

import (
	"fmt"
	"math"
	"sort"
)

// Verdicts of a metric and of a comparison.
const (
	Regressed    = "regressed"
	Same         = "same"
	Improved     = "improved"
	Inconclusive = "inconclusive"
	// Unjudged is a metric shown for information only: the runs hold no
	// per-block figures to give it an interval. It never sets the overall
	// verdict.
	Unjudged = "unjudged"
)

// z95 is the normal quantile of a two-sided 95 % interval.
const z95 = 1.959963984540054

// Margins are the differences that matter: a change inside them is the
// same, a change past them a regression.
type Margins struct {
	// LeakBytes and LeakCount are the smallest per-request growth
	// difference that matters, for memory (bytes) and for counts (fds,
	// threads, sockets); LeakShare is the share of the old run's slope
	// that matters when it is larger.
	LeakBytes, LeakCount, LeakShare float64
	// Latency (p50), LatencyP99, LatencyP999 and CPU are shares of the
	// old run's figure (0.10: +10 %).
	Latency, LatencyP99, LatencyP999, CPU float64
	// ErrorPoints is the error rate's margin in percentage points.
	ErrorPoints float64
	// Throughput is the share of the old run's throughput that a drop
	// must exceed to be a regression.
	Throughput float64
}

// DefaultMargins are soakd compare's, for two separate runs: leak per
// request max(16 B, 25 %) (a count 0.001), latency p50 ±25 %, p99 ±25 %,
// p99.9 ±50 %, CPU per request ±20 %, error rate ±0.5 points, throughput
// −10 %. docs/compare.md gives the reason for each: what matters, or
// what two separate runs of one build can resolve (DefaultRunSpread),
// whichever is larger.
func DefaultMargins() Margins {
	return Margins{LeakBytes: 16, LeakCount: 0.001, LeakShare: 0.25, Latency: 0.25, LatencyP99: 0.25, LatencyP999: 0.50,
		CPU: 0.20, ErrorPoints: 0.5, Throughput: 0.10}
}

// InterleavedMargins are soakd ab's: its builds run at once, their
// blocks interleaved, so that the machine's drift falls on both alike and
// its paired differences resolve far finer changes than two separate runs
// can: latency p50 ±10 %, p99 ±25 %, p99.9 ±50 %, CPU per request ±5 %,
// the rest as DefaultMargins. docs/ab.md gives the reasons.
func InterleavedMargins() Margins {
	m := DefaultMargins()
	m.Latency, m.LatencyP99, m.LatencyP999, m.CPU = 0.10, 0.25, 0.50, 0.05
	return m
}

// RunSpread is, for each block metric, the standard deviation of one
// run's offset on the log scale (ln(figure)): how far two separate runs
// of one build differ by themselves, beyond what either run's time
// blocks show (where the processes ran, their heaps' layout, the
// machine's state between the runs).
type RunSpread struct {
	P50, P99, P999, CPU, Throughput float64
	// CPUControlled is the spread of the target's CPU per request
	// relative to soakd's own (Options.ControlCPU).
	CPUControlled float64
}

// Keys of the margins, as Validate names them and Options.MarginNames
// reads them.
const (
	MarginLeakBytes   = "leak_bytes"
	MarginLeakCount   = "leak_count"
	MarginLeakShare   = "leak_share"
	MarginLatency     = "latency"
	MarginLatencyP99  = "latency_p99"
	MarginLatencyP999 = "latency_p999"
	MarginCPU         = "cpu"
	MarginErrorPoints = "error_points"
	MarginThroughput  = "throughput"
)

// Validate checks that every margin is a finite number ≥ 0 and names
// the field that is not.
func (m Margins) Validate() error {
	for _, f := range []struct {
		name string
		v    float64
	}{{MarginLeakBytes, m.LeakBytes}, {MarginLeakCount, m.LeakCount}, {MarginLeakShare, m.LeakShare},
		{MarginLatency, m.Latency}, {MarginLatencyP99, m.LatencyP99}, {MarginLatencyP999, m.LatencyP999},
		{MarginCPU, m.CPU}, {MarginErrorPoints, m.ErrorPoints}, {MarginThroughput, m.Throughput}} {
		if !(f.v >= 0) || math.IsInf(f.v, 0) {
			return fmt.Errorf("margins.%s: must be a number >= 0, got %v", f.name, f.v)
		}
	}
	if m.Throughput >= 1 {
		return fmt.Errorf("margins.throughput: a share of the old throughput, must be < 1, got %v", m.Throughput)
	}
	return nil
}

// Slope is one resource's per-request growth in one run, as the run's
// report gives it.
type Slope struct {
	Unit       string     // "bytes", "fds", "threads", "sockets"
	PerRequest float64    // units per request
	CI95       [2]float64 // its 95 % interval, per request
	// Slow resources (read on a slower cadence) do not hold the overall
	// verdict back when they alone are inconclusive.
	Slow bool
	// Series is the column the slope was fitted on, for resources judged
	// on a part of a reading (model.ResourceDef.SeriesOrWhole); two runs
	// fitted on different columns are not compared.
	Series string
}

// Block is one time block of a run's soak: its totals, and the latency of
// its progress intervals.
type Block struct {
	Seconds  float64 // length
	Requests float64 // completed requests
	Errors   float64 // failed requests among them
	// CPUSeconds is the target's CPU time over the block; NaN when not
	// known (no CPU readings, or the target restarted within the block).
	CPUSeconds float64
	// SelfCPUSeconds is soakd's own CPU time over the block; 0 when not
	// known.
	SelfCPUSeconds float64
	// P50 is the mean over the block's progress intervals of their
	// median latency, weighted by requests; P99 and P999 are the medians
	// over those intervals of their p99 and p99.9, whose values P99s and
	// P999s hold (none: the block is one interval). A run's p99 is the
	// median over all its blocks' intervals: the typical second's tail,
	// which stalls in a minority of the seconds do not move (the stalled
	// seconds of runs of one build vary from none to a quarter of the
	// soak: docs/compare.md). Seconds; 0 when the block has none. Each
	// interval's quantiles are read from its own requests, so at a low
	// rate they lie nearer its slowest request: compare runs at one load.
	P50, P99, P999 float64
	P99s, P999s    []float64
	// Start is when the block starts, seconds since the run started.
	Start float64
}

// Run is what a comparison reads of one run.
type Run struct {
	Slopes map[string]Slope // by resource name, e.g. "rss"
	// Series are the soak's readings of each resource the run fitted, on
	// the series it fitted, in order; none for a resource whose target
	// restarted during the soak. See PairedSlope.
	Series map[string][]Point
	Blocks []Block // the soak's time blocks, in order
	// P999 is the whole run's p99.9 latency in seconds (0: unknown): shown,
	// not judged, when the blocks hold no p99.9 (a run made before
	// reports kept their latency blocks).
	P999 float64
	// Requests is the run's soak requests, for the text.
	Requests float64
	// Contention is the seconds the target's threads waited for a core
	// per CPU second they ran, over the soak (schedstat); NaN when not
	// read. See ContentionShare.
	Contention float64
	// Rate is the open loop's rate asked, requests per second; 0 for a
	// closed loop or when not known. Concurrency is the load's (its
	// clients, or the open loop's most in flight); 0 when not known.
	Rate        float64
	Concurrency int
}

// Metric is one compared figure: the report's "metrics.<name>" object.
// For relative metrics (latency, CPU per request, throughput) Difference,
// CI95 and Margin are shares of Old (new/old − 1); for the error rate
// they are percentage points; for slopes, units per request.
type Metric struct {
	Unit       string     `json:"unit"`
	Old        float64    `json:"old"`
	New        float64    `json:"new"`
	Difference float64    `json:"difference"`
	CI95       [2]float64 `json:"ci95"`
	Relative   bool       `json:"relative"`
	Margin     float64    `json:"margin"`
	// MarginOf is the key of the margin that set Margin (MarginCPU, …);
	// MarginBy says how a reader sets it (a flag: "--cpu-margin"), from
	// Options.MarginNames, and is empty without one.
	MarginOf string `json:"margin_of,omitempty"`
	MarginBy string `json:"margin_by,omitempty"`
	Verdict  string `json:"verdict"`
	Reason   string `json:"reason,omitempty"`
	// Control is how far soakd's own CPU per request moved between the
	// runs, as a share (cpu_per_request only, when judged against it:
	// Options.ControlCPU); Difference and CI95 are then the target's
	// relative to soakd's, and Old and New stay the target's own.
	Control float64 `json:"control_difference,omitempty"`
	// Against names what Difference is relative to when it is not the
	// raw figure: "soakd_cpu" (the target's CPU per CPU second of
	// soakd's own); the table's difference then reads "… vs soakd".
	Against string `json:"against,omitempty"`
	// RunSpread is how far the interval was widened on each side for two
	// separate runs' own offsets (Options.RunSpread), as a share (0.17:
	// ±17 % at 95 %); 0 when it was not.
	RunSpread float64 `json:"run_spread,omitempty"`
	// Slow is carried from the slope: see Slope.Slow.
	Slow bool `json:"-"`
	// HigherIsBetter is true for throughput: its regression is a drop.
	HigherIsBetter bool `json:"higher_is_better,omitempty"`
	slope          bool
}

// Result is a comparison: the overall verdict and each metric's.
type Result struct {
	Verdict string            `json:"verdict"`
	Metrics map[string]Metric `json:"metrics"`
	// Columns name the value columns when they are not soakd compare's
	// (old, new, difference): soakd ab's pooled and paired figures.
	Columns *Columns `json:"columns,omitempty"`
	// Contention is the seconds the old and the new target's threads
	// waited for a core per CPU second they ran (see Run.Contention);
	// absent unless both are known.
	Contention []float64 `json:"contention,omitempty"`
}

// WithContention sets r's Contention when both readings are known.
func (r *Result) WithContention(old, cur float64) {
	if !math.IsNaN(old) && !math.IsNaN(cur) && !math.IsInf(old, 0) && !math.IsInf(cur, 0) {
		r.Contention = []float64{old, cur}
	}
}

// Columns name a table's value columns, and say in Note what they are.
type Columns struct {
	Old        string `json:"old"`
	New        string `json:"new"`
	Difference string `json:"difference"`
	Note       string `json:"note,omitempty"`
}

// columns are r's columns, soakd compare's by default.
func (r Result) columns() Columns {
	if r.Columns != nil {
		return *r.Columns
	}
	return Columns{Old: "old", New: "new", Difference: "difference"}
}

// Names lists the result's metrics in display order: slopes by name, then
// latency, CPU, errors and throughput.
func (r Result) Names() []string {
	names := make([]string, 0, len(r.Metrics))
	for n := range r.Metrics {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		ri, rj := rank(names[i]), rank(names[j])
		if ri != rj {
			return ri < rj
		}
		return names[i] < names[j]
	})
	return names
}

var order = map[string]int{"rss_per_request": 0, LatencyP50: 2, LatencyP99: 3, LatencyP999: 4,
	StalledSeconds: 5, CPUPerRequest: 6, ErrorRate: 7, Throughput: 8}

func rank(name string) int {
	if r, ok := order[name]; ok {
		return r
	}
	return 1
}

// Names of the block metrics.
const (
	LatencyP50  = "latency_p50"
	LatencyP99  = "latency_p99"
	LatencyP999 = "latency_p999"
	// StalledSeconds is the share of a run's progress intervals whose
	// p99 is over StallFactor times the run's typical p99 (in %): shown,
	// not judged (see stalledShare).
	StalledSeconds = "stalled_seconds"
	CPUPerRequest  = "cpu_per_request"
	ErrorRate      = "error_rate"
	Throughput     = "throughput"
)

// SlopeMetric is the name of a resource's slope metric: "rss_per_request".
func SlopeMetric(resource string) string { return resource + "_per_request" }

// Options set a comparison.
type Options struct {
	Margins Margins
	// Seed seeds the bootstrap, so a comparison is reproducible.
	Seed uint64
	// Resamples is the bootstrap's number of resamples; default 2000.
	Resamples int
	// RunSpread is how far two separate runs of one build differ by
	// themselves in each block metric, beyond what either run's blocks
	// show; the zero value adds nothing (two runs known to share their
	// process and machine state). DefaultRunSpread is what this machine
	// measured.
	RunSpread RunSpread
	// ControlCPU judges CPU per request against soakd's own CPU per
	// request when both runs read it under the same load (see
	// controlCPU). Leave it off when soakd's own CPU is not one run's
	// (a daemon running jobs side by side).
	ControlCPU bool
	// MarginNames, when set, says how a reader sets each margin, by its
	// key (MarginCPU: "--cpu-margin"): the text shows it beside the
	// margin (Metric.MarginBy).
	MarginNames map[string]string
}

// Compare judges the new run against the old: every resource both runs
// fitted, and the block metrics. The overall verdict is the worst.
func Compare(old, cur Run, o Options) Result {
	if o.Resamples <= 0 {
		o.Resamples = 2000
	}
	res := Result{Metrics: map[string]Metric{}}
	for name, os := range old.Slopes {
		if ns, ok := cur.Slopes[name]; ok {
			res.Metrics[SlopeMetric(name)] = compareSlopes(os, ns, old.Series[name], cur.Series[name], o.Margins)
		}
	}
	for name, m := range compareBlocks(old, cur, o) {
		res.Metrics[name] = m
	}
	for name, m := range res.Metrics {
		m.MarginBy = o.MarginNames[m.MarginOf]
		res.Metrics[name] = m
	}
	res.WithContention(old.Contention, cur.Contention)
	res.Verdict = Overall(res.Metrics)
	return res
}

// Overall is the worst verdict of the metrics: regressed, then
// inconclusive, then same, then improved. A slow resource that is
// inconclusive does not count when another slope decided (as in a run's
// own verdict); unjudged metrics never count.
func Overall(ms map[string]Metric) string {
	decided := false
	for _, m := range ms {
		if m.slope && !m.Slow && m.Verdict != Inconclusive {
			decided = true
		}
	}
	worst := ""
	for _, m := range ms {
		if m.Verdict == Unjudged || (m.Slow && decided && m.Verdict == Inconclusive) {
			continue
		}
		worst = Worst(worst, m.Verdict)
	}
	if worst == "" {
		return Inconclusive
	}
	return worst
}

var severity = map[string]int{"": 0, Improved: 1, Same: 2, Inconclusive: 3, Regressed: 4}

// Worst is the worse of two verdicts.
func Worst(a, b string) string {
	if severity[b] > severity[a] {
		return b
	}
	return a
}

// Judge is the verdict on a difference's interval ci (oriented so that
// higher is worse) against margin: regressed when ci lies above margin;
// same when it lies inside ±margin; improved when it lies below −margin,
// the mirror of regressed; inconclusive otherwise, and when ci is not
// finite. (Improved once needed only an interval below zero that reached
// past −margin: two processes of one build differ by a few per cent in
// latency and CPU by where they run, which an interval below zero
// proves, and identical builds read improved.)
func Judge(ci [2]float64, margin float64) string {
	lo, hi := ci[0], ci[1]
	switch {
	case math.IsNaN(lo) || math.IsNaN(hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0):
		return Inconclusive
	case lo > margin:
		return Regressed
	case lo >= -margin && hi <= margin:
		return Same
	case hi < -margin:
		return Improved
	}
	return Inconclusive
}

// DefaultRunSpread is the spread two separate runs of one build showed
// on a quiet 2-core machine (docs/compare.md, "How far two runs of one
// build differ").
func DefaultRunSpread() RunSpread {
	return RunSpread{P50: 0.03, P99: 0.03, P999: 0.03, CPU: 0.08, Throughput: 0.08, CPUControlled: 0.025}
}

// Scaled is s with every spread multiplied by k.
func (s RunSpread) Scaled(k float64) RunSpread {
	return RunSpread{P50: k * s.P50, P99: k * s.P99, P999: k * s.P999, CPU: k * s.CPU, Throughput: k * s.Throughput, CPUControlled: k * s.CPUControlled}
}
