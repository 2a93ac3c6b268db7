package daemon

import (
	"encoding/json"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/store"
)

// storeLogEvery is the least time between two log lines about failing
// store writes; the lines in between are counted, not written.
const storeLogEvery = 30 * time.Second

// storeHealth tracks whether the store takes writes. While it does not,
// /readyz says not ready and the watchdog pings stop, so that a full disk
// is seen and not only logged.
type storeHealth struct {
	failing atomic.Bool
	errors  prometheus.Counter

	mu         sync.Mutex // guards the fields below
	lastLog    time.Time
	suppressed int
	unsaved    map[int64]unsavedRun // finished runs the store did not take
}

// unsavedRun is a finished run whose outcome the store failed to write: it
// is served from memory, and written again until the store takes it.
type unsavedRun struct {
	run    store.Run
	rep    *model.Report
	runErr error
}

func newStoreHealth(reg prometheus.Registerer) (*storeHealth, error) {
	h := &storeHealth{
		errors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "soakd_store_write_errors_total",
			Help: "Writes to the run database that failed (a full disk, a read-only file system).",
		}),
		unsaved: map[int64]unsavedRun{},
	}
	if err := reg.Register(h.errors); err != nil {
		return nil, err
	}
	return h, nil
}

// wrote records the outcome of a store write; it reports err == nil.
// Failures are counted, and logged at most once per storeLogEvery with
// the number left out.
func (d *Daemon) wrote(what string, err error) bool {
	h := d.sh
	if err == nil {
		if h.failing.CompareAndSwap(true, false) {
			d.log.Info("store writes work again: ready, watchdog pings resume")
		}
		return true
	}
	h.errors.Inc()
	first := h.failing.CompareAndSwap(false, true)
	now := d.o.Now()
	h.mu.Lock()
	due := first || now.Sub(h.lastLog) >= storeLogEvery
	n := h.suppressed
	if due {
		h.lastLog, h.suppressed = now, 0
	} else {
		h.suppressed++
	}
	h.mu.Unlock()
	if due {
		d.log.Error("store write failed: not ready, watchdog pings stop until writes work again",
			zap.String("write", what), zap.Int("failures_not_logged", n), zap.Error(err))
	}
	return false
}

// storeOK tells whether the store took its last write.
func (d *Daemon) storeOK() bool { return !d.sh.failing.Load() }

// keepUnsaved holds a finished run the store did not take.
func (d *Daemon) keepUnsaved(ar *activeRun, status string, rep *model.Report, runErr error) {
	run := store.Run{ID: ar.id, Job: ar.job, Status: status, Trigger: ar.trigger, Started: ar.started,
		Ended: d.o.Now(), Target: ar.spec}
	if rep != nil {
		run.Verdict = rep.Verdict
		if rep.Load != nil {
			run.Requests = rep.Load.Requests
		}
	}
	if runErr != nil {
		run.Error = runErr.Error()
	}
	d.sh.mu.Lock()
	d.sh.unsaved[ar.id] = unsavedRun{run: run, rep: rep, runErr: runErr}
	d.sh.mu.Unlock()
}

// unsavedRun returns the finished run id that the store has not taken.
func (d *Daemon) unsavedRun(id int64) (unsavedRun, bool) {
	d.sh.mu.Lock()
	defer d.sh.mu.Unlock()
	u, ok := d.sh.unsaved[id]
	return u, ok
}

// overlayUnsaved replaces, in runs read from the store, those whose
// outcome only memory holds.
func (d *Daemon) overlayUnsaved(runs []store.Run) {
	d.sh.mu.Lock()
	defer d.sh.mu.Unlock()
	for i, r := range runs {
		if u, ok := d.sh.unsaved[r.ID]; ok {
			runs[i] = u.run
		}
	}
}

// unsavedReportJSON returns the in-memory report of an unsaved run.
func (d *Daemon) unsavedReportJSON(id int64) ([]byte, bool) {
	u, ok := d.unsavedRun(id)
	if !ok || u.rep == nil {
		return nil, false
	}
	b, err := json.Marshal(u.rep)
	return b, err == nil
}

// retryStore, while writes fail, probes the store and writes the unsaved
// runs again; the background loop calls it.
func (d *Daemon) retryStore() {
	d.sh.mu.Lock()
	pending := make([]unsavedRun, 0, len(d.sh.unsaved))
	for _, u := range d.sh.unsaved {
		pending = append(pending, u)
	}
	d.sh.mu.Unlock()
	if len(pending) == 0 && d.storeOK() {
		return
	}
	if len(pending) == 0 {
		d.wrote("probe", d.st.ProbeWrite())
		return
	}
	for _, u := range pending {
		if !d.wrote("run outcome", d.st.FinishRun(u.run.ID, u.run.Status, u.rep, u.runErr)) {
			return
		}
		d.sh.mu.Lock()
		delete(d.sh.unsaved, u.run.ID)
		d.sh.mu.Unlock()
		d.log.Info("stored a run's outcome that the store had refused", zap.Int64("run_id", u.run.ID))
	}
}
