package daemon

import (
	"fmt"
	"maps"
	"slices"
	"sync"

	"go.uber.org/zap"

	"github.com/soakd/soakd/soak/analysis"
	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/store"
	"github.com/soakd/soakd/soak/verdict"
)

// processID is a process's identity: a PID the kernel reuses is another
// process, told apart by its start time (clock ticks since boot).
type processID struct {
	pid   int32
	start uint64
}

func (p processID) String() string { return fmt.Sprintf("pid %d", p.pid) }

// processEvidence is what a job's runs of one process found, by resource.
type processEvidence struct {
	proc processID
	res  map[string]verdict.Earlier
}

// evidence keeps, for each job, the evidence of its runs of the process
// it soaked last: a long-lived server soaked every few minutes is one body
// of evidence (see verdict.Earlier). Each change is written to the store
// (save), and New restores it: a restart of soakd changes no verdict.
type evidence struct {
	mu   sync.Mutex // guards jobs and orders the saves
	jobs map[string]processEvidence
	// save persists the whole evidence (store.Store.SaveCrossRun); nil
	// keeps it in memory only. A failed save is logged by failed.
	save   func(store.CrossRun) error
	failed func(error)
}

// restore seeds e with the evidence stored by the last soakd.
func (e *evidence) restore(c store.CrossRun) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.jobs = make(map[string]processEvidence, len(c))
	for job, j := range c {
		e.jobs[job] = processEvidence{proc: processID{j.PID, j.Start}, res: maps.Clone(j.Resources)}
	}
}

// restoreEvidence restores the cross-run evidence the last soakd stored,
// and has each change of it stored. A file that cannot be read is logged
// and the evidence starts empty.
func (d *Daemon) restoreEvidence() {
	d.ev.save = d.st.SaveCrossRun
	d.ev.failed = func(err error) {
		d.log.Error("storing the cross-run evidence failed; a restart of soakd now would judge each process's next run without its earlier runs", zap.Error(err))
	}
	c, err := d.st.CrossRun()
	if err != nil {
		d.log.Error("reading the cross-run evidence", zap.Error(err))
		return
	}
	cfg := d.config()
	for job := range c {
		if cfg.Job(job) == nil {
			delete(c, job)
		}
	}
	d.ev.restore(c)
	if len(c) > 0 {
		d.log.Info("restored the cross-run evidence", zap.Int("jobs", len(c)))
	}
}

// persist writes e's evidence to the store; called with mu held.
func (e *evidence) persist() {
	if e.save == nil {
		return
	}
	c := make(store.CrossRun, len(e.jobs))
	for job, pe := range e.jobs {
		c[job] = store.CrossRunJob{PID: pe.proc.pid, Start: pe.proc.start, Resources: pe.res}
	}
	if err := e.save(c); err != nil && e.failed != nil {
		e.failed(err)
	}
}

// of returns the evidence of job's earlier runs of proc, nil when they
// soaked another process or none.
func (e *evidence) of(job string, proc processID) map[string]verdict.Earlier {
	e.mu.Lock()
	defer e.mu.Unlock()
	pe, ok := e.jobs[job]
	if !ok || pe.proc != proc {
		return nil
	}
	return maps.Clone(pe.res)
}

// forget drops job's evidence: its run soaked no one process, or the job
// is gone.
func (e *evidence) forget(job string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, ok := e.jobs[job]; !ok {
		return
	}
	delete(e.jobs, job)
	e.persist()
}

// record adds run runID's report of proc to job's evidence, starting
// afresh when proc is a new process.
func (e *evidence) record(job string, runID int64, proc processID, rep *model.Report) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.jobs == nil {
		e.jobs = map[string]processEvidence{}
	}
	pe, ok := e.jobs[job]
	if !ok || pe.proc != proc {
		pe = processEvidence{proc: proc, res: map[string]verdict.Earlier{}}
	}
	for name, res := range rep.Resources {
		e := nextEarlier(pe.res[name], runID, res, proc.String())
		if r, ok := model.ResourceNamed(name); ok {
			e.Points = joinPoints(e.Points, runPoints(rep.Records, r.Value, e.Runs == 0))
			e.Runs++
		}
		pe.res[name] = e
	}
	e.jobs[job] = pe
	e.persist()
}

// nextEarlier is a resource's evidence after a run that read res. The
// first-seen level is the first run's (its idle baseline, else the soak's
// start). A leak the run decided stays decided, and a run that reads
// stable or plateau, or whose level fell, turns it; a run that merely did
// not decide keeps it.
func nextEarlier(e verdict.Earlier, runID int64, res verdict.Resource, proc string) verdict.Earlier {
	if e.Level <= 0 {
		e.Level = res.Baseline
		if e.Level <= 0 {
			e.Level = res.Start
		}
	}
	e.Process = proc
	switch {
	case res.Verdict == verdict.Leak:
		if e.LeakRun == 0 {
			e.LeakRun = runID
		}
	case verdict.Settled(res.Verdict), res.Growth < 0:
		e.LeakRun = 0
	}
	return e
}

// Bounds of a resource's joined soak (verdict.Earlier.Points): each run
// adds at most perRunPoints (the lowest of each bin, as the fit's lower
// envelope keeps), and the whole is thinned by half past maxJoined.
const (
	perRunPoints = 64
	maxJoined    = 4096
)

// runPoints returns a run's soak points of one resource, their requests
// and seconds counted from the soak's start, at most perRunPoints of
// them (the lowest of each bin); with the baseline's points first when
// withBaseline is set (the first run: its baseline is the first-seen
// level).
func runPoints(recs []model.Record, value func(model.Record) (float64, bool), withBaseline bool) []verdict.Point {
	var base, soak []verdict.Point
	req0, sec0 := -1.0, 0.0
	for _, r := range recs {
		v, ok := value(r)
		if !ok || !r.Alive {
			continue
		}
		switch {
		case r.Phase == verdict.Baseline && withBaseline:
			base = append(base, verdict.Point{Value: v, Phase: verdict.Baseline})
		case r.Phase == verdict.Soak:
			if req0 < 0 {
				req0, sec0 = float64(r.Requests), r.Elapsed
			}
			soak = append(soak, verdict.Point{Requests: float64(r.Requests) - req0, Seconds: r.Elapsed - sec0, Value: v, Phase: verdict.Soak})
		}
	}
	return append(base, envelope(soak, perRunPoints)...)
}

// envelope keeps the lowest point of each of at most n bins of equal
// counts.
func envelope(pts []verdict.Point, n int) []verdict.Point {
	if len(pts) <= n {
		return pts
	}
	out := make([]verdict.Point, 0, n)
	for b := range n {
		lo, hi := b*len(pts)/n, (b+1)*len(pts)/n
		m := lo
		for i := lo; i < hi; i++ {
			if pts[i].Value < pts[m].Value {
				m = i
			}
		}
		out = append(out, pts[m])
	}
	return out
}

// joinPoints appends a run's points to the joined soak, its soak counted
// on from where the joined soak ends (see verdict.Earlier.Points).
func joinPoints(joined, run []verdict.Point) []verdict.Point {
	var req, sec float64
	for _, p := range joined {
		req, sec = max(req, p.Requests), max(sec, p.Seconds)
	}
	out := slices.Clip(joined)
	for _, p := range run {
		if p.Phase == verdict.Soak {
			p.Requests, p.Seconds = req+p.Requests, sec+p.Seconds
		}
		out = append(out, p)
	}
	if len(out) > maxJoined {
		out = thin(out)
	}
	return out
}

// thin halves the soak points of a joined soak, keeping the lower of
// each pair, and keeps the baseline's.
func thin(pts []verdict.Point) []verdict.Point {
	var out []verdict.Point
	for i := 0; i < len(pts); i++ {
		p := pts[i]
		if p.Phase == verdict.Soak && i+1 < len(pts) && pts[i+1].Phase == verdict.Soak {
			if pts[i+1].Value < p.Value {
				p = pts[i+1]
			}
			i++
		}
		out = append(out, p)
	}
	return out
}

// rootOf returns the one root process that every live sample of recs
// names, false when there is none or more than one (the target restarted,
// or was not sampled through /proc).
func rootOf(recs []model.Record) (processID, bool) {
	var id processID
	for _, r := range recs {
		if !r.Alive || r.RootPID <= 0 || r.RootStart == 0 {
			continue
		}
		p := processID{r.RootPID, r.RootStart}
		if id.pid != 0 && p != id {
			return processID{}, false
		}
		id = p
	}
	return id, id.pid != 0
}

// crossRun judges the run's report against the job's earlier runs of the
// same process and adds the run to the job's evidence (see judge).
func (d *Daemon) crossRun(ar *activeRun, rep *model.Report) {
	ar.mu.Lock()
	ao := ar.ao
	ar.mu.Unlock()
	d.ev.judge(ar.job, ar.id, ao, rep)
}

// judge judges rep, run runID of job analysed with ao, against the job's
// earlier runs of the same process (see verdict.Earlier), and adds the
// run to the job's evidence. It analyses the records again, with the
// evidence, only when there is some; a run of a new process starts the
// evidence afresh, and a run of no one process (a restart, a remote
// source) clears it.
func (e *evidence) judge(job string, runID int64, ao analysis.Options, rep *model.Report) {
	proc, ok := e.reread(job, ao, rep)
	if !ok {
		e.forget(job)
		return
	}
	e.record(job, runID, proc, rep)
}

// reread analyses rep's records again with job's evidence of the process
// they sample, when there is some. It returns that process, false when
// rep soaked no one process through /proc.
func (e *evidence) reread(job string, ao analysis.Options, rep *model.Report) (processID, bool) {
	if rep == nil || !rep.Target.Probed || rep.Target.Remote != nil {
		return processID{}, false
	}
	proc, ok := rootOf(rep.Records)
	if !ok {
		return processID{}, false
	}
	if earlier := e.of(job, proc); earlier != nil {
		ao.Earlier = earlier
		again := analysis.NewReport(rep.Records, rep.Load, rep.Target, ao)
		rep.Resources, rep.Verdict = again.Resources, again.Verdict
	}
	return proc, true
}

// earlierFor returns the evidence the live analysis of recs may use: the
// job's earlier runs of the process recs sample, nil when none.
func (d *Daemon) earlierFor(job string, recs []model.Record) map[string]verdict.Earlier {
	proc, ok := rootOf(recs)
	if !ok {
		return nil
	}
	return d.ev.of(job, proc)
}
