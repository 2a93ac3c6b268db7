package daemon

import (
	"errors"
	"reflect"

	"github.com/robfig/cron/v3"
	"go.uber.org/zap"

	"github.com/soakd/soakd/soak/config"
)

// schedule adds a cron entry for every job that has a schedule; called
// with mu held.
func (d *Daemon) schedule(jobs []config.Job) {
	for i := range jobs {
		d.scheduleJob(&jobs[i])
	}
}

func (d *Daemon) scheduleJob(j *config.Job) {
	if j.Schedule == "" {
		return
	}
	sched, err := j.CronSchedule()
	if err != nil { // config.Load checked it: only a bug lands here
		d.log.Error("job not scheduled", zap.String("job", j.Name), zap.Error(err))
		return
	}
	name := j.Name
	d.entries[name] = d.cron.Schedule(sched, cron.FuncJob(func() { d.tick(name) }))
}

// tick starts a scheduled run. A tick that comes while the job's previous
// run still goes is skipped, logged and counted.
func (d *Daemon) tick(job string) {
	_, err := d.StartRun(job, TriggerSchedule)
	var busy *BusyError
	switch {
	case err == nil, errors.Is(err, ErrShuttingDown), errors.Is(err, ErrUnknownJob):
	case errors.As(err, &busy):
		d.m.skipped.WithLabelValues(job).Inc()
		d.log.Warn("schedule tick skipped: the previous run is still going",
			zap.String("job", job), zap.Int64("run_id", busy.RunID))
	default:
		d.log.Error("scheduled run failed to start", zap.String("job", job), zap.Error(err))
		d.hub().runFailed(job, 0, "Scheduled run of job "+job+" failed to start: "+err.Error())
	}
}

// reschedule applies the jobs of cfg over those of old; called with mu
// held. A removed or changed job's running run goes on to its end.
func (d *Daemon) reschedule(old, cfg *config.Config) (added, removed, changed []string) {
	for _, j := range old.Jobs {
		if cfg.Job(j.Name) == nil {
			d.unschedule(j.Name)
			if _, running := d.active[j.Name]; !running {
				d.m.dropJob(j.Name)
				d.ev.forget(j.Name)
			}
			removed = append(removed, j.Name)
		}
	}
	for i := range cfg.Jobs {
		j := &cfg.Jobs[i]
		prev := old.Job(j.Name)
		switch {
		case prev == nil:
			added = append(added, j.Name)
			d.m.initJob(j.Name)
		case reflect.DeepEqual(*prev, *j):
			continue
		default:
			changed = append(changed, j.Name)
			d.unschedule(j.Name)
		}
		d.scheduleJob(j)
	}
	return added, removed, changed
}

func (d *Daemon) unschedule(job string) {
	if id, ok := d.entries[job]; ok {
		d.cron.Remove(id)
		delete(d.entries, job)
	}
}
