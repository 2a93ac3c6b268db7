package daemon

import (
	"errors"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap/zaptest"

	"github.com/soakd/soakd/alerts"
	"github.com/soakd/soakd/soak/config"
	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/verdict"
)

// TestExhaustionAtLimit: a leaking resource already at its limit (0 s to
// exhaustion) fires the exhaustion alert, and its annotation is not
// "never".
func TestExhaustionAtLimit(t *testing.T) {
	mgr, err := alerts.NewManager(alerts.ManagerOptions{Logger: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mgr.Close(t.Context()) })
	h := &alertHub{mgr: mgr}
	h.routes.Store(&map[string][]string{})
	h.threshold.Store(int64(time.Hour))
	zero := 0.0
	rep := &model.Report{Resources: map[string]verdict.Resource{
		"rss": {Verdict: verdict.Leak, Unit: "bytes", PerRequest: 100, TimeToExhaustionSeconds: &zero},
	}}
	if got := h.evaluate("web", 1, rep, nil); len(got) != 1 || got[0] != "rss" {
		t.Errorf("evaluate: got firing %v; want [rss]", got)
	}
	var found bool
	for _, a := range mgr.Active() {
		if a.Labels[alerts.LabelAlertname] != alerts.AlertExhaustion {
			continue
		}
		found = true
		if tte := a.Annotations[alerts.AnnotationTimeToExhaustion]; tte == "never" {
			t.Errorf("exhaustion alert: got time_to_exhaustion %q; want a time", tte)
		}
	}
	if !found {
		t.Errorf("active alerts %v; want one %s", mgr.Active(), alerts.AlertExhaustion)
	}
}

// TestCPUCostRisingFiresALeak: a rising CPU cost per request fires the
// leak alert for resource cpu_per_request; a flat one in a final analysis
// resolves it, an inconclusive one or a live look does not.
func TestCPUCostRisingFiresALeak(t *testing.T) {
	mgr, err := alerts.NewManager(alerts.ManagerOptions{Logger: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mgr.Close(t.Context()) })
	h := &alertHub{mgr: mgr}
	h.routes.Store(&map[string][]string{})
	rep := &model.Report{Resources: map[string]verdict.Resource{}, CPU: verdict.CPU{Throughput: 100,
		Cost: verdict.CostDrift{Windows: 20, Rising: true, SlopePerHour: 3.6e-4, CI95: [2]float64{3e-4, 4e-4}, Reason: "CPU per request rising"}}}
	if got := h.evaluate("web", 1, rep, nil); len(got) != 1 || got[0] != "cpu_per_request" {
		t.Errorf("evaluate: got firing %v; want [cpu_per_request]", got)
	}
	active := mgr.Active()
	if len(active) != 1 || active[0].Labels[alerts.LabelResource] != "cpu_per_request" || active[0].Labels[alerts.LabelAlertname] != alerts.AlertLeak {
		t.Fatalf("active alerts %v; want one %s for cpu_per_request", active, alerts.AlertLeak)
	}
	if got, want := active[0].Annotations[alerts.AnnotationPerRequest], "1 ns CPU/request"; got != want {
		t.Errorf("per-request annotation = %q; want %q", got, want)
	}
	// Not evidence that the cost stopped rising: a live look, and a final
	// analysis that left the cost inconclusive (the machine's contention
	// explained the rise). Both keep the alert.
	rep.CPU.Cost.Rising = false
	rep.CPU.Cost.Inconclusive = true
	if got := h.evaluate("web", 2, rep, nil); len(got) != 1 || len(mgr.Active()) != 1 {
		t.Errorf("inconclusive cost: got firing %v, active %v; want the alert kept", got, mgr.Active())
	}
	rep.CPU.Cost.Inconclusive = false
	if got := h.evaluate("web", 3, rep, verdict.NewGate(5, 600)); len(got) != 1 || len(mgr.Active()) != 1 {
		t.Errorf("live look: got firing %v, active %v; want the alert kept", got, mgr.Active())
	}
	if got := h.evaluate("web", 4, rep, nil); len(got) != 0 || len(mgr.Active()) != 0 {
		t.Errorf("flat cost: got firing %v, active %v; want none", got, mgr.Active())
	}
}

// TestRemovedJobSeriesDropped: a job removed by a reload while its run
// went on loses its series when the run ends, so that a last leak_detected
// of 1 does not stay (and alert) for a job that no longer exists.
func TestRemovedJobSeriesDropped(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := newMetrics(reg, "test")
	if err != nil {
		t.Fatal(err)
	}
	d := &Daemon{cfg: &config.Config{}, m: m, active: map[string]*activeRun{}}
	ar := &activeRun{job: "gone", cancel: func() {}}
	d.active["gone"] = ar
	d.runs.Add(1)
	m.initJob("gone")
	m.leak.WithLabelValues("gone", "rss").Set(1)
	m.observeEnd("gone", resultOK, verdict.OverallLeak, 1)
	d.release(ar)
	for _, name := range []string{"soakd_leak_detected", "soakd_runs_total", "soakd_last_run_verdict", "soakd_run_active"} {
		if n := seriesOf(t, reg, name, "gone"); n != 0 {
			t.Errorf("%s: got %d series of the removed job; want 0", name, n)
		}
	}
}

// seriesOf counts the series of metric name whose job label is job.
func seriesOf(t *testing.T, reg *prometheus.Registry, name, job string) int {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "job" && l.GetValue() == job {
					n++
				}
			}
		}
	}
	return n
}

// TestStopRightAfterStart stops a run the moment its ID is known: StopRun
// must see the run's logger (a race, and a nil-pointer panic, when the
// logger was set after the ID was published).
func TestStopRightAfterStart(t *testing.T) {
	tg := target{addr: "127.0.0.1:1", pidFile: "/nonexistent.pid"}
	d := startDaemon(t, parseConfig(t, configYAML(t.TempDir(), "", jobSpec{name: "web", target: tg})), Options{})
	stopped := make(chan error, 1)
	var started atomic.Bool
	go func() {
		for {
			// Once StartRun returned, ErrNotRunning means the run ended.
			after := started.Load()
			err := d.StopRun(1)
			if err == nil || after {
				stopped <- err
				return
			}
			runtime.Gosched()
		}
	}()
	_, err := d.StartRun("web", TriggerAPI)
	started.Store(true)
	if err != nil {
		t.Fatalf("StartRun: %v", err)
	}
	if err := <-stopped; err != nil && !errors.Is(err, ErrNotRunning) {
		t.Errorf("StopRun: got %v; want nil or ErrNotRunning", err)
	}
}
