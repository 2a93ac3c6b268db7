package daemon

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap/zaptest"

	"github.com/soakd/soakd/alerts"
	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/store"
	"github.com/soakd/soakd/soak/verdict"
)

// TestFailingRequestsAlert: a job whose target answers every request with
// 500 ends "completed, failing" and fires SoakdRequestsFailing, which
// names how many failed; the next run, against a server that answers,
// resolves it, the resolve saying why. Each failing answer takes 10 ms,
// so the run lasts about 1.5 s and a live look (every second) may fire
// the alert first with the count so far: the webhook, which pages
// people, gets that one page (the run's end is no new page, issue 43),
// and soakd's alert holds the whole run's count for its next repeat.
func TestFailingRequestsAlert(t *testing.T) {
	t.Parallel()
	hook := &hookReceiver{}
	hookSrv := httptest.NewServer(hook)
	t.Cleanup(hookSrv.Close)
	var broken atomic.Bool
	broken.Store(true)
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if broken.Load() {
			time.Sleep(10 * time.Millisecond)
			http.Error(w, "broken", http.StatusInternalServerError)
		}
	}))
	t.Cleanup(target.Close)
	yaml := fmt.Sprintf(`listen: 127.0.0.1:0
state_dir: %s
alerts:
  sinks:
    - name: hook
      type: webhook
      url: %s
jobs:
  - name: api
    schedule: "@every 1h"
    max_duration: 2m
    alerts: [hook]
    target:
      no_probe: true
    load:
      url: %s/
      requests: 300
      concurrency: 2
      timeout: 5s
`, t.TempDir(), hookSrv.URL, target.URL)
	d := startDaemon(t, parseConfig(t, yaml), Options{LiveInterval: time.Second, Registry: prometheus.NewRegistry()})

	id := startRun(t, d.url, "api", "")
	waitFor(t, 60*time.Second, "run 1 to end", func() bool { return runStatus(t, d.url, "api", id).Status != store.StatusRunning })
	if r := runStatus(t, d.url, "api", id); r.Status != store.StatusCompleted || r.Verdict != verdict.OverallFailing {
		t.Fatalf("run 1: %s, %s; want completed, failing (%s)", r.Status, r.Verdict, r.Error)
	}
	// A live look may fire first, with the count so far (on a busy
	// machine "170 of 170"): that is the one page; soakd's alert then
	// holds the whole run's count.
	final := func(a alerts.Alert) bool {
		return strings.Contains(a.Annotations[alerts.AnnotationSummary], "300 of 300 requests failed")
	}
	waitFor(t, 30*time.Second, "a firing SoakdRequestsFailing page", func() bool {
		_, ok := hook.find(alerts.AlertRequestsFailing, alerts.StatusFiring)
		return ok
	})
	if a, _ := hook.find(alerts.AlertRequestsFailing, alerts.StatusFiring); a.Labels[alerts.LabelResource] != alerts.ResourceRequests {
		t.Errorf("alert labels %v; want resource requests", a.Labels)
	}
	if active := d.hub().mgr.Active(); len(active) != 1 || !final(active[0]) {
		t.Errorf("soakd's alerts after run 1: %+v; want SoakdRequestsFailing with the run's whole count", active)
	}

	broken.Store(false)
	id2 := startRun(t, d.url, "api", "")
	waitFor(t, 60*time.Second, "run 2 to end", func() bool { return runStatus(t, d.url, "api", id2).Status != store.StatusRunning })
	waitFor(t, 30*time.Second, "SoakdRequestsFailing resolved", func() bool {
		_, ok := hook.find(alerts.AlertRequestsFailing, alerts.StatusResolved)
		return ok
	})
	if r, _ := hook.find(alerts.AlertRequestsFailing, alerts.StatusResolved); !strings.HasPrefix(r.Annotations[alerts.AnnotationSummary], fmt.Sprintf("Resolved: run %d's requests are ok", id2)) {
		t.Errorf("the resolve's summary %q; want why it resolved", r.Annotations[alerts.AnnotationSummary])
	}
	hook.mu.Lock()
	pages := 0
	for _, a := range hook.alerts {
		if a.Labels[alerts.LabelAlertname] == alerts.AlertRequestsFailing && a.Status == alerts.StatusFiring {
			pages++
		}
	}
	hook.mu.Unlock()
	if pages != 1 {
		t.Errorf("%d firing pages of SoakdRequestsFailing; want 1 for one finding", pages)
	}
	if r := runStatus(t, d.url, "api", id2); r.Verdict == verdict.OverallFailing {
		t.Errorf("run 2 verdict %s against a server that answers", r.Verdict)
	}
}

// TestEvaluateRequestsFailing: the hub fires SoakdRequestsFailing for a
// failing report and keeps it among the firing; it resolves on evidence
// only: a final report whose requests are ok, not a live look, not a run
// too short to judge them.
func TestEvaluateRequestsFailing(t *testing.T) {
	mgr, err := alerts.NewManager(alerts.ManagerOptions{Logger: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mgr.Close(t.Context()) })
	h := &alertHub{mgr: mgr}
	h.routes.Store(&map[string][]string{})
	rep := &model.Report{Resources: map[string]verdict.Resource{}, Verdict: verdict.OverallFailing,
		Requests: &verdict.Health{Verdict: verdict.HealthFailing, Requests: 10, Errors: 10, Reason: "10 of 10 requests failed (100 %)"}}
	if got := h.evaluate("web", 1, rep, nil); len(got) != 1 || got[0] != alerts.ResourceRequests {
		t.Errorf("evaluate: firing %v; want [requests]", got)
	}
	active := mgr.Active()
	if len(active) != 1 || active[0].Labels[alerts.LabelAlertname] != alerts.AlertRequestsFailing ||
		!strings.Contains(active[0].Annotations[alerts.AnnotationSummary], "10 of 10 requests failed") {
		t.Fatalf("active alerts %v; want one %s saying 10 of 10 failed", active, alerts.AlertRequestsFailing)
	}
	rep.Requests.Verdict, rep.Verdict = verdict.Inconclusive, verdict.OverallInconclusive
	if got := h.evaluate("web", 2, rep, nil); len(got) != 1 || len(mgr.Active()) != 1 ||
		!strings.Contains(mgr.Active()[0].Annotations[alerts.AnnotationEvidence], "run 2 could not judge its requests") {
		t.Errorf("too few requests: firing %v, active %v; want it kept, saying why", got, mgr.Active())
	}
	rep.Requests.Verdict, rep.Verdict = verdict.HealthOK, verdict.OverallClean
	if got := h.evaluate("web", 3, rep, verdict.NewGate(1, 0)); len(got) != 1 || len(mgr.Active()) != 1 {
		t.Errorf("a live look: firing %v, active %v; want it kept (a look never resolves)", got, mgr.Active())
	}
	if got := h.evaluate("web", 3, rep, nil); len(got) != 0 || len(mgr.Active()) != 0 {
		t.Errorf("healthy: firing %v, active %v; want none", got, mgr.Active())
	}
}
