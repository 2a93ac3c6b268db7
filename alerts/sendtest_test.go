package alerts

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestTestAlert(t *testing.T) {
	now := time.Date(2026, 11, 30, 2, 0, 0, 0, time.UTC)
	a := TestAlert(now)
	l := a.Labels
	if l[LabelAlertname] != AlertTest || l[LabelJob] != "soakd" || l[LabelResource] != "test" || l[LabelSeverity] != SeverityInfo ||
		a.Status != StatusFiring || !a.StartsAt.Equal(now) || !a.EndsAt.Equal(now.Add(5*time.Minute)) || a.Annotations[AnnotationSummary] == "" {
		t.Errorf("got %+v; want a firing %s alert for job soakd, resource test, severity info, ending in 5 min", a, AlertTest)
	}
}

func TestMetricsLintAndReuse(t *testing.T) {
	m1, reg := newTestManager(t, ManagerOptions{}, &recSink{name: "a"})
	problems, err := testutil.GatherAndLint(reg)
	if err != nil || len(problems) > 0 {
		t.Fatalf("lint: %v %v", err, problems)
	}
	want := `
# HELP soakd_alert_deliveries_total Alert deliveries by sink and result (success, failure, dropped, retry).
# TYPE soakd_alert_deliveries_total counter
soakd_alert_deliveries_total{result="dropped",sink="a"} 0
soakd_alert_deliveries_total{result="failure",sink="a"} 0
soakd_alert_deliveries_total{result="retry",sink="a"} 0
soakd_alert_deliveries_total{result="success",sink="a"} 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "soakd_alert_deliveries_total"); err != nil {
		t.Error(err)
	}
	// A second Manager on the same registry (a reload) shares the counter.
	m2, err := NewManager(ManagerOptions{Registerer: reg})
	if err != nil {
		t.Fatalf("second NewManager on one registry: %v", err)
	}
	defer m2.Close(t.Context())
	if m1.metrics.Deliveries != m2.metrics.Deliveries {
		t.Error("second Manager did not reuse the registered counter")
	}
}
