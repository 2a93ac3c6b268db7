package alerts

import (
	"time"
)

// TestAlert returns the alert `soakd alert test` sends: alertname SoakdTest, job
// "soakd", resource "test", severity info, valid for five minutes.
func TestAlert(now time.Time) Alert {
	return Alert{
		Labels: labels(AlertTest, "soakd", "test", SeverityInfo),
		Annotations: map[string]string{
			AnnotationSummary: "Test alert from soakd alert test: delivery works. It expires by itself.",
		},
		StartsAt: now,
		EndsAt:   now.Add(5 * time.Minute),
		Status:   StatusFiring,
	}
}
