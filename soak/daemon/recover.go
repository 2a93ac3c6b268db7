package daemon

import (
	"errors"
	"strconv"

	"go.uber.org/zap"

	"github.com/soakd/soakd/alerts"
	"github.com/soakd/soakd/soak/analysis"
	"github.com/soakd/soakd/soak/config"
	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/store"
)

// errInterrupted is the stored error of a run that a crash left open.
var errInterrupted = errors.New("soakd stopped during the run (crash, kill or power loss); the report covers the samples stored until then")

// recoverInterrupted marks the runs a crash left "running" as interrupted
// and stores an analysis over their stored samples.
func (d *Daemon) recoverInterrupted() {
	ids, err := d.st.MarkInterrupted()
	if err != nil {
		d.log.Error("marking interrupted runs", zap.Error(err))
		return
	}
	for _, id := range ids {
		d.analyzeInterrupted(id)
	}
}

func (d *Daemon) analyzeInterrupted(id int64) {
	log := d.log.With(zap.Int64("run_id", id))
	run, err := d.st.Run(id)
	if err != nil {
		log.Error("reading an interrupted run", zap.Error(err))
		return
	}
	log = log.With(zap.String("job", run.Job))
	recs, err := d.st.Samples(id)
	if err != nil {
		log.Error("reading an interrupted run's samples", zap.Error(err))
		return
	}
	ti, ao := d.analysisOptions(run.Job, recs)
	rep := analysis.NewReport(recs, nil, ti, ao)
	// Judged with the evidence of the earlier runs of the same process,
	// as the run's own end would have; a run cut short adds nothing to
	// it (it is no evidence either way).
	d.ev.reread(run.Job, ao, rep)
	if err := d.st.FinishRun(id, store.StatusInterrupted, rep, errInterrupted); err != nil {
		log.Error("storing an interrupted run's report", zap.Error(err))
		return
	}
	d.m.observeAnalysis(run.Job, rep)
	d.m.runs.WithLabelValues(run.Job, resultInterrupted).Inc()
	log.Warn("run interrupted by a crash: analysed what was stored",
		zap.Int("samples", len(recs)), zap.String("verdict", rep.Verdict))
}

// analysisOptions returns how to analyse a stored run of job: with the
// job's thresholds when the config still has it.
func (d *Daemon) analysisOptions(job string, recs []model.Record) (model.TargetInfo, analysis.Options) {
	var ti model.TargetInfo
	for _, r := range recs {
		if r.Alive || r.RootPID != 0 {
			ti.Probed = true
			break
		}
	}
	var ao analysis.Options
	if j := d.config().Job(job); j != nil {
		if o, err := j.Options(); err == nil {
			ao = analysisOf(&o)
		}
	}
	return ti, ao
}

// reconcileAlerts marks resolved, in the alerts restored from the store,
// those that no longer hold: those of a job the config no longer has, and
// the run events of a run that a crash cut short (now "interrupted") or
// that is gone. The others (the findings, see onFinding) go on firing and
// are re-sent as due: a restart neither resolves nor pages them again. It runs before the alert manager
// starts, so a stale alert is never sent firing again.
func (d *Daemon) reconcileAlerts(stored []alerts.StoredAlert) []alerts.StoredAlert {
	cfg := d.config()
	var gen uint64
	for _, sa := range stored {
		gen = max(gen, sa.Gen)
	}
	var resolved []string
	firing := 0
	for i := range stored {
		a := &stored[i].Alert
		if a.Status != alerts.StatusFiring {
			continue
		}
		why := d.staleBecause(cfg, *a)
		if why == "" {
			firing++
			continue
		}
		gen++
		a.Status, a.EndsAt, stored[i].Gen = alerts.StatusResolved, d.o.Now(), gen
		resolved = append(resolved, a.Fingerprint().String()+" ("+why+")")
	}
	if len(resolved) > 0 {
		d.log.Info("resolved alerts that no longer hold after the restart", zap.Strings("alerts", resolved))
	}
	if firing > 0 {
		d.log.Info("alerts still firing after the restart; re-sending them", zap.Int("alerts", firing))
	}
	return stored
}

// onFinding says whether a is an alert on a finding, which resolves on
// evidence only (alertHub.decide): a leak, a short time to exhaustion,
// failing requests. A run a crash cut short is no evidence that the
// finding is gone, so a restart keeps it firing, whichever run it last
// named; the next run decides. An alert on a run's event (its target
// died) ends with its run.
func onFinding(a alerts.Alert) bool {
	switch a.Labels[alerts.LabelAlertname] {
	case alerts.AlertLeak, alerts.AlertExhaustion, alerts.AlertRequestsFailing:
		return true
	}
	return false
}

// staleBecause says why a restored firing alert no longer holds, or "".
func (d *Daemon) staleBecause(cfg *config.Config, a alerts.Alert) string {
	if cfg.Job(a.Labels[alerts.LabelJob]) == nil {
		return "job no longer configured"
	}
	id := a.Annotations[alerts.AnnotationRunID]
	if id == "" || onFinding(a) {
		return ""
	}
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		return ""
	}
	run, err := d.st.Run(n)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return "run gone"
	case err != nil:
		return ""
	case run.Status == store.StatusInterrupted || run.Status == store.StatusRunning:
		return "run cut short"
	}
	return ""
}

// prune applies the retention limits.
func (d *Daemon) prune() {
	r := d.config().Retention
	n, err := d.st.Prune(d.o.Now(), r.MaxAge, r.MaxRunsPerJob)
	if err != nil {
		d.log.Error("pruning old runs", zap.Error(err))
		return
	}
	if n > 0 {
		d.log.Info("pruned old runs", zap.Int("runs", n), zap.Duration("max_age", r.MaxAge),
			zap.Int("max_runs_per_job", r.MaxRunsPerJob))
	}
}
