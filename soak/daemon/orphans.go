package daemon

import (
	"time"

	"go.uber.org/zap"

	"github.com/soakd/soakd/probes"
	"github.com/soakd/soakd/soak/store"
)

// orphanGrace is how long stopOrphans waits after SIGTERM before SIGKILL.
const orphanGrace = 5 * time.Second

// recordStarted keeps the identity of the target a run started, so that
// the next soakd stops it if this one dies before it could.
func (d *Daemon) recordStarted(ar *activeRun, p probes.Started) {
	err := d.st.AddStarted(store.StartedTarget{PID: p.PID, StartTicks: p.StartTicks, Job: ar.job, RunID: ar.id})
	if d.wrote("started target", err) {
		return
	}
	ar.log.Warn("recording the started target failed: should soakd be killed, its next start will not stop it",
		zap.Int("pid", p.PID), zap.Error(err))
}

// forgetStarted drops the record of the target a run started, once the
// run stopped it.
func (d *Daemon) forgetStarted(ar *activeRun) {
	if err := d.st.DeleteStarted(ar.id); !d.wrote("started target", err) {
		ar.log.Warn("forgetting the stopped target failed", zap.Error(err))
	}
}

// stopOrphans stops the targets that an earlier soakd started and did not
// stop (it was killed mid-run), each checked by {pid, start time}, never
// by name, and forgets them.
func (d *Daemon) stopOrphans() {
	started, err := d.st.Started()
	if err != nil {
		d.log.Error("reading the targets the last soakd started; any that survived it keep running", zap.Error(err))
		return
	}
	for _, s := range started {
		log := d.log.With(zap.String("job", s.Job), zap.Int64("run_id", s.RunID), zap.Int("pid", s.PID))
		n, err := probes.StopOrphan("/proc", probes.Started{PID: s.PID, StartTicks: s.StartTicks}, orphanGrace)
		switch {
		case err != nil:
			log.Error("stopping a target the last soakd started failed", zap.Error(err))
		case n > 0:
			log.Warn("stopped a target the last soakd started and left running", zap.Int("processes", n))
		}
		if err := d.st.DeleteStartedTarget(s); err != nil {
			log.Error("forgetting a started target failed", zap.Error(err))
		}
	}
}
