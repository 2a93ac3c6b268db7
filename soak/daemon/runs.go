package daemon

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/soakd/soakd/alerts"
	"github.com/soakd/soakd/probes"
	"github.com/soakd/soakd/soak/analysis"
	"github.com/soakd/soakd/soak/config"
	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/runner"
	"github.com/soakd/soakd/soak/store"
	"github.com/soakd/soakd/soak/urlx"
	"github.com/soakd/soakd/soak/verdict"
	"github.com/soakd/soakd/soak/web"
)

// Triggers of a run.
const (
	TriggerSchedule = store.TriggerSchedule
	TriggerAPI      = store.TriggerAPI
)

// Errors of StartRun and StopRun.
var (
	ErrUnknownJob   = errors.New("no such job")
	ErrShuttingDown = errors.New("soakd is shutting down")
	ErrNotRunning   = errors.New("run is not running")
)

// BusyError says that a job's previous run is still going.
type BusyError struct {
	Job   string
	RunID int64
	// released is closed when the previous run gives up the job, nil
	// while its outcome is not yet stored; see StartRun.
	released chan struct{}
}

func (e *BusyError) Error() string {
	return fmt.Sprintf("job %s: run %d is still going", e.Job, e.RunID)
}

// activeRun is one run while it goes.
type activeRun struct {
	id      int64
	job     string
	trigger string
	started time.Time
	ctx     context.Context
	cancel  context.CancelFunc
	stopped atomic.Bool // a stop was asked through the API
	// ended is set once the run's outcome is stored (or kept in memory,
	// when the store refuses it): from then on the API serves the stored
	// report and a stop is refused, though the run keeps its reservation
	// until its alerts and metrics are done (release).
	ended atomic.Bool
	// finishing is held while the outcome is stored and ended set, so
	// that a reader who saw the stored status (the run list) never finds
	// the run still live: activeByID waits on it.
	finishing sync.RWMutex
	// released is closed when the run gives up its job's reservation
	// (release), after its alerts and metrics.
	released chan struct{}
	log      *zap.Logger

	planDuration time.Duration // the load's bounds, for the progress
	planRequests uint64
	ti           model.TargetInfo
	ao           analysis.Options
	// local says the target is sampled from this machine's /proc;
	// collectorPID is the root PID whose runtime ao.Collector names.
	local        bool
	collectorPID int32
	// earlier returns the job's evidence of earlier runs of the process
	// the records sample, for the live analysis (see Daemon.earlierFor).
	earlier func([]model.Record) map[string]verdict.Earlier
	spec    string     // the job's target, for the live report until a sample names the root
	root    liveTarget // the root process the live report last described

	storeFailed atomic.Pointer[error] // the first failed sample write

	cpu cpuTracker // used by the sampling goroutine only
	// gate holds the live looks' leak alerts back until they persist; used
	// by the live loop only.
	gate *verdict.Gate

	// charts are the rendered charts of chartsOf, the live analysis they
	// were drawn for (liveCharts); guarded by chartsMu.
	chartsMu sync.Mutex
	charts   *web.Charts
	chartsOf *model.Report

	mu sync.Mutex // guards the plan, ti, ao, earlier, spec, root, res, live, alive and inc
	// res holds the records for the live analysis, in bounded memory; the
	// full series is in the store only.
	res   reservoir
	live  *model.Report
	alive bool
	inc   int
}

// failStore stops the run at its first sample the store refused: without
// its samples on disk a crash would lose the run, and a full disk only
// gets fuller. The run ends "failed", its report served from memory.
func (ar *activeRun) failStore(err error) {
	err = fmt.Errorf("storing samples failed (%w); the run was stopped, and its report covers the samples in memory", err)
	if ar.storeFailed.CompareAndSwap(nil, &err) {
		ar.log.Error("run stopped: the store refused a sample", zap.Error(err))
		ar.cancel()
	}
}

// storeErr returns why the store failed the run, or nil.
func (ar *activeRun) storeErr() error {
	if p := ar.storeFailed.Load(); p != nil {
		return *p
	}
	return nil
}

// samples returns the number of records taken so far.
func (a *activeRun) samples() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.res.n
}

// analyze analyses the records so far.
func (a *activeRun) analyze() *model.Report {
	a.mu.Lock()
	ao := a.ao
	a.mu.Unlock()
	return a.analyzeWith(ao)
}

func (a *activeRun) analyzeWith(ao analysis.Options) *model.Report {
	a.mu.Lock()
	recs := a.res.snapshot()
	n, soakN := a.res.n, a.res.soakN
	ti, earlier := a.ti, a.earlier
	a.mu.Unlock()
	if ti.Probed {
		ti.Description = a.describe(recs)
	}
	if earlier != nil {
		ao.Earlier = earlier(recs)
	}
	rep := analysis.NewReport(recs, nil, ti, ao)
	rep.Samples, rep.Phases.SoakSamples = n, soakN // the run's, not the reservoir's
	return rep
}

// analyzeLook is analyze at the live looks' stricter level (see
// verdict.LiveAlphaShare).
func (a *activeRun) analyzeLook() *model.Report {
	a.mu.Lock()
	ao := a.ao
	a.mu.Unlock()
	ao.Memory = ao.Memory.WithDefaults("bytes")
	ao.FDs = ao.FDs.WithDefaults("fds")
	ao.Memory.Alpha *= verdict.LiveAlphaShare
	ao.FDs.Alpha *= verdict.LiveAlphaShare
	ao.Memory.Look, ao.FDs.Look = true, true
	return a.analyzeWith(ao)
}

// liveTarget is the root process of a running target and its description.
type liveTarget struct {
	pid  int32
	desc string
}

// describe says what the live report's target is, as the final report
// does: "pid N (command line)" of the root in the last sample, else the
// job's target spec. The command line is read once per root.
func (a *activeRun) describe(recs []model.Record) string {
	a.mu.Lock()
	spec, root := a.spec, a.root
	a.mu.Unlock()
	n := len(recs)
	if n == 0 || !recs[n-1].Alive || recs[n-1].RootPID <= 0 {
		return spec
	}
	pid := recs[n-1].RootPID
	if pid != root.pid {
		root = liveTarget{pid: pid, desc: fmt.Sprintf("pid %d (%s)", pid, probes.Cmdline(pid))}
		a.mu.Lock()
		a.root = root
		a.mu.Unlock()
	}
	return root.desc
}

// lastDesc is the target as last described: its root process when a
// sample named one, else the job's target spec.
func (a *activeRun) lastDesc() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.root.desc != "" {
		return a.root.desc
	}
	return a.spec
}

func (a *activeRun) latest() *model.Report {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.live
}

// report returns the latest live analysis, or a new one when the live
// loop has not run yet.
func (a *activeRun) report() *model.Report {
	if rep := a.latest(); rep != nil {
		return rep
	}
	return a.analyze()
}

// liveCharts returns the charts of the latest live analysis, drawn from
// the records it analysed, rendering them at the first view after each
// analysis (every LiveInterval); nil before the first one. A browser
// left on a live page reloads it every few seconds: drawing seven charts
// anew each time made about 6 MB of garbage per view, and the charts'
// data would have been newer than their fit line and the tables.
func (a *activeRun) liveCharts() (*web.Charts, error) {
	a.chartsMu.Lock()
	defer a.chartsMu.Unlock()
	live := a.latest()
	if live == nil || live == a.chartsOf {
		return a.charts, nil
	}
	c, err := web.RenderCharts(live)
	if err != nil {
		return nil, err
	}
	a.charts, a.chartsOf = c, live
	return c, nil
}

// records returns the reservoir's records as they are now (a copy).
func (a *activeRun) records() []model.Record {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.res.snapshot()
}

// progress returns the share of the planned load done (-1 when the load
// has no bound) and the requests so far.
func (a *activeRun) progress() (float64, uint64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.res.n == 0 {
		return 0, 0
	}
	r, loadStart := &a.res.newest, a.res.loadStart // the idle baseline's samples come first
	p := -1.0
	if a.planDuration > 0 {
		p = max(r.Elapsed-loadStart, 0) / a.planDuration.Seconds()
	}
	if a.planRequests > 0 {
		p = max(p, float64(r.Requests)/float64(a.planRequests))
	}
	return min(p, 1), r.Requests
}

// StartRun starts a run of job now and returns its ID. It fails with a
// *BusyError when the job's previous run is still going. A previous run
// whose outcome is stored (the run list says it ended) is waited for, up
// to endingWait, while it evaluates its alerts and metrics: a client that
// starts the next run when it sees the last one end is not refused.
func (d *Daemon) StartRun(job, trigger string) (int64, error) {
	ar, j, err := d.reserve(job, trigger)
	var busy *BusyError
	if errors.As(err, &busy) && busy.released != nil {
		select {
		case <-busy.released:
			ar, j, err = d.reserve(job, trigger)
		case <-time.After(endingWait):
		}
	}
	if err != nil {
		return 0, err
	}
	id, err := d.st.CreateRun(job, trigger, targetOf(j), ar.started)
	if err != nil {
		d.release(ar)
		return 0, fmt.Errorf("daemon: job %s: %w", job, err)
	}
	log := d.log.With(zap.String("job", job), zap.Int64("run_id", id), zap.String("trigger", trigger))
	d.mu.Lock() // readers find ar by its ID through d.active under mu: StopRun uses its log
	ar.id, ar.log = id, log
	d.mu.Unlock()
	go d.execute(ar, j)
	return id, nil
}

// reserve registers a run of job as active, so that a second start is
// refused, and counts it in d.runs.
func (d *Daemon) reserve(job, trigger string) (*activeRun, config.Job, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closing {
		return nil, config.Job{}, ErrShuttingDown
	}
	j := d.cfg.Job(job)
	if j == nil {
		return nil, config.Job{}, fmt.Errorf("job %q: %w", job, ErrUnknownJob)
	}
	if cur, ok := d.active[job]; ok {
		busy := &BusyError{Job: job, RunID: cur.id}
		if cur.isEnded() {
			busy.released = cur.released
		}
		return nil, config.Job{}, busy
	}
	ar := &activeRun{job: job, trigger: trigger, started: d.o.Now(), released: make(chan struct{})}
	if j.MaxDuration > 0 {
		ar.ctx, ar.cancel = context.WithTimeout(d.ctx, j.MaxDuration)
	} else {
		ar.ctx, ar.cancel = context.WithCancel(d.ctx)
	}
	d.active[job] = ar
	d.runs.Add(1)
	d.m.startRun(job)
	return ar, *j, nil
}

// release ends a run's reservation. When a reload removed the job while
// the run went on, it drops the job's series and resolves its alerts
// then, as Reload would have.
func (d *Daemon) release(ar *activeRun) {
	ar.cancel()
	d.mu.Lock()
	if d.active[ar.job] == ar {
		delete(d.active, ar.job)
	}
	if ar.released != nil {
		close(ar.released)
	}
	if d.cfg.Job(ar.job) == nil {
		d.ev.forget(ar.job)
		d.m.dropJob(ar.job)
		if d.alerts != nil {
			d.alerts.jobRemoved(ar.job)
		}
	} else {
		d.m.active.WithLabelValues(ar.job).Set(0)
	}
	d.mu.Unlock()
	d.runs.Done()
}

// endingWait bounds how long a start waits for the job's previous run,
// already ended, to finish its alerts and metrics.
const endingWait = 30 * time.Second

// targetOf describes a job's target for the run list.
func targetOf(j config.Job) string {
	if n := j.Target.Named(); n != "" {
		return n
	}
	return urlx.Redact(j.Load.URL)
}

// StopRun stops a running run; it ends "stopped" with its analysis.
func (d *Daemon) StopRun(id int64) error {
	ar := d.activeByID(id)
	if ar == nil {
		return ErrNotRunning
	}
	ar.stopped.Store(true)
	ar.cancel()
	ar.log.Info("run stop requested")
	return nil
}

// end stores the run's outcome with store and marks it ended, both while
// holding finishing.
func (ar *activeRun) end(store func()) {
	ar.finishing.Lock()
	defer ar.finishing.Unlock()
	store()
	ar.ended.Store(true)
}

// isEnded tells whether the run's outcome is stored, waiting for a store
// under way.
func (ar *activeRun) isEnded() bool {
	ar.finishing.RLock()
	defer ar.finishing.RUnlock()
	return ar.ended.Load()
}

// activeByID returns the run id while it goes, nil once its outcome is
// stored.
func (d *Daemon) activeByID(id int64) *activeRun {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, ar := range d.active {
		if ar.id == id && !ar.isEnded() {
			return ar
		}
	}
	return nil
}

func (d *Daemon) hub() *alertHub {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.alerts
}

// execute runs the soak, with the live analysis beside it, and stores the
// outcome.
func (d *Daemon) execute(ar *activeRun, j config.Job) {
	defer d.release(ar)
	if j.IsSweep() {
		d.executeSweep(ar, j)
		return
	}
	opts, err := j.Options()
	if err != nil {
		d.finish(ar, nil, fmt.Errorf("job %s: %w", j.Name, err))
		return
	}
	ar.mu.Lock()
	ar.spec = targetOf(j)
	ar.mu.Unlock()
	d.wire(ar, &opts)
	ar.log.Info("run started", zap.String("target", targetOf(j)), zap.Duration("max_duration", j.MaxDuration),
		zap.Duration("load_duration", opts.Load.Duration), zap.Uint64("load_requests", opts.Load.Requests))
	liveCtx, stopLive := context.WithCancel(ar.ctx)
	var live sync.WaitGroup
	live.Go(func() { d.liveLoop(liveCtx, ar) })
	rep, err := runner.Run(ar.ctx, opts)
	d.forgetStarted(ar) // Run stopped the target it started
	stopLive()
	live.Wait()
	d.finish(ar, rep, err)
}

// wire hooks the run's samples and requests into the store, the metrics,
// the live analysis and the alerts.
func (d *Daemon) wire(ar *activeRun, o *runner.Options) {
	o.Log = ar.log
	o.OutDir, o.Progress = "", nil
	o.Spool = storeSpool{d: d, ar: ar}
	o.OnRecord = func(r model.Record) { d.onRecord(ar, r) }
	o.Load.OnResult = d.m.loadObserver(ar.job)
	o.Target.OnStart = func(p probes.Started) { d.recordStarted(ar, p) }
	ar.mu.Lock()
	ar.planDuration, ar.planRequests = o.Load.Duration, o.Load.Requests
	ar.ti = model.TargetInfo{Probed: !o.NoProbe}
	if ar.ti.Probed && !o.Remote.Enabled() {
		ar.ti.HostMemoryBytes, _ = probes.HostMemory("/proc") // 0 when unreadable: the alerts say less
		ar.local = true
	}
	ar.ao = analysisOf(o)
	ar.earlier = func(recs []model.Record) map[string]verdict.Earlier { return d.earlierFor(ar.job, recs) }
	ar.mu.Unlock()
}

// analysisOf returns the analysis options of a run with options o, as
// runner.Run's own report uses them.
func analysisOf(o *runner.Options) analysis.Options {
	ao := analysis.Options{Memory: o.Memory, FDs: o.FDs, MemLimit: o.MemLimit, Health: o.Health,
		Endpoints: analysis.OptionsEndpointNames(o.Load.Endpoints)}
	if o.Load.Rate == 0 {
		ao.Concurrency = max(o.Load.Concurrency, 1)
	}
	return ao
}

// onRecord keeps a sample for the live analysis (runner.Run has stored it
// through the run's spool, so a kill -9 loses at most one), updates the
// target metrics, and fires when the target died or
// restarted. It runs on the sampling goroutine and never blocks on alerts.
func (d *Daemon) onRecord(ar *activeRun, r model.Record) {
	ar.mu.Lock()
	ar.res.add(r)
	wasAlive, prevInc := ar.alive, ar.inc
	ar.alive = r.Alive
	if r.Incarnation > 0 {
		ar.inc = r.Incarnation
	}
	if ar.local && r.Alive && r.RootPID > 0 && r.RootPID != ar.collectorPID {
		ar.collectorPID = r.RootPID
		ar.ao.Collector = runner.CollectorOfPID(r.RootPID)
		ar.ti.Collector = ar.ao.Collector
	}
	ar.mu.Unlock()
	d.m.observeRecord(ar.job, r, &ar.cpu)
	switch {
	case prevInc > 0 && r.Incarnation > prevInc:
		d.m.restarts.WithLabelValues(ar.job).Inc()
		reason := fmt.Sprintf("The target of job %s restarted during run %d (incarnation %d, root PID changed).", ar.job, ar.id, r.Incarnation)
		ar.log.Warn("target restarted", zap.Int("incarnation", r.Incarnation))
		d.hub().targetDown(ar.job, ar.id, ar.describe([]model.Record{r}), reason)
	case wasAlive && !r.Alive:
		reason := fmt.Sprintf("The target of job %s (%s) is gone during run %d, since %s.", ar.job, ar.lastDesc(), ar.id,
			r.Time.Format(time.RFC3339))
		ar.log.Warn("target gone")
		d.hub().targetDown(ar.job, ar.id, ar.lastDesc(), reason)
	}
}

// goneAtEnd says whether the run's target was seen alive and then gone
// in its last sample.
func (ar *activeRun) goneAtEnd() bool {
	ar.mu.Lock()
	defer ar.mu.Unlock()
	return ar.inc > 0 && !ar.alive
}

// finish stores the run's outcome, updates the metrics and the alerts,
// and logs the end and the verdict.
func (d *Daemon) finish(ar *activeRun, rep *model.Report, runErr error) {
	status, result := store.StatusCompleted, resultOK
	switch {
	case ar.storeErr() != nil:
		status, result = store.StatusFailed, resultFailed
		runErr = errors.Join(ar.storeErr(), runErr)
	case ar.stopped.Load() || d.ctx.Err() != nil:
		status, result = store.StatusStopped, resultStopped
	case errors.Is(ar.ctx.Err(), context.DeadlineExceeded):
		status, result = store.StatusStopped, resultStopped
		runErr = errors.Join(runErr, errors.New("max_duration reached"))
	case rep == nil:
		status, result = store.StatusFailed, resultFailed
	}
	if rep == nil && ar.samples() > 0 {
		rep = d.analyzeStored(ar)
	}
	d.crossRun(ar, rep)
	if rep != nil && rep.TargetDied() {
		runErr = errors.Join(runErr, errors.New(rep.DeathFinding()))
		d.hub().targetDown(ar.job, ar.id, rep.Target.Description,
			fmt.Sprintf("Job %s, run %d: %s", ar.job, ar.id, rep.DeathFinding()))
	}
	// The run's metrics are final before the run list says it ended: a
	// scrape that follows the list sees the last run's analysis, result
	// and end time, and none of its live series (the clean-clone CI's
	// TestRunSeriesDeletedAfterRun scraped in between and found the CPU
	// counter and the process count still exported). The alerts follow.
	verdictName := verdictFailed
	if rep != nil {
		verdictName = rep.Verdict
		d.m.observeAnalysis(ar.job, rep)
	}
	d.m.lastDied.WithLabelValues(ar.job).Set(b2f(rep != nil && rep.TargetDied()))
	d.m.observeEnd(ar.job, result, verdictName, float64(d.o.Now().UnixNano())/1e9)
	ar.end(func() {
		if err := d.st.FinishRun(ar.id, status, rep, runErr); !d.wrote("run outcome", err) {
			ar.log.Error("storing the run's outcome failed: its report is served from memory and stored once writes work", zap.Error(err))
			d.keepUnsaved(ar, status, rep, runErr)
		}
	})
	d.account(ar, status, result, rep, runErr)
}

// account updates the alerts of a finished run (finish has made its
// metrics final) and logs it.
func (d *Daemon) account(ar *activeRun, status, result string, rep *model.Report, runErr error) {
	hub := d.hub()
	fields := []zap.Field{zap.String("status", status), zap.Duration("duration", d.o.Now().Sub(ar.started))}
	if rep != nil {
		firing := hub.evaluate(ar.job, ar.id, rep, nil)
		if rep.TargetDied() || ar.goneAtEnd() {
			// The death is the run's finding: its alert stays until the
			// next run, as a leak's does. A target that died within the
			// load's last dead_grace is no death in the report (the load
			// ended before the grace did), but it is gone all the same.
			firing = append(firing, alerts.ResourceTarget)
		}
		if d.againstBaseline(ar.job, ar.id, status, rep) {
			firing = append(firing, alerts.ResourceBaseline)
		}
		hub.endRun(ar.job, firing)
		fields = append(fields, reportFields(rep)...)
	}
	if result == resultFailed && ar.trigger == TriggerSchedule {
		hub.runFailed(ar.job, ar.id, fmt.Sprintf("Scheduled run %d of job %s failed: %v", ar.id, ar.job, runErr))
	}
	if runErr != nil {
		fields = append(fields, zap.Error(runErr))
	}
	if result == resultFailed {
		ar.log.Error("run failed", fields...)
		return
	}
	ar.log.Info("run ended", fields...)
}

// reportFields are a report's headline figures as log fields.
func reportFields(rep *model.Report) []zap.Field {
	var leaks []string
	for _, n := range rep.ResourceNames() {
		if rep.Resources[n].Verdict == verdict.Leak {
			leaks = append(leaks, n)
		}
	}
	f := []zap.Field{
		zap.String("verdict", rep.Verdict), zap.Strings("leaks", leaks),
		zap.String("cpu_bound", rep.CPU.Bound), zap.Int("samples", rep.Samples),
	}
	if rep.Load != nil {
		f = append(f, zap.Uint64("requests", rep.Load.Requests), zap.Uint64("errors", rep.Load.Errors))
	}
	if r, ok := rep.Resources["rss"]; ok {
		f = append(f, zap.Float64("rss_per_request_bytes", r.PerRequest))
	}
	return f
}

// liveLoop recomputes the analysis every LiveInterval while the run goes.
func (d *Daemon) liveLoop(ctx context.Context, ar *activeRun) {
	t := time.NewTicker(d.o.LiveInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			d.analyzeLive(ar)
		}
	}
}

// analyzeLive analyses a snapshot of the run's records, publishes it to
// the metrics and the API, and feeds the alerts.
func (d *Daemon) analyzeLive(ar *activeRun) *model.Report {
	if ar.samples() < 2 {
		return nil
	}
	rep := ar.analyzeLook()
	ar.mu.Lock()
	ar.live = rep
	ar.mu.Unlock()
	d.m.observeAnalysis(ar.job, rep)
	if ar.gate == nil {
		ar.gate = verdict.NewGate(d.o.LiveGateLooks, d.o.LiveGateMinSoak.Seconds())
	}
	d.hub().evaluate(ar.job, ar.id, rep, ar.gate)
	ar.log.Debug("live analysis", zap.String("verdict", rep.Verdict), zap.Int("samples", rep.Samples))
	return rep
}
