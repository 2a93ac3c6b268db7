package alerts

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestSendTest(t *testing.T) {
	a, b := &recSink{name: "a"}, &recSink{name: "b"}
	if err := SendTest(t.Context(), map[string]Sink{"a": a, "b": b}); err != nil {
		t.Fatalf("SendTest: %v", err)
	}
	for _, s := range []*recSink{a, b} {
		got := s.batches()
		if len(got) != 1 || got[0][0].Labels[LabelAlertname] != AlertTest {
			t.Errorf("sink %s: got %v; want one %s alert", s.name, got, AlertTest)
		}
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
