package daemon

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"go.uber.org/zap"

	"github.com/soakd/soakd/probes"
	"github.com/soakd/soakd/soak/config"
	"github.com/soakd/soakd/soak/store"
	"github.com/soakd/soakd/soak/sweep"
	"github.com/soakd/soakd/soak/web"
)

// executeSweep runs a sweep job's ladder, keeps its report in the state
// directory (sweeps/JOB/RUN_ID/report.json, .txt and .html) and compares
// it with the job's last kept sweep. The run's record in the store has
// its status and error; a sweep has no soak report there.
func (d *Daemon) executeSweep(ar *activeRun, j config.Job) {
	o, err := j.SweepOptions()
	if err == nil {
		o.Run.Log = ar.log
		o.Run.Load.OnResult = d.m.loadObserver(ar.job)
		o.Run.Target.OnStart = func(p probes.Started) { d.recordStarted(ar, p) }
		ar.mu.Lock()
		ar.spec = targetOf(j)
		ar.mu.Unlock()
		ar.log.Info("sweep started", zap.String("target", targetOf(j)), zap.Ints("levels", o.Levels), zap.Duration("max_duration", j.MaxDuration))
		var rep *sweep.Report
		rep, err = sweep.Run(ar.ctx, o)
		d.forgetStarted(ar)
		if err == nil {
			err = d.keepSweep(ar, rep)
		}
	}
	d.finishSweep(ar, err)
}

// sweepDir is where a job's sweeps are kept.
func (d *Daemon) sweepDir(job string) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return filepath.Join(d.cfg.StateDir, "sweeps", job)
}

// keepSweep writes the sweep's files and logs how it compares with the
// job's previous sweep.
func (d *Daemon) keepSweep(ar *activeRun, rep *sweep.Report) error {
	dir := d.sweepDir(ar.job)
	prev := lastSweep(dir)
	out := filepath.Join(dir, strconv.FormatInt(ar.id, 10))
	if err := rep.WriteFiles(out); err != nil {
		return fmt.Errorf("keeping the sweep: %w", err)
	}
	if err := web.WriteSweepFile(out, rep); err != nil {
		return fmt.Errorf("keeping the sweep: %w", err)
	}
	fields := []zap.Field{zap.String("dir", out), zap.String("page", "/sweeps/"+strconv.FormatInt(ar.id, 10)), zap.Int("knee_concurrency", rep.Knee.Concurrency),
		zap.String("knee_cause", rep.Knee.Cause), zap.String("reason", rep.Knee.Reason), zap.String("suggestion", rep.Suggestion.Command)}
	if c := sweep.Compare(prev, rep); c != "" {
		fields = append(fields, zap.String("since_last_sweep", c))
	}
	ar.log.Info("sweep kept", fields...)
	return nil
}

// lastSweep reads the report of the job's newest kept sweep, nil when
// there is none (or it cannot be read).
func lastSweep(dir string) *sweep.Report {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var ids []int64
	for _, e := range ents {
		if id, err := strconv.ParseInt(e.Name(), 10, 64); err == nil && e.IsDir() {
			ids = append(ids, id)
		}
	}
	sort.Slice(ids, func(a, b int) bool { return ids[a] > ids[b] })
	for _, id := range ids {
		if r, err := sweep.ReadReport(filepath.Join(dir, strconv.FormatInt(id, 10), "report.json")); err == nil {
			return r
		}
	}
	return nil
}

// pageSweep serves a kept sweep's page: /sweeps/RUN_ID.
func (d *Daemon) pageSweep(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		http.Error(w, "run ID: want a whole number", http.StatusBadRequest)
		return
	}
	run, err := d.st.Run(id)
	if err != nil {
		d.pageError(w, err)
		return
	}
	rep, err := sweep.ReadReport(d.sweepReportPath(run.Job, id))
	if err != nil && run.Status == store.StatusRunning {
		http.Error(w, fmt.Sprintf("run %d of job %s is still running; its sweep's page is written when the ladder ends", id, run.Job), http.StatusNotFound)
		return
	}
	if err != nil {
		http.Error(w, fmt.Sprintf("run %d of job %s kept no sweep (a soak, or a sweep that failed)", id, run.Job), http.StatusNotFound)
		return
	}
	d.writePage(w, func(b *bytes.Buffer) error { return web.SweepReport(b, rep) })
}

// sweepReportPath is where run id of job keeps its sweep's report.
func (d *Daemon) sweepReportPath(job string, id int64) string {
	return filepath.Join(d.sweepDir(job), strconv.FormatInt(id, 10), "report.json")
}

// keptSweep tells whether run id kept a sweep's report.
func (d *Daemon) keptSweep(run store.Run, id int64) bool {
	if run.Job == "" {
		return false
	}
	_, err := os.Stat(d.sweepReportPath(run.Job, id))
	return err == nil
}

// finishSweep records the sweep's end in the store and the metrics.
func (d *Daemon) finishSweep(ar *activeRun, runErr error) {
	status, result := store.StatusCompleted, resultOK
	switch {
	case ar.stopped.Load() || d.ctx.Err() != nil:
		status, result = store.StatusStopped, resultStopped
	case errors.Is(ar.ctx.Err(), context.DeadlineExceeded):
		status, result = store.StatusStopped, resultStopped
		runErr = errors.Join(runErr, errors.New("max_duration reached"))
	case runErr != nil:
		status, result = store.StatusFailed, resultFailed
	}
	verdictName := "" // a sweep has no soak verdict: every soakd_last_verdict is 0
	if result == resultFailed {
		verdictName = verdictFailed
	}
	// Its metrics are final before the run list says it ended (see finish).
	d.m.observeEnd(ar.job, result, verdictName, float64(d.o.Now().UnixNano())/1e9)
	ar.end(func() {
		if err := d.st.FinishRun(ar.id, status, nil, runErr); !d.wrote("run outcome", err) {
			ar.log.Error("storing the sweep's outcome failed", zap.Error(err))
		}
	})
	if result == resultFailed && ar.trigger == TriggerSchedule {
		d.hub().runFailed(ar.job, ar.id, fmt.Sprintf("Scheduled sweep %d of job %s failed: %v", ar.id, ar.job, runErr))
	}
	if runErr != nil {
		ar.log.Error("sweep ended", zap.String("status", status), zap.Error(runErr))
		return
	}
	ar.log.Info("sweep ended", zap.String("status", status))
}
