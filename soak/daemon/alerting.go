package daemon

import (
	"context"
	"fmt"
	"reflect"
	"sync/atomic"
	"time"

	"github.com/soakd/soakd/alerts"
	"github.com/soakd/soakd/soak/config"
	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/redact"
	"github.com/soakd/soakd/soak/verdict"
)

// alertHub turns analyses and run events into alerts for the Manager. Its
// methods never block: the Manager queues the sends.
type alertHub struct {
	mgr       *alerts.Manager
	settings  alerts.Config
	routes    atomic.Pointer[map[string][]string] // job → sink names
	urls      atomic.Pointer[map[string]string]   // job → its load URL, redacted
	threshold atomic.Int64                        // exhaustion threshold, ns
}

// newAlertHub builds the sinks of cfg.Alerts and starts a Manager over
// them that persists its alerts in state, seeded with restore (the alerts
// stored by the last soakd, or those of the Manager a reload replaces).
func newAlertHub(cfg *config.Config, o Options, state alerts.StateStore, restore []alerts.StoredAlert) (*alertHub, error) {
	sinks, err := alerts.Build(cfg.Alerts, alerts.BuildOptions{Logger: o.Log.Named("alerts")})
	if err != nil {
		return nil, fmt.Errorf("daemon: %w", err)
	}
	h := &alertHub{settings: cfg.Alerts}
	h.update(cfg)
	h.mgr, err = alerts.NewManager(alerts.ManagerOptions{
		Sinks:          sinks,
		Route:          h.route,
		RepeatInterval: cfg.Alerts.RepeatInterval,
		ExternalURL:    cfg.Alerts.ExternalURL,
		QueueSize:      cfg.Alerts.QueueSize,
		Retry:          cfg.Alerts.Retry,
		State:          state,
		Restore:        restore,
		Now:            o.Now,
		Logger:         o.Log.Named("alerts"),
		Registerer:     o.Registry,
	})
	if err != nil {
		return nil, fmt.Errorf("daemon: %w", err)
	}
	return h, nil
}

// update takes the routes and the threshold of cfg; the sinks stay.
func (h *alertHub) update(cfg *config.Config) {
	routes := make(map[string][]string, len(cfg.Jobs))
	for _, j := range cfg.Jobs {
		routes[j.Name] = append([]string{}, j.Alerts...)
	}
	h.routes.Store(&routes)
	urls := make(map[string]string, len(cfg.Jobs))
	for _, j := range cfg.Jobs {
		urls[j.Name] = redact.URL(j.Load.URL)
		if j.Load.URL == "" {
			urls[j.Name] = "targets file " + j.Load.TargetsFile
		}
	}
	h.urls.Store(&urls)
	h.threshold.Store(int64(cfg.Alerts.ExhaustionThreshold))
}

// sameSinks tells whether cfg keeps h's sinks and delivery settings, so
// that a reload can keep h (and its firing alerts).
func (h *alertHub) sameSinks(cfg *config.Config) bool {
	return reflect.DeepEqual(h.settings, cfg.Alerts)
}

// route returns a job's sinks: only those in its alerts list.
func (h *alertHub) route(job string) []string {
	return (*h.routes.Load())[job]
}

// handOver stops h persisting the alerts: the hub that replaces it on a
// reload, seeded with h's alerts, owns them now.
func (h *alertHub) handOver() { h.mgr.Detach() }

func (h *alertHub) close() {
	ctx, cancel := context.WithTimeout(context.Background(), defaultAlertCloseWindow)
	defer cancel()
	_ = h.mgr.Close(ctx)
}

// evaluate fires the leak and exhaustion alerts of rep and resolves those
// of resources that cleared. It returns the resources still firing. A
// live look passes its run's gate, which holds a leak alert back until
// the leak persists (see verdict.Gate); the final analysis passes nil and
// is taken as it is.
func (h *alertHub) evaluate(job string, runID int64, rep *model.Report, gate *verdict.Gate) []string {
	var firing []string
	threshold := time.Duration(h.threshold.Load())
	for _, name := range rep.ResourceNames() {
		res := rep.Resources[name]
		l := leakOf(job, runID, name, res)
		leak := res.Verdict == verdict.Leak
		short := threshold > 0 && l.TimeToExhaustion > 0 && l.TimeToExhaustion < threshold
		if gate != nil {
			leak = gate.Look(name, leak, rep.Phases.SoakSeconds)
			short = gate.Look(name+"/exhaustion", short, rep.Phases.SoakSeconds)
		}
		h.set(alerts.AlertLeak, leak, h.annotate(alerts.LeakAlert(l), job, rep.Target.Description))
		h.set(alerts.AlertExhaustion, short, h.annotate(alerts.ExhaustionAlert(l), job, rep.Target.Description))
		if leak || short {
			firing = append(firing, name)
		}
	}
	rising := rep.CPU.Cost.Rising
	h.set(alerts.AlertLeak, rising, h.annotate(alerts.LeakAlert(costLeakOf(job, runID, rep.CPU)), job, rep.Target.Description))
	if rising {
		firing = append(firing, costResource)
	}
	if h.requests(job, runID, rep, gate) {
		firing = append(firing, alerts.ResourceRequests)
	}
	return firing
}

// requests fires SoakdRequestsFailing when rep's requests are failing
// (through the gate on a live look), else resolves it; it tells whether
// it fires.
func (h *alertHub) requests(job string, runID int64, rep *model.Report, gate *verdict.Gate) bool {
	hl := rep.Requests
	failing := hl != nil && hl.Verdict == verdict.HealthFailing
	if gate != nil {
		failing = gate.Look(alerts.ResourceRequests, failing, rep.Phases.SoakSeconds)
	}
	reason := ""
	if hl != nil {
		reason = fmt.Sprintf("Job %s, run %d: requests failing: %s", job, runID, hl.Reason)
	}
	h.set(alerts.AlertRequestsFailing, failing, h.annotate(alerts.RequestsFailingAlert(job, itoa(runID), reason), job, rep.Target.Description))
	return failing
}

// costResource is the resource label of a CPU cost per request that keeps
// rising: a CPU leak, alerted on like a memory leak.
const costResource = "cpu_per_request"

// costLeakOf describes a rising CPU cost per request as a leak: its
// growth in CPU seconds per request, per request served and per hour.
func costLeakOf(job string, runID int64, c verdict.CPU) alerts.Leak {
	d := c.Cost
	l := alerts.Leak{Job: job, Resource: costResource, Unit: "CPU seconds", RunID: itoa(runID), Summary: d.Reason,
		PerHour: d.SlopePerHour}
	if c.Throughput > 0 {
		perRequest := 1 / (c.Throughput * 3600)
		l.PerRequest = d.SlopePerHour * perRequest
		l.CI95 = [2]float64{d.CI95[0] * perRequest, d.CI95[1] * perRequest}
	}
	return l
}

// set fires a when on holds, else resolves the alert of a's name, job and
// resource (a no-op when it was not firing).
func (h *alertHub) set(name string, on bool, a alerts.Alert) {
	if on {
		h.mgr.Fire(a)
		return
	}
	h.mgr.ResolveAlert(name, a.Labels[alerts.LabelJob], a.Labels[alerts.LabelResource])
}

func leakOf(job string, runID int64, name string, res verdict.Resource) alerts.Leak {
	l := alerts.Leak{
		Job: job, Resource: name, Unit: res.Unit, RunID: itoa(runID), Summary: res.Reason,
		PerRequest: res.PerRequest, PerHour: res.PerHour, CI95: res.CI95,
	}
	if t := res.TimeToExhaustionSeconds; t != nil {
		// A resource already at its limit has 0 s left, which Leak reads
		// as "never": keep it the shortest time that is not.
		l.TimeToExhaustion = max(time.Duration(*t*float64(time.Second)), time.Nanosecond)
	}
	return l
}

// annotate names the target (its process, when known, and the load URL)
// in a.
func (h *alertHub) annotate(a alerts.Alert, job, target string) alerts.Alert {
	if m := h.urls.Load(); m != nil && (*m)[job] != "" {
		a.Annotations[alerts.AnnotationURL] = (*m)[job]
	}
	if target != "" {
		a.Annotations[alerts.AnnotationTarget] = target
	}
	return a
}

// targetDown fires when the target died or restarted during a run.
func (h *alertHub) targetDown(job string, runID int64, target, reason string) {
	h.mgr.Fire(h.annotate(alerts.TargetDownAlert(job, itoa(runID), reason), job, target))
}

// runFailed fires when a scheduled run failed to start.
func (h *alertHub) runFailed(job string, runID int64, reason string) {
	id := ""
	if runID > 0 {
		id = itoa(runID)
	}
	h.mgr.Fire(alerts.RunFailedAlert(job, id, reason))
}

// endRun resolves the job's alerts whose resource is not in firing.
func (h *alertHub) endRun(job string, firing []string) {
	h.mgr.ResolveMissing(job, firing)
}
