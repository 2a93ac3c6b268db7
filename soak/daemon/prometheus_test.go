package daemon

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/soakd/soakd/internal/soaktest/promtest"
)

// contractMetrics are the metric names configs/prometheus-rules.yml and
// the dashboards rely on, while a run goes (the soakd_target_* gauges are
// deleted when it ends). soakd_time_to_exhaustion_seconds is left out: it
// is absent while no resource grows toward a limit.
var contractMetrics = []string{
	"soakd_build_info", "soakd_requests_total", "soakd_request_errors_total",
	"soakd_request_duration_seconds", "soakd_target_resident_memory_bytes", "soakd_target_pss_anon_bytes", "soakd_target_pss_bytes",
	"soakd_target_open_fds", "soakd_target_max_fds", "soakd_target_threads",
	"soakd_target_cpu_seconds_total", "soakd_target_processes", "soakd_target_restarts_total",
	"soakd_target_up", "soakd_leak_slope_per_request", "soakd_leak_slope_per_hour", "soakd_leak_detected",
	"soakd_cpu_bound", "soakd_runs_total", "soakd_run_active", "soakd_schedule_skipped_total",
	"go_goroutines", "process_resident_memory_bytes",
}

// afterRunMetrics appear once a run has ended, and alert deliveries once a
// sink is configured.
var afterRunMetrics = []string{
	"soakd_last_run_verdict", "soakd_last_run_timestamp_seconds", "soakd_alert_deliveries_total",
}

// debianTool returns the path of a tool from a Debian package, or skips
// the test when it is missing outside CI.
func debianTool(t *testing.T, path, pkg string) string {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is missing: install the Debian package %s", path, pkg)
		}
		t.Skipf("%s is missing (Debian package %s); CI installs it", path, pkg)
	}
	return path
}

// checkMetrics scrapes base/metrics, checks that the contract's names are
// there, and runs `promtool check metrics` on the output.
func checkMetrics(t *testing.T, base string, names []string) {
	t.Helper()
	code, body := httpDo(t, "GET", base+"/metrics", "", nil)
	if code != http.StatusOK {
		t.Fatalf("GET /metrics: status %d", code)
	}
	for _, n := range names {
		if !bytes.Contains(body, []byte("\n# TYPE "+n+" ")) {
			t.Errorf("/metrics lacks %s", n)
		}
	}
	promtool := debianTool(t, "/usr/bin/promtool", "prometheus")
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = bytes.NewReader(body)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}

// freePort returns a loopback port that was free a moment ago.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// startPrometheus runs the real Prometheus on loopback (promtest),
// scraping target every second with its own job labels kept (soakd's
// series carry the soak job's) and the shipped rules loaded, and returns
// its base URL.
func startPrometheus(t *testing.T, target string) string {
	t.Helper()
	return promtest.StartWithRules(t, time.Second, []string{"../../configs/prometheus-rules.yml"},
		promtest.Job{Name: "soakd", Targets: []string{target}, HonorLabels: true})
}

// promQuery runs an instant query and returns the value of each series.
func promQuery(t *testing.T, base, q string) []float64 {
	t.Helper()
	var resp struct {
		Status string `json:"status"`
		Data   struct {
			Result []struct {
				Value [2]any `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	getJSON(t, base+"/api/v1/query?query="+url.QueryEscape(q), &resp)
	if resp.Status != "success" {
		t.Fatalf("query %s: status %s", q, resp.Status)
	}
	var out []float64
	for _, r := range resp.Data.Result {
		s, _ := r.Value[1].(string)
		v, err := strconv.ParseFloat(s, 64)
		if err == nil {
			out = append(out, v)
		}
	}
	return out
}

// TestPrometheus runs a leaky job while the real Prometheus scrapes
// soakd: PromQL returns the target's resident memory and a positive leak
// slope, mid-run, from the live analysis; promtool accepts the scrape;
// with the shipped rules loaded, SoakdLeakDetected fires with the
// resource label of soakd's own SoakdLeak.
func TestPrometheus(t *testing.T) {
	debianTool(t, "/usr/bin/prometheus", "prometheus")
	t.Parallel()
	tg := startTarget(t, "--leak-bytes", "2048")
	yaml := configYAML(t.TempDir(), "", jobSpec{name: "leaky", target: tg, duration: 90 * time.Second, rate: 150})
	d := startDaemon(t, parseConfig(t, yaml), Options{LiveInterval: 2 * time.Second, Registry: prometheus.NewRegistry()})
	prom := startPrometheus(t, strings.TrimPrefix(d.url, "http://"))
	id := startRun(t, d.url, "leaky", "")

	waitFor(t, 90*time.Second, "the resident memory series in Prometheus", func() bool {
		return len(promQuery(t, prom, `soakd_target_resident_memory_bytes{job="leaky"}`)) == 1
	})
	// The figures are kept from the query that saw them: on a busy
	// machine a second query a moment later once found no series (the
	// test indexed an empty answer and panicked).
	var slope, rss []float64
	waitFor(t, 90*time.Second, "a positive RSS leak slope in Prometheus", func() bool {
		slope = promQuery(t, prom, `soakd_leak_slope_per_request{job="leaky",resource="rss"} > 0`)
		rss = promQuery(t, prom, `soakd_target_resident_memory_bytes{job="leaky"}`)
		return len(slope) == 1 && len(rss) == 1
	})
	t.Logf("run %d: RSS %.1f MiB, RSS slope %.0f B/request (the target leaks 2048)", id, rss[0]/(1<<20), slope[0])
	waitFor(t, 60*time.Second, "a positive rate of 2xx requests in Prometheus", func() bool {
		return len(promQuery(t, prom, `rate(soakd_requests_total{job="leaky",code_class="2xx"}[10s]) > 0`)) == 1
	})
	checkMetrics(t, d.url, contractMetrics)
	var jobs json.RawMessage
	getJSON(t, d.url+"/api/v1/jobs", &jobs)
	checkLeakRule(t, prom)
}

// checkLeakRule waits for soakd's own SoakdLeak of job leaky in
// Prometheus (soakd_alert_firing) and checks that the shipped rule
// SoakdLeakDetected fires with the same resource label.
func checkLeakRule(t *testing.T, prom string) {
	t.Helper()
	var own, rule []map[string]string
	waitFor(t, 60*time.Second, "soakd's SoakdLeak and the rule's SoakdLeakDetected in Prometheus", func() bool {
		own = promLabels(t, prom, `soakd_alert_firing{alertname="SoakdLeak",job="leaky"}`)
		rule = promLabels(t, prom, `ALERTS{alertname="SoakdLeakDetected",alertstate="firing",job="leaky"}`)
		return len(own) > 0 && len(rule) > 0
	})
	if len(own) != 1 || len(rule) != 1 || rule[0]["resource"] != own[0]["resource"] {
		t.Errorf("soakd's SoakdLeak %v; the rule's SoakdLeakDetected %v; want one each, with one resource label", own, rule)
	}
}

// promLabels runs an instant query and returns each series' labels.
func promLabels(t *testing.T, base, q string) []map[string]string {
	t.Helper()
	var resp struct {
		Status string `json:"status"`
		Data   struct {
			Result []struct {
				Metric map[string]string `json:"metric"`
			} `json:"result"`
		} `json:"data"`
	}
	getJSON(t, base+"/api/v1/query?query="+url.QueryEscape(q), &resp)
	if resp.Status != "success" {
		t.Fatalf("query %s: status %s", q, resp.Status)
	}
	var out []map[string]string
	for _, r := range resp.Data.Result {
		out = append(out, r.Metric)
	}
	return out
}
