package daemon

import (
	"runtime"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/soakd/soakd/soak/load"
	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/verdict"
)

// Label values that are not taken from a report.
const (
	codeClassNone = "none" // no response was received
	resultOK      = "ok"
	resultFailed  = "failed"
	resultStopped = "stopped"
	// resultInterrupted: soakd died during the run (crash, kill -9, power
	// loss); counted when the next soakd finds the run and analyses it.
	resultInterrupted = "interrupted"
	verdictFailed     = "failed" // the last run ended without a report
)

var (
	cpuBounds = []string{"cpu", "io", "client", verdict.Inconclusive}
	verdicts  = []string{verdict.OverallFailing, verdict.OverallLeak, verdict.OverallClean, verdict.OverallInconclusive, verdictFailed}
	results   = []string{resultOK, resultFailed, resultStopped, resultInterrupted}
	classes   = []string{"1xx", "2xx", "3xx", "4xx", "5xx", codeClassNone}
	causes    = load.Causes() // the engine's own list: a new cause gets its series
)

// metrics are the daemon's Prometheus metrics. Every label value is
// bounded: job names come from the config, the rest from fixed lists.
type metrics struct {
	// resources holds a gauge per resource of the table that names a
	// metric (model.Resources), set from each sample.
	resources     []resourceGauge
	requests      *prometheus.CounterVec
	reqErrors     *prometheus.CounterVec
	duration      *prometheus.HistogramVec
	maxFDs        *prometheus.GaugeVec
	cpu           *prometheus.CounterVec
	procs         *prometheus.GaugeVec
	restarts      *prometheus.CounterVec
	up            *prometheus.GaugeVec
	slopeReq      *prometheus.GaugeVec
	slopeHour     *prometheus.GaugeVec
	leak          *prometheus.GaugeVec
	tte           *prometheus.GaugeVec
	cpuBound      *prometheus.GaugeVec
	lastVerdict   *prometheus.GaugeVec
	lastTimestamp *prometheus.GaugeVec
	lastDied      *prometheus.GaugeVec
	runs          *prometheus.CounterVec
	active        *prometheus.GaugeVec
	skipped       *prometheus.CounterVec
}

func gauge(name, help string, labels ...string) *prometheus.GaugeVec {
	return prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, labels)
}

func counter(name, help string, labels ...string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
}

// newMetrics creates the metrics and registers them, the build info and the
// Go and process collectors on reg.
func newMetrics(reg prometheus.Registerer, version string) (*metrics, error) {
	m := &metrics{
		requests:  counter("soakd_requests_total", "Completed requests by HTTP status class (none: no response).", "job", "code_class"),
		reqErrors: counter("soakd_request_errors_total", "Failed requests by cause.", "job", "cause"),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "soakd_request_duration_seconds",
			Help:    "Request latency, from the intended send time in open loop.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2.5, 14),
		}, []string{"job"}),
		maxFDs:        gauge("soakd_target_max_fds", "Soft file descriptor limit of the target's root process.", "job"),
		cpu:           counter("soakd_target_cpu_seconds_total", "CPU time of the target's process tree seen while sampling, by mode.", "job", "mode"),
		procs:         gauge("soakd_target_processes", "Processes in the target's tree.", "job"),
		restarts:      counter("soakd_target_restarts_total", "Restarts of the target's root process seen during runs.", "job"),
		up:            gauge("soakd_target_up", "Whether the target was alive at the last sample (1) or not (0).", "job"),
		slopeReq:      gauge("soakd_leak_slope_per_request", "Fitted growth per request of a resource (bytes, fds, threads or sockets), from the live or last analysis.", "job", "resource"),
		slopeHour:     gauge("soakd_leak_slope_per_hour", "Fitted growth per hour of a resource at the soak's request rate.", "job", "resource"),
		leak:          gauge("soakd_leak_detected", "Whether the analysis calls the resource a leak (1) or not (0).", "job", "resource"),
		tte:           gauge("soakd_time_to_exhaustion_seconds", "Time until the resource reaches its limit at the fitted slope; absent when never.", "job", "resource"),
		cpuBound:      gauge("soakd_cpu_bound", "What bounds the target (1 for the current verdict): cpu, io, client or inconclusive.", "job", "bound"),
		lastVerdict:   gauge("soakd_last_run_verdict", "The last finished run's verdict (1 for the verdict, 0 for the others).", "job", "verdict"),
		lastTimestamp: gauge("soakd_last_run_timestamp_seconds", "When the last run of the job ended, Unix seconds.", "job"),
		lastDied:      gauge("soakd_last_run_target_died", "Whether the last finished run ended because its target died (1) or not (0).", "job"),
		runs:          counter("soakd_runs_total", "Finished runs by result: ok, failed, stopped, interrupted (soakd died during the run; counted by the next soakd at its start).", "job", "result"),
		active:        gauge("soakd_run_active", "Whether a run of the job is going (1) or not (0).", "job"),
		skipped:       counter("soakd_schedule_skipped_total", "Scheduled ticks skipped because the job's previous run was still going.", "job"),
	}
	build := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "soakd_build_info", Help: "soakd's version and Go version; always 1.",
	}, []string{"version", "goversion"})
	build.WithLabelValues(version, runtime.Version()).Set(1)
	for _, res := range model.Resources {
		if res.Metric != "" {
			m.resources = append(m.resources, resourceGauge{gauge(res.Metric, res.Help, "job"), res.Metric, res.Value})
		}
		if res.WholeMetric != "" {
			m.resources = append(m.resources, resourceGauge{gauge(res.WholeMetric, res.WholeHelp, "job"), res.WholeMetric, res.WholeValue})
		}
	}
	cs := append(m.collectors(), build,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// resourceGauge is a resource's gauge of its last reading (or of the
// whole reading of a resource judged on a part), read by value.
type resourceGauge struct {
	*prometheus.GaugeVec
	name  string
	value func(model.Record) (float64, bool)
}

func (m *metrics) collectors() []prometheus.Collector {
	cs := make([]prometheus.Collector, 0, len(m.resources))
	for _, g := range m.resources {
		cs = append(cs, g)
	}
	return append(cs,
		m.requests, m.reqErrors, m.duration, m.maxFDs, m.cpu, m.procs, m.restarts, m.up, m.slopeReq, m.slopeHour, m.leak,
		m.tte, m.cpuBound, m.lastVerdict, m.lastTimestamp, m.lastDied, m.runs, m.active, m.skipped,
	)
}

// initJob creates a job's series at their zero values, so rate() and
// absent() work from the first scrape.
func (m *metrics) initJob(job string) {
	for _, r := range results {
		m.runs.WithLabelValues(job, r)
	}
	m.skipped.WithLabelValues(job)
	m.active.WithLabelValues(job)
}

// startRun marks a job's run active and creates its run's counters at
// zero, so that increase() sees the run's first restart.
func (m *metrics) startRun(job string) {
	m.active.WithLabelValues(job).Set(1)
	m.restarts.WithLabelValues(job)
	for _, mode := range []string{"user", "system"} {
		m.cpu.WithLabelValues(job, mode)
	}
}

// dropJob deletes every series of a job that the config no longer has.
func (m *metrics) dropJob(job string) {
	for _, c := range m.collectors() {
		if v, ok := c.(interface {
			DeletePartialMatch(prometheus.Labels) int
		}); ok {
			v.DeletePartialMatch(prometheus.Labels{"job": job})
		}
	}
}

// loadObserver returns an OnResult hook for a job's load, with its series
// resolved once so that the per-request path is a few atomic adds.
func (m *metrics) loadObserver(job string) func(load.Result) {
	byClass := make([]prometheus.Counter, len(classes))
	for i, c := range classes {
		byClass[i] = m.requests.WithLabelValues(job, c)
	}
	byCause := make(map[string]prometheus.Counter, len(causes))
	for _, c := range causes {
		byCause[c] = m.reqErrors.WithLabelValues(job, c)
	}
	other := byCause[load.CauseOther]
	hist := m.duration.WithLabelValues(job)
	return func(r load.Result) {
		i := len(classes) - 1
		if r.Status >= 100 && r.Status < 600 {
			i = r.Status/100 - 1
		}
		byClass[i].Inc()
		if r.Cause != "" {
			c, ok := byCause[r.Cause]
			if !ok {
				c = other
			}
			c.Inc()
		}
		hist.Observe(r.Latency.Seconds())
	}
}

// cpuTracker turns a run's cumulative CPU readings into counter increments
// that never go down: a reading below the last one (a restart) counts from
// zero.
type cpuTracker struct {
	started          bool
	lastUser, lastSy float64
}

func (t *cpuTracker) deltas(user, system float64) (du, ds float64) {
	if !t.started {
		t.started = true
		t.lastUser, t.lastSy = user, system
		return 0, 0
	}
	du, ds = user-t.lastUser, system-t.lastSy
	if du < 0 {
		du = user
	}
	if ds < 0 {
		ds = system
	}
	t.lastUser, t.lastSy = user, system
	return du, ds
}

// observeRecord updates the target gauges from one sample.
func (m *metrics) observeRecord(job string, r model.Record, cpu *cpuTracker) {
	m.up.WithLabelValues(job).Set(b2f(r.Alive))
	if !r.Alive {
		return
	}
	for _, g := range m.resources {
		if v, ok := g.value(r); ok {
			g.WithLabelValues(job).Set(v)
		}
	}
	if r.FDLimit > 0 {
		m.maxFDs.WithLabelValues(job).Set(float64(r.FDLimit))
	}
	m.procs.WithLabelValues(job).Set(float64(r.Procs))
	du, ds := cpu.deltas(r.CPUUser, r.CPUSystem)
	m.cpu.WithLabelValues(job, "user").Add(du)
	m.cpu.WithLabelValues(job, "system").Add(ds)
}

// observeAnalysis sets the leak and CPU gauges from a (live or final)
// report.
func (m *metrics) observeAnalysis(job string, rep *model.Report) {
	for name, res := range rep.Resources {
		m.slopeReq.WithLabelValues(job, name).Set(res.PerRequest)
		m.slopeHour.WithLabelValues(job, name).Set(res.PerHour)
		m.leak.WithLabelValues(job, name).Set(b2f(res.Verdict == verdict.Leak))
		if res.TimeToExhaustionSeconds != nil {
			m.tte.WithLabelValues(job, name).Set(*res.TimeToExhaustionSeconds)
		} else {
			m.tte.DeleteLabelValues(job, name)
		}
	}
	if c := rep.CPU; c.Cost.Windows > 0 {
		l := costLeakOf(job, 0, c)
		m.slopeReq.WithLabelValues(job, costResource).Set(l.PerRequest)
		m.slopeHour.WithLabelValues(job, costResource).Set(l.PerHour)
		m.leak.WithLabelValues(job, costResource).Set(b2f(c.Cost.Rising))
	}
	bound := rep.CPU.Bound
	if bound == "" {
		bound = verdict.Inconclusive
	}
	for _, b := range cpuBounds {
		m.cpuBound.WithLabelValues(job, b).Set(b2f(b == bound))
	}
}

// observeEnd records a finished run: its result, verdict and end time.
func (m *metrics) observeEnd(job, result, verdictName string, ended float64) {
	m.runs.WithLabelValues(job, result).Inc()
	for _, v := range verdicts {
		m.lastVerdict.WithLabelValues(job, v).Set(b2f(v == verdictName))
	}
	m.lastTimestamp.WithLabelValues(job).Set(ended)
	m.active.WithLabelValues(job).Set(0)
	m.clearRunGauges(job)
}

// clearRunGauges deletes a job's series that describe a run while it goes:
// the target's gauges and counters (CPU, restarts) and the time to
// exhaustion, which no longer mean anything once the load stopped (a rule
// on them would go on firing). The leak and CPU gauges stay: they are the
// last run's analysis, as of soakd_last_run_timestamp_seconds.
func (m *metrics) clearRunGauges(job string) {
	for _, g := range m.resources {
		g.DeleteLabelValues(job)
	}
	for _, g := range []*prometheus.GaugeVec{m.maxFDs, m.procs, m.up} {
		g.DeleteLabelValues(job)
	}
	m.tte.DeletePartialMatch(prometheus.Labels{"job": job})
	m.cpu.DeletePartialMatch(prometheus.Labels{"job": job})
	m.restarts.DeleteLabelValues(job)
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// itoa is strconv.FormatInt for run IDs.
func itoa(id int64) string { return strconv.FormatInt(id, 10) }
