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
		SinkRepeat:     cfg.Alerts.SinkRepeats(),
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
// (see decide). The memory resources of one process (rss, pss, uss) are
// one finding: one alert, its resource label fixed at first fire, the
// others as an annotation (memoryGroup).
func (h *alertHub) evaluate(job string, runID int64, rep *model.Report, gate *verdict.Gate) []string {
	var firing []string
	threshold := time.Duration(h.threshold.Load())
	active := h.active(job)
	live := gate != nil
	for _, f := range findings(rep) {
		label := f.label(active)
		fig := f.figures(rep, label)
		res := rep.Resources[fig]
		l := leakOf(job, runID, fig, res)
		l.NoLimit = model.NoLimit(res, rep.Target.HostMemoryBytes)
		l.Resource = label
		if fig != label {
			l.Summary = fmt.Sprintf("%s leaks; %s reads %s in this run. %s", fig, label, rep.Resources[label].Verdict, l.Summary)
		}
		leak := rep.Resources[f.lead].Verdict == verdict.Leak
		short := threshold > 0 && l.TimeToExhaustion > 0 && l.TimeToExhaustion < threshold
		if live {
			leak = gate.Look(f.key(), leak, rep.Phases.SoakSeconds)
			short = gate.Look(f.key()+"/exhaustion", short, rep.Phases.SoakSeconds)
		}
		leakAlert := h.annotateRun(alerts.LeakAlert(l), job, rep)
		exhAlert := h.annotateRun(alerts.ExhaustionAlert(l), job, rep)
		if also := f.also(rep, fig); also != "" {
			leakAlert.Annotations[alerts.AnnotationAlso] = also
			exhAlert.Annotations[alerts.AnnotationAlso] = also
		}
		describeWhere(leakAlert, rep, res)
		gone, read := f.gone(rep)
		leakCall := call{on: leak, keep: fmt.Sprintf(
			"run %d read %s: not evidence that the leak stopped; the alert stays until a run reads %s", runID, read, f.untilStopped())}
		exhCall := call{on: short, keep: leakCall.keep}
		if gone {
			leakCall.gone = fmt.Sprintf("Resolved: run %d read %s; the leak stopped", runID, read)
			exhCall.gone = leakCall.gone
		} else if leak {
			exhCall.gone = fmt.Sprintf("Resolved: run %d still reads a leak, but its time to exhaustion (%s) is no longer below %s",
				runID, leakAlert.Annotations[alerts.AnnotationTimeToExhaustion], threshold)
		}
		kept := h.decide(leakAlert, leakCall, live, active)
		keptExh := h.decide(exhAlert, exhCall, live, active)
		if kept || keptExh {
			firing = append(firing, label)
		}
	}
	if !live {
		firing = append(firing, h.keepUnmeasured(job, runID, rep, active)...)
	}
	if h.cost(job, runID, rep, live, active) {
		firing = append(firing, costResource)
	}
	if h.requests(job, runID, rep, gate, active) {
		firing = append(firing, alerts.ResourceRequests)
	}
	return firing
}

// cost fires the leak alert of a CPU cost per request that keeps rising.
// As a memory leak's, it resolves on evidence only (decide): a final
// report whose cost was judged and is not rising; a cost left
// inconclusive (a busy machine's contention explained the rise) keeps it.
// It returns whether the alert fires now.
func (h *alertHub) cost(job string, runID int64, rep *model.Report, live bool, active map[alerts.Fingerprint]alerts.Alert) bool {
	c := rep.CPU.Cost
	a := h.annotateRun(alerts.LeakAlert(costLeakOf(job, runID, rep.CPU)), job, rep)
	k := call{on: c.Rising, keep: fmt.Sprintf(
		"run %d could not judge the CPU cost per request (%s): the alert stays until a run reads it not rising", runID, c.Reason)}
	if !c.Inconclusive && c.Windows > 0 {
		k.gone = fmt.Sprintf("Resolved: run %d read the CPU cost per request not rising: %s", runID, c.Reason)
	}
	return h.decide(a, k, live, active)
}

// requests fires SoakdRequestsFailing when rep's requests are failing
// (through the gate on a live look). As a leak's, the alert resolves on
// evidence only (decide): a final report whose requests are ok; a run too
// short to judge them keeps it, saying so. It returns whether the alert
// fires now.
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
	why := "judged no requests"
	if hl != nil {
		why = "could not judge its requests (" + hl.Reason + ")"
	}
	k := call{on: failing, keep: fmt.Sprintf("run %d %s: the alert stays until a run's requests are ok", runID, why)}
	if hl != nil && hl.Verdict == verdict.HealthOK {
		k.gone = fmt.Sprintf("Resolved: run %d's requests are ok: %s", runID, hl.Reason)
	}
	return h.decide(a, k, gate != nil, active)
}

// call is what one analysis says of one alert's finding: it holds (on);
// else it is gone (gone, the resolved notification's summary saying
// why); else it is no evidence either way (keep, why the alert stays).
type call struct {
	on         bool
	gone, keep string
}

// decide is soakd's one rule for its alerts on findings, "resolve only on
// evidence": it fires a when the finding holds; a live look (live) only
// fires; a final analysis resolves the alert when the finding is gone,
// saying why, and otherwise keeps it firing, saying why in the evidence
// annotation. A firing alert keeps the target its first fire named. It
// returns whether a's alert fires now.
func (h *alertHub) decide(a alerts.Alert, c call, live bool, active map[alerts.Fingerprint]alerts.Alert) bool {
	prev, firing := active[a.Fingerprint()]
	if c.on {
		if t, ok := prev.Annotations[alerts.AnnotationTarget]; firing && ok {
			a.Annotations[alerts.AnnotationTarget] = t
		}
		h.fire(a, !live)
		return true
	}
	switch {
	case !firing || live:
		return firing
	case c.gone != "":
		h.mgr.ResolveBecause(a.Fingerprint(), c.gone)
		return false
	}
	prev.Annotations[alerts.AnnotationEvidence] = c.keep
	h.mgr.Fire(prev)
	return true
}

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
