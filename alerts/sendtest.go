package alerts

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
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

// SendTest sends a through s once, as `soakd alert test` does, and returns
// why it failed, or nil. It is stricter than Send for an Alertmanager sink:
// Send succeeds when any peer accepts the alert, but a test must find a
// peer that is down, so every peer must accept it here.
func SendTest(ctx context.Context, s Sink, a Alert) error {
	if am, ok := s.(*Alertmanager); ok {
		return am.sendEvery(ctx, a)
	}
	_, err := s.Send(ctx, a)
	return err
}

// sendEvery posts alerts to every peer and fails when any of them fails,
// naming each failed peer.
func (am *Alertmanager) sendEvery(ctx context.Context, alerts ...Alert) error {
	body, err := json.Marshal(toAMAlerts(alerts))
	if err != nil {
		return fmt.Errorf("alertmanager %s: encode: %w", am.name, err)
	}
	errs := make([]error, len(am.urls))
	var wg sync.WaitGroup
	for i, u := range am.urls {
		wg.Go(func() { _, errs[i] = post(ctx, am.client, u, body, am.headers) })
	}
	wg.Wait()
	failed := 0
	for _, err := range errs {
		if err != nil {
			failed++
		}
	}
	if failed == 0 {
		return nil
	}
	return fmt.Errorf("alertmanager %s: %d of %d URLs failed: %w", am.name, failed, len(errs), errors.Join(errs...))
}
