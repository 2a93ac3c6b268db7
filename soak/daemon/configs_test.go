package daemon

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/soakd/soakd/alerts"
)

// TestShippedConfigsUseOnlyMetricsSoakdExposes checks that the Grafana
// dashboard and the Prometheus rules in configs/ name only metrics that
// the daemon registers, so a renamed metric cannot leave a dead panel or a
// rule that never fires.
func TestShippedConfigsUseOnlyMetricsSoakdExposes(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := newMetrics(reg, "test")
	if err != nil {
		t.Fatal(err)
	}
	am, err := alerts.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	descName := regexp.MustCompile(`fqName: "([a-z_]+)"`)
	sh, err := newStoreHealth(reg)
	if err != nil {
		t.Fatal(err)
	}
	exposed := map[string]bool{"soakd_build_info": true}
	ch := make(chan *prometheus.Desc, 64)
	go func() {
		for _, c := range append(m.collectors(), am.Deliveries, am.Failing, sh.errors, firingCollector{}) {
			c.Describe(ch)
		}
		close(ch)
	}()
	for d := range ch {
		if s := descName.FindStringSubmatch(d.String()); s != nil {
			exposed[s[1]] = true
		}
	}
	series := regexp.MustCompile(`soakd_[a-z_]+`)
	suffix := regexp.MustCompile(`_(bucket|sum|count)$`)
	for _, file := range []string{"../../configs/grafana-dashboard.json", "../../configs/prometheus-rules.yml"} {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		names := series.FindAllString(string(b), -1)
		if len(names) == 0 {
			t.Errorf("%s names no soakd metric", file)
		}
		for _, n := range names {
			if !exposed[n] && !exposed[suffix.ReplaceAllString(n, "")] && n != "soakd_job" {
				t.Errorf("%s uses %s, which soakd does not expose", file, n)
			}
		}
	}
}

// TestAlertnamesAreUnique: no rule in configs/prometheus-rules.yml takes
// the alertname of an alert soakd sends itself, and no two rules share
// one; otherwise one event pages twice, under one name with different
// labels.
func TestAlertnamesAreUnique(t *testing.T) {
	own := []string{alerts.AlertLeak, alerts.AlertExhaustion, alerts.AlertTargetDown, alerts.AlertRequestsFailing, alerts.AlertRunFailed, alerts.AlertTest}
	b, err := os.ReadFile("../../configs/prometheus-rules.yml")
	if err != nil {
		t.Fatal(err)
	}
	var rules []string
	for _, m := range regexp.MustCompile(`(?m)^\s*- alert:\s*(\S+)`).FindAllStringSubmatch(string(b), -1) {
		rules = append(rules, m[1])
	}
	if len(rules) < 5 {
		t.Fatalf("found %d rules in prometheus-rules.yml; the pattern is wrong", len(rules))
	}
	seen := map[string]bool{}
	for _, r := range rules {
		if slices.Contains(own, r) {
			t.Errorf("rule %s has the name of one of soakd's own alerts (%s)", r, strings.Join(own, ", "))
		}
		if seen[r] {
			t.Errorf("two rules are named %s", r)
		}
		seen[r] = true
	}
}

// TestInhibitRulesMuteTheRules runs the real Alertmanager with
// configs/alertmanager-example.yml (its receivers pointed at a closed
// port): while soakd's own alert fires for a job, the Prometheus rule's
// alert on the same finding is suppressed; for another job it is not.
func TestInhibitRulesMuteTheRules(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../configs/alertmanager-example.yml")
	if err != nil {
		t.Fatal(err)
	}
	cfg := strings.ReplaceAll(string(b), "http://127.0.0.1:8080/", "http://"+freePort(t)+"/")
	am := startAlertmanagerWith(t, cfg)
	rule := func(name, job string) map[string]string {
		return map[string]string{"alertname": name, "job": job, "instance": "soak:7797", "resource": "pss", "severity": "warning"}
	}
	post := []map[string]map[string]string{
		{"labels": {"alertname": alerts.AlertLeak, "job": "web", "resource": "rss", "severity": "warning"}},
		{"labels": {"alertname": alerts.AlertTargetDown, "job": "web", "resource": "target", "severity": "critical"}},
		{"labels": rule("SoakdLeakDetected", "web")},
		{"labels": rule("SoakdTargetDownDuringRun", "web")},
		{"labels": rule("SoakdLeakDetected", "db")},
	}
	body, _ := json.Marshal(post)
	resp, err := http.Post(am+"/api/v2/alerts", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /api/v2/alerts: status %d", resp.StatusCode)
	}
	want := map[string]string{"SoakdLeakDetected/web": "suppressed", "SoakdTargetDownDuringRun/web": "suppressed", "SoakdLeakDetected/db": "active"}
	var got map[string]string
	waitFor(t, 30*time.Second, "Alertmanager to apply the inhibit rules", func() bool {
		var as []struct {
			Labels map[string]string `json:"labels"`
			Status struct {
				State string `json:"state"`
			} `json:"status"`
		}
		getJSON(t, am+"/api/v2/alerts", &as)
		got = map[string]string{}
		for _, a := range as {
			got[a.Labels["alertname"]+"/"+a.Labels["job"]] = a.Status.State
		}
		for k, v := range want {
			if got[k] != v {
				return false
			}
		}
		return true
	})
	t.Logf("states: %v", got)
}
