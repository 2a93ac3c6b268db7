package daemon

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/soakd/soakd/alerts"
	"github.com/soakd/soakd/soak/compare"
	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/store"
	"github.com/soakd/soakd/soak/verdict"
)

// goodRun tells whether a finished run may become its job's baseline: it
// completed, its verdict is clean, its requests are ok, and it is no
// worse than the baseline it was compared with.
func goodRun(status string, rep *model.Report, res *compare.Result) bool {
	return status == store.StatusCompleted && rep != nil && rep.Verdict == verdict.OverallClean &&
		rep.Requests != nil && rep.Requests.Verdict == verdict.HealthOK &&
		(res == nil || res.Verdict != compare.Regressed)
}

// compareRuns judges the run curID (its report cur) against the run
// oldID (old), both with their records. The seed is the new run's ID: a
// comparison is reproducible. CPU per request is judged against soakd's
// own only when neither run shared this daemon with another run: the
// daemon's CPU is then the run's alone (compare.Options.ControlCPU).
func (d *Daemon) compareRuns(old, cur *model.Report, oldID, curID int64) compare.Result {
	alone := !d.sharedDaemon(oldID) && !d.sharedDaemon(curID)
	return compare.Compare(compare.FromReport(old), compare.FromReport(cur),
		compare.Options{Margins: compare.DefaultMargins(), RunSpread: compare.DefaultRunSpread(), ControlCPU: alone, Seed: uint64(curID)})
}

// sharedLookBack is how far before a run's start sharedDaemon looks for
// another run that was still going when it started.
const sharedLookBack = 48 * time.Hour

// sharedDaemon tells whether any other run went while run id did (true
// when that cannot be read): the daemon's own CPU, which soakd's samples
// carry as soakd's, was then not that run's alone.
func (d *Daemon) sharedDaemon(id int64) bool {
	runs, err := d.st.Runs("", 0)
	if err != nil {
		return true
	}
	var me store.Run
	found := false
	for _, r := range runs {
		if r.ID == id {
			me, found = r, true
		}
	}
	if !found {
		return true
	}
	end := func(r store.Run) time.Time {
		if r.Ended.IsZero() {
			return time.Now()
		}
		return r.Ended
	}
	for _, r := range runs {
		if r.ID == id || r.Started.Before(me.Started.Add(-sharedLookBack)) {
			continue
		}
		if r.Started.Before(end(me)) && me.Started.Before(end(r)) {
			return true
		}
	}
	return false
}

// againstBaseline compares a finished run with its job's baseline, stores
// the comparison, fires or resolves SoakdRegression, and makes the run the
// job's baseline when it is good and none is pinned. It returns whether
// the regression alert fires after it. As a leak's, the alert resolves on
// evidence only: a later run that reads same or improved; a run with no
// comparison (no baseline yet, or an inconclusive one) keeps it.
func (d *Daemon) againstBaseline(job string, id int64, status string, rep *model.Report) bool {
	base, err := d.st.JobBaseline(job)
	var res *compare.Result
	switch {
	case err == nil && base.RunID != id:
		res = d.compareWithBaseline(job, id, base.RunID, rep)
	case err != nil && !errors.Is(err, store.ErrNotFound):
		d.log.Warn("reading the job's baseline", zap.String("job", job), zap.Error(err))
	}
	if goodRun(status, rep, res) && !base.Pinned {
		if err := d.st.SetBaseline(job, id, false); err != nil {
			d.log.Warn("recording the job's baseline", zap.String("job", job), zap.Int64("run", id), zap.Error(err))
		}
	}
	return d.hub().regression(job, id, base.RunID, res)
}

// compareWithBaseline compares run id (its report rep) with the run base
// and stores the comparison; nil when the baseline cannot be read (it was
// pruned, or has no report).
func (d *Daemon) compareWithBaseline(job string, id, base int64, rep *model.Report) *compare.Result {
	_, old, _, err := d.runReport(base)
	if err != nil {
		d.log.Warn("reading the baseline run to compare with", zap.String("job", job), zap.Int64("baseline", base), zap.Error(err))
		return nil
	}
	res := d.compareRuns(old, rep, base, id)
	b, err := json.Marshal(res)
	if err == nil {
		err = d.st.SaveComparison(id, base, res.Verdict, b)
	}
	if err != nil {
		d.log.Warn("storing the run's comparison with its baseline", zap.Int64("run", id), zap.Error(err))
	}
	d.log.Info("compared with the baseline", zap.String("job", job), zap.Int64("run", id), zap.Int64("baseline", base),
		zap.String("verdict", res.Verdict))
	return &res
}

// regression fires SoakdRegression when res is regressed, resolves it
// when res is same or improved, and keeps it otherwise (decide, the rule
// of every alert on a finding). It returns whether the alert fires.
func (h *alertHub) regression(job string, id, base int64, res *compare.Result) bool {
	a := alerts.RegressionAlert(job, itoa(id), "")
	why := "had no baseline to compare with"
	if res != nil {
		why = "read " + res.Verdict + " against run " + itoa(base)
	}
	k := call{on: res != nil && res.Verdict == compare.Regressed,
		keep: fmt.Sprintf("run %d %s: the alert stays until a run reads same or improved", id, why)}
	if k.on {
		a.Annotations[alerts.AnnotationSummary] = fmt.Sprintf("Job %s, run %d is worse than its baseline, run %d: %s",
			job, id, base, regressedMetrics(*res))
	}
	if res != nil && (res.Verdict == compare.Same || res.Verdict == compare.Improved) {
		k.gone = fmt.Sprintf("Resolved: run %d %s", id, why)
	}
	return h.decide(h.annotate(a, job, ""), k, false, h.active(job))
}

// regressedMetrics lists the regressed metrics with their differences.
func regressedMetrics(res compare.Result) string {
	var out []string
	for _, n := range res.Names() {
		if m := res.Metrics[n]; m.Verdict == compare.Regressed {
			c := m.Cells()
			out = append(out, fmt.Sprintf("%s %s (95 %% CI %s, margin %s)", n, c.Difference, c.CI95, c.Margin))
		}
	}
	return strings.Join(out, "; ")
}
