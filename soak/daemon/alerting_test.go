package daemon

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"go.uber.org/zap"

	"github.com/soakd/soakd/alerts"
	"github.com/soakd/soakd/soak/load"
	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/store"
	"github.com/soakd/soakd/soak/verdict"
)

// hookReceiver is a webhook sink's receiver that keeps every alert.
type hookReceiver struct {
	mu     sync.Mutex
	alerts []alerts.PayloadAlert
}

func (h *hookReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var p alerts.Payload
	if err := json.NewDecoder(r.Body).Decode(&p); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	h.mu.Lock()
	h.alerts = append(h.alerts, p.Alerts...)
	h.mu.Unlock()
}

// find returns the first alert received with this name and status.
func (h *hookReceiver) find(name string, status alerts.Status) (alerts.PayloadAlert, bool) {
	return h.findWhere(name, status, func(alerts.PayloadAlert) bool { return true })
}

// findWhere returns the first alert received with this name and status
// for which ok holds.
func (h *hookReceiver) findWhere(name string, status alerts.Status, ok func(alerts.PayloadAlert) bool) (alerts.PayloadAlert, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, a := range h.alerts {
		if a.Labels[alerts.LabelAlertname] == name && a.Status == status && ok(a) {
			return a, true
		}
	}
	return alerts.PayloadAlert{}, false
}

// TestAlertLifecycle runs a leaky job with a webhook sink: the live
// analysis fires a leak alert that links to the run. The job is then
// pointed at a clean target that dies during the next run: that fires a
// target-down alert, and the leak alert stays (the run read no stable).
func TestAlertLifecycle(t *testing.T) {
	t.Parallel()
	hook := &hookReceiver{}
	srv := httptest.NewServer(hook)
	t.Cleanup(srv.Close)
	// 16 KiB a request: 19 MiB over the run's 1 200 requests, past twice
	// the process's size, which an 8 s soak must show before the
	// transient rule lets any of its memory (rss, pss, uss) read a leak.
	leaky := startTarget(t, "--leak-bytes", "16384")
	clean := startTarget(t)
	const ext = "http://soakd.example:7797"
	extra := "external_url: " + ext + "\nalerts:\n  sinks:\n    - name: hook\n      type: webhook\n      url: " + srv.URL + "\n"
	stateDir := t.TempDir()
	cfg := parseConfig(t, configYAML(stateDir, extra,
		jobSpec{name: "web", target: leaky, rate: 150, duration: 8 * time.Second, alerts: []string{"hook"}},
		jobSpec{name: "quiet", target: leaky}))
	d := startDaemon(t, cfg, Options{LiveInterval: time.Second, Registry: prometheus.NewRegistry()})

	id := startRun(t, d.url, "web", "")
	waitFor(t, 60*time.Second, "a firing leak alert", func() bool {
		_, ok := hook.find(alerts.AlertLeak, alerts.StatusFiring)
		return ok
	})
	a, _ := hook.find(alerts.AlertLeak, alerts.StatusFiring)
	if want := ext + "/runs/" + strconv.FormatInt(id, 10); a.GeneratorURL != want || a.Labels[alerts.LabelJob] != "web" {
		t.Errorf("leak alert: job %q, generatorURL %q; want web, %q", a.Labels[alerts.LabelJob], a.GeneratorURL, want)
	}
	t.Logf("leak alert: %s, %s, %s", a.Labels[alerts.LabelResource], a.Annotations[alerts.AnnotationPerRequest], a.Annotations[alerts.AnnotationSummary])
	waitFor(t, 60*time.Second, "run 1 to complete", func() bool {
		return runStatus(t, d.url, "web", id).Status == store.StatusCompleted
	})
	if _, ok := hook.find(alerts.AlertLeak, alerts.StatusResolved); ok {
		t.Errorf("the leak alert was resolved although the run ended with the leak")
	}

	cfg2 := parseConfig(t, configYAML(stateDir, extra,
		jobSpec{name: "web", target: clean, duration: time.Minute, alerts: []string{"hook"}}))
	if err := d.Reload(cfg2); err != nil {
		t.Fatalf("Reload: %v", err)
	}
	id2 := startRun(t, d.url, "web", "")
	waitFor(t, 30*time.Second, "samples of run 2", func() bool { return sampleCount(t, d.url, id2) >= 3 })
	// The run's gauges exist while it goes (they are deleted at its end).
	checkMetrics(t, d.url, contractMetrics)
	killTarget(t, clean)
	waitFor(t, 60*time.Second, "the target-down alert", func() bool {
		_, down := hook.find(alerts.AlertTargetDown, alerts.StatusFiring)
		return down
	})
	// The target died and did not come back within the grace: the load
	// stopped, the run's error says so, and its alert stays firing (the
	// run's finding, as a leak is).
	waitFor(t, 60*time.Second, "run 2 to end", func() bool { return runStatus(t, d.url, "web", id2).Status != store.StatusRunning })
	if r := runStatus(t, d.url, "web", id2); !strings.Contains(r.Error, "The target died at") {
		t.Errorf("run 2 error %q; want the target's death", r.Error)
	}
	// A run cut short by the target's death shows no evidence that the
	// leak stopped: the leak alert stays, saying why. The run list says
	// the run ended before its alerts are updated (Daemon.finish), so
	// the test waits for the annotation: checked at once, the clean-clone
	// CI found it not yet there.
	waitFor(t, 30*time.Second, "the leak alert's "+alerts.AnnotationEvidence+" annotation after run 2", func() bool {
		return hasEvidence(d.hub().active("web"))
	})
	if a, ok := hook.find(alerts.AlertTargetDown, alerts.StatusFiring); !ok || a.Annotations[alerts.AnnotationURL] == "" {
		t.Errorf("target-down alert %+v; want it to name the load URL", a)
	}
	if _, gone := hook.find(alerts.AlertTargetDown, alerts.StatusResolved); gone {
		t.Errorf("the target-down alert was resolved at the end of the run it ended")
	}
	if _, gone := hook.find(alerts.AlertLeak, alerts.StatusResolved); gone {
		t.Errorf("the leak alert was resolved by a run that did not read stable")
	}
	if got := gathered(t, d.o.Registry, "soakd_alert_deliveries_total", alerts.ResultSuccess, "hook"); got < 2 {
		t.Errorf("soakd_alert_deliveries_total{sink=hook,result=success} = %g; want >= 2 (the leak, the target-down)", got)
	}
	checkMetrics(t, d.url, afterRunMetrics)
}

// hasEvidence says whether a firing leak alert says why it stays.
func hasEvidence(active map[alerts.Fingerprint]alerts.Alert) bool {
	for fp, a := range active {
		if fp.Alertname == alerts.AlertLeak && a.Annotations[alerts.AnnotationEvidence] != "" {
			return true
		}
	}
	return false
}

func killTarget(t *testing.T, tg target) {
	t.Helper()
	b, err := os.ReadFile(tg.pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
}

// TestAlertRoutes: a job's alerts go to the sinks it lists, and nowhere
// when it lists none.
func TestAlertRoutes(t *testing.T) {
	extra := "alerts:\n  sinks:\n    - name: a\n      type: exec\n      command: [/bin/true]\n    - name: b\n      type: exec\n      command: [/bin/true]\n"
	tg := target{addr: "127.0.0.1:1", pidFile: "/nonexistent.pid"}
	cfg := parseConfig(t, configYAML(t.TempDir(), extra,
		jobSpec{name: "one", target: tg, alerts: []string{"b"}}, jobSpec{name: "none", target: tg}))
	h, err := newAlertHub(cfg, Options{Log: zap.NewNop(), Registry: prometheus.NewRegistry()}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer h.close()
	for _, tc := range []struct {
		job  string
		want []string
	}{{"one", []string{"b"}}, {"none", nil}, {"unknown", nil}} {
		if got := h.route(tc.job); !slices.Equal(got, tc.want) {
			t.Errorf("route(%q) = %v; want %v", tc.job, got, tc.want)
		}
	}
}

// gathered returns the value of the series of name whose label values are
// values (ordered by label name), or -1.
func gathered(t *testing.T, reg *prometheus.Registry, name string, values ...string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if slices.Equal(labelValues(m), values) {
				return m.GetCounter().GetValue() + m.GetGauge().GetValue()
			}
		}
	}
	return -1
}

func labelValues(m *dto.Metric) []string {
	var vs []string
	for _, lp := range m.GetLabel() {
		vs = append(vs, lp.GetValue())
	}
	return vs
}

// TestScheduledRunFails: a scheduled run whose target is missing ends
// "failed" with its error, is counted, and fires SoakdRunFailed to the
// job's sink.
func TestScheduledRunFails(t *testing.T) {
	hook := &hookReceiver{}
	srv := httptest.NewServer(hook)
	t.Cleanup(srv.Close)
	ln := startTarget(t) // a live port, so that only the target lookup fails
	missing := target{addr: ln.addr, pidFile: t.TempDir() + "/missing.pid"}
	extra := "alerts:\n  sinks:\n    - name: hook\n      type: webhook\n      url: " + srv.URL + "\n"
	cfg := parseConfig(t, configYAML(t.TempDir(), extra,
		jobSpec{name: "broken", schedule: "@every 1s", target: missing, alerts: []string{"hook"}}))
	reg := prometheus.NewRegistry()
	d := startDaemon(t, cfg, Options{Registry: reg})
	waitFor(t, 30*time.Second, "a SoakdRunFailed alert", func() bool {
		_, ok := hook.find(alerts.AlertRunFailed, alerts.StatusFiring)
		return ok
	})
	a, _ := hook.find(alerts.AlertRunFailed, alerts.StatusFiring)
	t.Logf("run failed alert: %s", a.Annotations[alerts.AnnotationSummary])
	var runs []runInfo
	getJSON(t, d.url+"/api/v1/runs?job=broken", &runs)
	if len(runs) == 0 || runs[len(runs)-1].Status != store.StatusFailed || runs[len(runs)-1].Error == "" {
		t.Fatalf("runs = %+v; want the first one failed with its error", runs)
	}
	code, b := httpDo(t, "GET", d.url+"/api/v1/runs/"+strconv.FormatInt(runs[len(runs)-1].ID, 10), "", nil)
	if code != http.StatusNotFound || !strings.Contains(string(b), "failed") {
		t.Errorf("report of a failed run: status %d: %s; want 404 saying it failed", code, b)
	}
	if got := gathered(t, reg, "soakd_runs_total", "broken", resultFailed); got < 1 {
		t.Errorf("soakd_runs_total{result=failed} = %g; want >= 1", got)
	}
}

// TestLeakAlertCarriesTheDecidingInterval: a leak alert's ci95 annotation
// is the interval that decided the leak (the report's leak_ci95), not the
// reported one, which also spans the second half's and can reach below
// zero beside "leak"; without leak_ci95 (reports made before it) the
// reported interval stands.
func TestLeakAlertCarriesTheDecidingInterval(t *testing.T) {
	res := verdict.Resource{Verdict: verdict.Leak, Unit: "bytes", PerRequest: 156, CI95: [2]float64{-63, 415},
		LeakCI95: &[2]float64{21, 290}}
	ann := alerts.LeakAlert(leakOf("web", 7, "pss", res)).Annotations[alerts.AnnotationCI95]
	if want := "[21 B, 290 B]/request"; ann != want {
		t.Errorf("ci95 annotation %q; want %q", ann, want)
	}
	res.LeakCI95 = nil
	ann = alerts.LeakAlert(leakOf("web", 7, "pss", res)).Annotations[alerts.AnnotationCI95]
	if !strings.HasPrefix(ann, "[-63 B") && !strings.HasPrefix(ann, "[−63 B") {
		t.Errorf("without leak_ci95: ci95 annotation %q; want the reported interval", ann)
	}
}

// TestAlertSaysTheLoadFellShort: the alerts of a run whose open loop
// reached under 90 % of its rate carry the shortfall (annotation "load"),
// to a real webhook receiver; a run that kept its rate carries none.
func TestAlertSaysTheLoadFellShort(t *testing.T) {
	var hook hookReceiver
	srv := httptest.NewServer(&hook)
	t.Cleanup(srv.Close)
	extra := "alerts:\n  sinks:\n    - name: hook\n      type: webhook\n      url: " + srv.URL + "\n"
	tg := target{addr: "127.0.0.1:1", pidFile: "/nonexistent.pid"}
	cfg := parseConfig(t, configYAML(t.TempDir(), extra,
		jobSpec{name: "short", target: tg, alerts: []string{"hook"}}, jobSpec{name: "kept", target: tg, alerts: []string{"hook"}}))
	h, err := newAlertHub(cfg, Options{Log: zap.NewNop(), Registry: prometheus.NewRegistry()}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer h.close()
	leak := verdict.Resource{Verdict: verdict.Leak, Unit: "bytes", PerRequest: 4096, CI95: [2]float64{4000, 4200}}
	for job, sum := range map[string]*load.Summary{
		"short": {Mode: "open", TargetRate: 200, RPS: 147, DurationSeconds: 60, LateSends: 1200, MissedSends: 3180},
		"kept":  {Mode: "open", TargetRate: 200, RPS: 199, DurationSeconds: 60},
	} {
		rep := &model.Report{Verdict: verdict.Leak, Load: sum, RateShortfall: model.RateShortfall(sum),
			Resources: map[string]verdict.Resource{"rss": leak}}
		h.endRun(job, h.evaluate(job, 1, rep, nil))
	}
	var short, kept alerts.PayloadAlert
	waitFor(t, 30*time.Second, "both jobs' leak alerts at the receiver", func() bool {
		var ok1, ok2 bool
		short, ok1 = hook.findWhere(alerts.AlertLeak, alerts.StatusFiring, func(a alerts.PayloadAlert) bool { return a.Labels[alerts.LabelJob] == "short" })
		kept, ok2 = hook.findWhere(alerts.AlertLeak, alerts.StatusFiring, func(a alerts.PayloadAlert) bool { return a.Labels[alerts.LabelJob] == "kept" })
		return ok1 && ok2
	})
	if got, want := short.Annotations[alerts.AnnotationLoad], "the open loop reached 147 of the 200 req/s requested (74 %, under 90 %)"; !strings.HasPrefix(got, want) {
		t.Errorf("short's load annotation = %q; want %q…", got, want)
	}
	if got, ok := kept.Annotations[alerts.AnnotationLoad]; ok {
		t.Errorf("kept's load annotation = %q; want none", got)
	}
}
