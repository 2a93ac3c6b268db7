package alerts

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"
)

// TestAlert returns the alert SendTest sends: alertname SoakdTest, job
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

// SendTest sends TestAlert once through every sink, without retries, and
// returns every sink's error joined (nil when all succeeded).
func SendTest(ctx context.Context, sinks map[string]Sink) error {
	names := make([]string, 0, len(sinks))
	for n := range sinks {
		names = append(names, n)
	}
	sort.Strings(names)
	a := TestAlert(time.Now())
	var errs []error
	for _, n := range names {
		if _, err := sinks[n].Send(ctx, a); err != nil {
			errs = append(errs, fmt.Errorf("sink %s: %w", n, err))
		}
	}
	return errors.Join(errs...)
}
