package daemon

import (
	"os"
	"regexp"
	"testing"

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
	exposed := map[string]bool{"soakd_build_info": true}
	ch := make(chan *prometheus.Desc, 64)
	go func() {
		for _, c := range append(m.collectors(), am.Deliveries) {
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
