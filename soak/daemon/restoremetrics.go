package daemon

import (
	"encoding/json"

	"go.uber.org/zap"

	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/store"
)

// restoreLastRuns sets each job's last-run gauges (verdict, end time, and
// the leak and CPU gauges of its analysis) from the store at start-up, so
// that a restart does not blank them until the next run.
func (d *Daemon) restoreLastRuns() {
	for _, j := range d.config().Jobs {
		runs, err := d.st.Runs(j.Name, 5)
		if err != nil {
			d.log.Warn("restoring the last run's metrics", zap.String("job", j.Name), zap.Error(err))
			continue
		}
		for _, r := range runs {
			if r.Status == store.StatusRunning || r.Ended.IsZero() {
				continue
			}
			d.restoreRun(r)
			break
		}
	}
}

func (d *Daemon) restoreRun(r store.Run) {
	verdictName := r.Verdict
	if b, err := d.st.ReportJSON(r.ID); err == nil {
		var rep model.Report
		if json.Unmarshal(b, &rep) == nil {
			d.m.observeAnalysis(r.Job, &rep)
			d.m.lastDied.WithLabelValues(r.Job).Set(b2f(rep.TargetDied()))
		}
	} else {
		verdictName = verdictFailed
	}
	if verdictName == "" {
		verdictName = verdictFailed
	}
	for _, v := range verdicts {
		d.m.lastVerdict.WithLabelValues(r.Job, v).Set(b2f(v == verdictName))
	}
	d.m.lastTimestamp.WithLabelValues(r.Job).Set(float64(r.Ended.UnixNano()) / 1e9)
	d.m.clearRunGauges(r.Job)
}
