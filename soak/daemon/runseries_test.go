package daemon

import (
	"bufio"
	"bytes"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/soakd/soakd/soak/store"
)

// runSeries are the series docs/daemon.md lists as living only while a run
// goes: deleted at its end.
var runSeries = []string{
	"soakd_target_resident_memory_bytes", "soakd_target_pss_anon_bytes", "soakd_target_pss_bytes", "soakd_target_anon_memory_bytes",
	"soakd_target_open_fds", "soakd_target_max_fds", "soakd_target_threads", "soakd_target_cpu_seconds_total",
	"soakd_target_processes", "soakd_target_restarts_total", "soakd_target_up", "soakd_time_to_exhaustion_seconds",
}

// TestRunSeriesDeletedAfterRun scrapes /metrics during and after a run:
// every per-run series of the job is there while it goes and gone after,
// and the last run's gauges (its end time, whether its target died) stay.
// The run list shows the running run's requests so far.
func TestRunSeriesDeletedAfterRun(t *testing.T) {
	t.Parallel()
	tg := startTarget(t)
	cfg := parseConfig(t, configYAML(t.TempDir(), "", jobSpec{name: "web", target: tg, duration: 4 * time.Second}))
	d := startDaemon(t, cfg, Options{Registry: prometheus.NewRegistry()})
	id := startRun(t, d.url, "web", "")
	var r runInfo
	waitFor(t, 30*time.Second, "the run list to show requests while the run goes", func() bool {
		r = runStatus(t, d.url, "web", id)
		return r.Status != store.StatusRunning || r.Requests > 0
	})
	if r.Status != store.StatusRunning {
		t.Errorf("run list: status %s with %d requests before any running run showed requests; want the running run's requests", r.Status, r.Requests)
	}
	during := scrapeJob(t, d.url, "web")
	for _, n := range []string{"soakd_target_resident_memory_bytes", "soakd_target_cpu_seconds_total", "soakd_target_restarts_total", "soakd_target_up"} {
		if !during[n] {
			t.Errorf("during the run: no %s{job=\"web\"}", n)
		}
	}
	waitFor(t, 60*time.Second, "the run to end", func() bool { return runStatus(t, d.url, "web", id).Status != store.StatusRunning })
	after := scrapeJob(t, d.url, "web")
	for _, n := range runSeries {
		if after[n] {
			t.Errorf("after the run: %s{job=\"web\"} is still exported; want it deleted", n)
		}
	}
	for _, n := range []string{"soakd_last_run_timestamp_seconds", "soakd_last_run_target_died", "soakd_leak_detected"} {
		if !after[n] {
			t.Errorf("after the run: no %s{job=\"web\"}; want the last run's gauge", n)
		}
	}
}

// scrapeJob returns the metric names /metrics exports with job="job".
func scrapeJob(t *testing.T, base, job string) map[string]bool {
	t.Helper()
	code, body := httpDo(t, "GET", base+"/metrics", "", nil)
	if code != http.StatusOK {
		t.Fatalf("GET /metrics: status %d", code)
	}
	names := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		line := sc.Text()
		i := strings.IndexByte(line, '{')
		if strings.HasPrefix(line, "#") || i < 0 || !strings.Contains(line[i:], `job="`+job+`"`) {
			continue
		}
		names[line[:i]] = true
	}
	return names
}
