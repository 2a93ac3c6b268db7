package daemon

import (
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/soakd/soakd/alerts"
	"github.com/soakd/soakd/soak"
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
	rep := &soak.Report{Resources: map[string]verdict.Resource{
		"rss": {Verdict: verdict.Leak, Unit: "bytes", PerRequest: 100, TimeToExhaustionSeconds: &zero},
	}}
	if got := h.evaluate("web", 1, rep); len(got) != 1 || got[0] != "rss" {
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
