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
	"github.com/soakd/soakd/soak/urlx"
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
		urls[j.Name] = urlx.Redact(j.Load.URL)
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

// evaluate fires the leak and exhaustion alerts of rep and returns the
// resources still firing. A live look passes its run's gate, which holds
// a leak alert back until the leak persists (see verdict.Gate); a look
// only fires, never resolves: a run half done is no evidence that a leak
// stopped. The final analysis passes nil and resolves on evidence only
// (see judge). The memory resources of one process (rss, pss, uss) are one
// finding: one alert, the others as an annotation (memoryGroup).
func (h *alertHub) evaluate(job string, runID int64, rep *model.Report, gate *verdict.Gate) []string {
	var firing []string
	threshold := time.Duration(h.threshold.Load())
	active := h.active(job)
	for _, f := range findings(rep) {
		res := rep.Resources[f.lead]
		l := leakOf(job, runID, f.lead, res)
		l.NoLimit = model.NoLimit(res, rep.Target.HostMemoryBytes)
		l.Resource = f.label(active)
		leak := res.Verdict == verdict.Leak
		short := threshold > 0 && l.TimeToExhaustion > 0 && l.TimeToExhaustion < threshold
		if gate != nil {
			leak = gate.Look(f.lead, leak, rep.Phases.SoakSeconds)
			short = gate.Look(f.lead+"/exhaustion", short, rep.Phases.SoakSeconds)
		}
		leakAlert := h.annotateRun(alerts.LeakAlert(l), job, rep)
		exhAlert := h.annotateRun(alerts.ExhaustionAlert(l), job, rep)
		if also := f.also(rep); also != "" {
			leakAlert.Annotations[alerts.AnnotationAlso] = also
			exhAlert.Annotations[alerts.AnnotationAlso] = also
		}
		describeWhere(leakAlert, rep, res)
		stopped := gate == nil && leakStopped(res.Verdict)
		kept := h.judge(leakAlert, leak, stopped, gate != nil, active, runID, res)
		keptExh := h.judge(exhAlert, short, stopped || (gate == nil && leak), gate != nil, active, runID, res)
		if kept || keptExh {
			firing = append(firing, l.Resource)
		}
	}
	if gate == nil {
		firing = append(firing, h.keepUnmeasured(job, runID, rep, active)...)
	}
	if h.cost(job, runID, rep, gate, active) {
		firing = append(firing, costResource)
	}
	if h.requests(job, runID, rep, gate, active) {
		firing = append(firing, alerts.ResourceRequests)
	}
	return firing
}

// cost fires the leak alert of a CPU cost per request that keeps rising.
// As a memory leak's, it resolves on evidence only: a final report whose
// cost was judged and is not rising; a live look, or a cost left
// inconclusive (a busy machine's contention explained the rise), keeps it.
// It returns whether the alert fires now.
func (h *alertHub) cost(job string, runID int64, rep *model.Report, gate *verdict.Gate, active map[alerts.Fingerprint]alerts.Alert) bool {
	c := rep.CPU.Cost
	a := h.annotateRun(alerts.LeakAlert(costLeakOf(job, runID, rep.CPU)), job, rep)
	if c.Rising {
		h.fire(a, gate == nil)
		return true
	}
	_, was := active[a.Fingerprint()]
	if was && gate == nil && !c.Inconclusive && c.Windows > 0 {
		h.set(alerts.AlertLeak, false, a)
		return false
	}
	return was
}

// requests fires SoakdRequestsFailing when rep's requests are failing
// (through the gate on a live look). As a leak's, the alert resolves on
// evidence only: a final report whose requests are ok; a live look never
// resolves it, and a run too short to judge them keeps it, saying so. It
// returns whether the alert fires now.
func (h *alertHub) requests(job string, runID int64, rep *model.Report, gate *verdict.Gate, active map[alerts.Fingerprint]alerts.Alert) bool {
	hl := rep.Requests
	failing := hl != nil && hl.Verdict == verdict.HealthFailing
	if gate != nil {
		failing = gate.Look(alerts.ResourceRequests, failing, rep.Phases.SoakSeconds)
	}
	reason := ""
	if hl != nil {
		reason = fmt.Sprintf("Job %s, run %d: requests failing: %s", job, runID, hl.Reason)
	}
	a := h.annotateRun(alerts.RequestsFailingAlert(job, itoa(runID), reason), job, rep)
	if failing {
		h.fire(a, gate == nil)
		return true
	}
	prev, was := active[a.Fingerprint()]
	switch {
	case !was || gate != nil:
		return was
	case hl != nil && hl.Verdict == verdict.HealthOK:
		h.mgr.ResolveAlert(alerts.AlertRequestsFailing, job, alerts.ResourceRequests)
		return false
	}
	why := "judged no requests"
	if hl != nil {
		why = "could not judge its requests (" + hl.Reason + ")"
	}
	prev.Annotations[alerts.AnnotationEvidence] = fmt.Sprintf("run %d %s: the alert stays until a run's requests are ok", runID, why)
	h.mgr.Fire(prev)
	return true
}

// judge fires a when on holds; otherwise it resolves a's alert when
// resolve holds (the run showed the leak stopped), and keeps it firing
// when it was, saying why (the run did not decide). A live look (live)
// only fires. It returns whether a's alert fires now.
func (h *alertHub) judge(a alerts.Alert, on, resolve, live bool, active map[alerts.Fingerprint]alerts.Alert, runID int64, res verdict.Resource) bool {
	if on {
		h.fire(a, !live)
		return true
	}
	prev, firing := active[a.Fingerprint()]
	switch {
	case !firing || live:
		return firing
	case resolve:
		h.mgr.ResolveAlert(a.Labels[alerts.LabelAlertname], a.Labels[alerts.LabelJob], a.Labels[alerts.LabelResource])
		return false
	}
	prev.Annotations[alerts.AnnotationEvidence] = fmt.Sprintf(
		"run %d read %s (%s): not evidence that the leak stopped; the alert stays until a run reads stable", runID, res.Verdict, res.Reason)
	h.mgr.Fire(prev)
	return true
}

// leakStopped says whether a resource's verdict shows that a leak stopped:
// it is flat (stable) or its growth ended (plateau).
func leakStopped(v string) bool { return v == verdict.Stable || v == verdict.Plateau }

// keepUnmeasured keeps firing the job's leak and exhaustion alerts of
// resources the final report rep does not have: a run that did not
// measure a resource is no evidence that its leak stopped.
func (h *alertHub) keepUnmeasured(job string, runID int64, rep *model.Report, active map[alerts.Fingerprint]alerts.Alert) []string {
	var kept []string
	for fp, a := range active {
		if fp.Resource == costResource || (fp.Alertname != alerts.AlertLeak && fp.Alertname != alerts.AlertExhaustion) {
			continue
		}
		if _, ok := rep.Resources[fp.Resource]; ok || measuredInGroup(rep, fp.Resource) {
			continue
		}
		a.Annotations[alerts.AnnotationEvidence] = fmt.Sprintf("run %d did not measure %s: the alert stays until a run reads stable", runID, fp.Resource)
		h.mgr.Fire(a)
		kept = append(kept, fp.Resource)
	}
	return kept
}

// active returns the job's firing alerts by fingerprint.
func (h *alertHub) active(job string) map[alerts.Fingerprint]alerts.Alert {
	out := map[alerts.Fingerprint]alerts.Alert{}
	for _, a := range h.mgr.Active() {
		if a.Labels[alerts.LabelJob] == job {
			out[a.Fingerprint()] = a
		}
	}
	return out
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

// fire fires a; from a run's final analysis (final), an alert a live look
// of the run already sent goes out again with the run's own figures
// (alerts.Manager.FireFinal).
func (h *alertHub) fire(a alerts.Alert, final bool) {
	if final {
		h.mgr.FireFinal(a)
		return
	}
	h.mgr.Fire(a)
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
	if res.LeakCI95 != nil {
		// The interval that decided the leak: the reported one can also
		// span the second half's and reach below zero beside "leak".
		l.CI95 = *res.LeakCI95
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

// annotateRun annotates an alert of a run's report: its target and URL,
// and the load's shortfall when its open loop fell under 90 % of its rate.
func (h *alertHub) annotateRun(a alerts.Alert, job string, rep *model.Report) alerts.Alert {
	a = h.annotate(a, job, rep.Target.Description)
	if rep.RateShortfall != "" {
		a.Annotations[alerts.AnnotationLoad] = rep.RateShortfall
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

// jobRemoved resolves every alert of a job the config no longer has.
func (h *alertHub) jobRemoved(job string) {
	h.mgr.ResolveMissing(job, nil)
}
