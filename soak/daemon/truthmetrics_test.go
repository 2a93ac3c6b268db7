package daemon

import (
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/soakd/soakd/alerts"
	"github.com/soakd/soakd/probes"
	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/store"
	"github.com/soakd/soakd/soak/verdict"
)

// TestRunGaugesEndWithTheRun: at a run's end its target gauges and its
// time to exhaustion go away (a rule on them stops firing), while the leak
// gauges and the last-run verdict stay.
func TestRunGaugesEndWithTheRun(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := newMetrics(reg, "test")
	if err != nil {
		t.Fatal(err)
	}
	m.initJob("web")
	m.observeRecord("web", model.Record{Sample: probes.Sample{Alive: true, RSSValid: true, RSS: 1 << 20, ThreadsValid: true, Threads: 4, Procs: 1}}, &cpuTracker{})
	m.observeAnalysis("web", leakReport())
	for _, name := range []string{"soakd_time_to_exhaustion_seconds", "soakd_target_resident_memory_bytes", "soakd_target_up"} {
		if n := seriesOf(t, reg, name, "web"); n == 0 {
			t.Fatalf("%s: no series during the run", name)
		}
	}
	m.observeEnd("web", resultOK, verdict.OverallLeak, 1)
	for _, name := range []string{"soakd_time_to_exhaustion_seconds", "soakd_target_resident_memory_bytes", "soakd_target_up", "soakd_target_threads"} {
		if n := seriesOf(t, reg, name, "web"); n != 0 {
			t.Errorf("%s: %d series after the run ended; want none", name, n)
		}
	}
	if got := gathered(t, reg, "soakd_leak_detected", "web", "rss"); got != 1 {
		t.Errorf("soakd_leak_detected{rss} after the run = %g; want 1 (the last run's verdict)", got)
	}
}

// TestLastRunGaugesRestored: a restarted soakd shows the last run's
// verdict, end time and leak gauges at once, not after the next run, and
// no time to exhaustion.
func TestLastRunGaugesRestored(t *testing.T) {
	dir := t.TempDir()
	st, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ended := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	id, err := st.CreateRun("web", store.TriggerAPI, "x", ended.Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	rep := leakReport()
	rep.Ended = ended
	if err := st.FinishRun(id, store.StatusCompleted, rep, nil); err != nil {
		t.Fatal(err)
	}
	st.Close()

	tg := target{addr: "127.0.0.1:1", pidFile: "/nonexistent.pid"}
	reg := prometheus.NewRegistry()
	d, err := New(parseConfig(t, configYAML(dir, "", jobSpec{name: "web", target: tg})), Options{Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { d.hub().close(); d.st.Close() }()
	checks := []struct {
		name   string
		labels []string
		want   float64
	}{
		{"soakd_last_run_verdict", []string{"web", verdict.OverallLeak}, 1},
		{"soakd_last_run_verdict", []string{"web", verdict.OverallClean}, 0},
		{"soakd_last_run_timestamp_seconds", []string{"web"}, float64(ended.Unix())},
		{"soakd_leak_detected", []string{"web", "rss"}, 1},
		{"soakd_leak_slope_per_request", []string{"web", "rss"}, 4096},
	}
	for _, c := range checks {
		if got := gathered(t, reg, c.name, c.labels...); got != c.want {
			t.Errorf("%s%v after the restart = %g; want %g", c.name, c.labels, got, c.want)
		}
	}
	if n := seriesOf(t, reg, "soakd_time_to_exhaustion_seconds", "web"); n != 0 {
		t.Errorf("soakd_time_to_exhaustion_seconds: %d series with no run going; want none", n)
	}
}

func leakReport() *model.Report {
	tte := 3600.0
	return &model.Report{Verdict: verdict.OverallLeak, Resources: map[string]verdict.Resource{
		"rss": {Verdict: verdict.Leak, Unit: "bytes", PerRequest: 4096, PerHour: 1 << 30, TimeToExhaustionSeconds: &tte},
	}}
}

// TestRestartReconcilesAlerts: at start-up the findings (leaks, failing
// requests) go on firing, whichever run they last named, a run a crash
// cut short included, while the target-down alert of that run and the
// alert of a job no longer configured are resolved (and, with no sink to
// tell, forgotten).
func TestRestartReconcilesAlerts(t *testing.T) {
	dir := t.TempDir()
	st, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	done, err := st.CreateRun("web", store.TriggerAPI, "x", at)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.FinishRun(done, store.StatusCompleted, leakReport(), nil); err != nil {
		t.Fatal(err)
	}
	cut, err := st.CreateRun("web", store.TriggerAPI, "x", at.Add(time.Hour)) // left "running": a crash
	if err != nil {
		t.Fatal(err)
	}
	for i, a := range []alerts.Alert{
		alerts.LeakAlert(alerts.Leak{Job: "web", Resource: "rss", Unit: "bytes", RunID: itoa(done)}),
		alerts.TargetDownAlert("web", itoa(cut), "gone"),
		alerts.LeakAlert(alerts.Leak{Job: "removed", Resource: "fds", Unit: "fds", RunID: itoa(done)}),
		alerts.LeakAlert(alerts.Leak{Job: "web", Resource: "fds", Unit: "fds", RunID: itoa(cut)}),
		alerts.RequestsFailingAlert("web", itoa(cut), "all failed"),
	} {
		a.Status = alerts.StatusFiring
		if err := st.SaveAlert(alerts.StoredAlert{Alert: a, Gen: uint64(i + 1)}); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()

	tg := target{addr: "127.0.0.1:1", pidFile: "/nonexistent.pid"}
	d, err := New(parseConfig(t, configYAML(dir, "", jobSpec{name: "web", target: tg})), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { d.hub().close(); d.st.Close() }()
	var got []string
	for _, a := range d.hub().mgr.Active() {
		got = append(got, a.Fingerprint().String())
	}
	want := []string{"SoakdLeak/web/fds", "SoakdLeak/web/rss", "SoakdRequestsFailing/web/requests"}
	if !slices.Equal(got, want) {
		t.Errorf("firing after the restart: %q; want the findings %q (a cut-short run is no evidence that they are gone)", got, want)
	}
	stored, err := d.st.Alerts()
	if err != nil || len(stored) != len(want) {
		t.Errorf("stored alerts after the restart: %d (%v); want the one still firing", len(stored), err)
	}
}
