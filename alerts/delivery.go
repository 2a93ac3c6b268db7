package alerts

import (
	"context"
	"math/bits"
	"math/rand/v2"
	"sort"
	"time"

	"go.uber.org/zap"
)

// sent is one alert of a send: its fingerprint and the generation sent.
type sent struct {
	fp  Fingerprint
	gen uint64
}

// due returns the alerts to send to sink now: those pending (a generation
// the sink has not confirmed) and, unless the Manager is closing, firing
// alerts whose last delivery is a repeat interval old. Firing alerts get
// endsAt = now + the sink's expiry. wait is how long until the next
// alert falls due, when none is due now; closing tells the Manager
// closes.
func (m *Manager) due(name string, w *worker) (batch []Alert, ids []sent, wait time.Duration, closing bool) {
	now := m.now()
	repeat, expiry := m.repeatFor(w), m.expiryFor(w)
	wait = m.opts.RepeatCheck
	m.mu.Lock()
	defer m.mu.Unlock()
	fps := make([]Fingerprint, 0, len(m.alerts))
	for fp := range m.alerts {
		fps = append(fps, fp)
	}
	sort.Slice(fps, func(i, j int) bool { return fps[i].String() < fps[j].String() })
	for _, fp := range fps {
		if !routed(m.routes[fp], name) {
			continue
		}
		e := m.alerts[fp]
		st := e.Sinks[name]
		pending := pendingFor(w, e, st)
		firing := e.Alert.Status == StatusFiring
		next := st.Delivered.Add(repeat).Sub(now)
		if !pending && (!firing || m.closed || next > 0) {
			if firing && !m.closed {
				wait = min(wait, next)
			}
			continue
		}
		if len(batch) == m.opts.QueueSize {
			wait = 0
			break
		}
		a := e.Alert.clone()
		if firing {
			a.EndsAt = now.Add(expiry)
		}
		batch = append(batch, a)
		ids = append(ids, sent{fp, e.Gen})
	}
	return batch, ids, wait, m.closed
}

// pendingFor says whether e must go to w's sink at once: a generation the
// sink has not confirmed. On a sink that notifies people (webhook, Slack,
// exec), a firing alert the sink already had since it started is not: its
// updates (a later look's or run's figures) go out with its next repeat,
// so that one finding is one page per repeat interval, however many runs
// see it. Alertmanager gets every update at once; it groups and repeats
// by itself.
func pendingFor(w *worker, e *StoredAlert, st SinkState) bool {
	if st.Gen >= e.Gen {
		return false
	}
	return w.refresh || e.Alert.Status != StatusFiring || st.Delivered.Before(e.Alert.StartsAt)
}

func routed(sinks []string, name string) bool {
	for _, s := range sinks {
		if s == name {
			return true
		}
	}
	return false
}

// confirm records that sink delivered ids at now, and resolves the
// alerts whose resolve waited for that delivery.
func (m *Manager) confirm(name string, ids []sent, now time.Time) {
	kick := map[string]bool{}
	defer func() {
		for s := range kick {
			m.kick([]string{s})
		}
	}()
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, id := range ids {
		e, ok := m.alerts[id.fp]
		if !ok {
			continue
		}
		st := e.Sinks[name]
		st.Gen = max(st.Gen, id.gen)
		st.Delivered = now
		if e.Sinks == nil {
			e.Sinks = map[string]SinkState{}
		}
		e.Sinks[name] = st
		if e.ResolveOnDelivery && e.Alert.Status == StatusFiring && m.delivered(id.fp, e) {
			m.resolve(id.fp, e, now, kick)
			continue
		}
		m.settle(id.fp, e)
	}
}

// work delivers sink's due alerts until the Manager closes with nothing
// pending for it, or gives up draining.
func (m *Manager) work(name string, w *worker) {
	defer m.wg.Done()
	log := m.log.With(zap.String("sink", name))
	backoff, failures := m.opts.Retry.Initial, 0
	for {
		batch, ids, wait, closing := m.due(name, w)
		if len(batch) == 0 {
			if closing {
				return
			}
			if wait > 0 && !sleepOrKick(m.ctx, w.kick, wait) {
				m.abandon(name)
				return
			}
			continue
		}
		retry, err := w.sink.Send(m.ctx, batch...)
		if err == nil {
			m.metrics.Deliveries.WithLabelValues(name, ResultSuccess).Inc()
			m.metrics.Failing.WithLabelValues(name).Set(0)
			if failures > 0 {
				log.Info("alert delivery recovered", zap.Int("failed_attempts", failures), zap.Int("alerts", len(batch)))
			}
			m.confirm(name, ids, m.now())
			backoff, failures = m.opts.Retry.Initial, 0
			continue
		}
		if m.ctx.Err() != nil {
			m.abandon(name)
			return
		}
		failures++
		if !retry {
			backoff = m.opts.Retry.Max
		}
		fields := []zap.Field{zap.Int("attempt", failures), zap.Int("alerts", len(batch)),
			zap.String("first", batch[0].Fingerprint().String()), zap.Bool("retryable", retry),
			zap.Duration("backoff", backoff), zap.Error(err)}
		switch {
		case failures == m.opts.Retry.MaxAttempts:
			m.metrics.Deliveries.WithLabelValues(name, ResultFailure).Inc()
			m.metrics.Failing.WithLabelValues(name).Set(1)
			log.Error("alert delivery failing; retrying with backoff while the alerts are pending", fields...)
		case failures < m.opts.Retry.MaxAttempts || bits.OnesCount(uint(failures)) == 1:
			// Every attempt up to MaxAttempts, then at powers of two: an
			// outage must not flood the log.
			m.metrics.Deliveries.WithLabelValues(name, ResultRetry).Inc()
			log.Warn("alert delivery failed; retrying", fields...)
		default:
			m.metrics.Deliveries.WithLabelValues(name, ResultRetry).Inc()
		}
		// A receiver that answered with a final status (4xx) is not
		// probed: it was up, and asking again sooner would not help.
		if !m.backoffWait(w, jitter(backoff), retry) {
			m.abandon(name)
			return
		}
		backoff = min(2*backoff, m.opts.Retry.Max)
	}
}

// abandon counts what is still pending for sink as dropped when the
// Manager gives up draining (a State keeps it for the next start).
func (m *Manager) abandon(name string) {
	if n := m.QueueLen(name); n > 0 {
		m.metrics.Deliveries.WithLabelValues(name, ResultDropped).Add(float64(n))
	}
}

// jitter returns a duration uniformly in [d/2, d].
func jitter(d time.Duration) time.Duration {
	if d <= 1 {
		return d
	}
	return d/2 + rand.N(d/2+1)
}

// sleep waits d or until ctx is done; it reports whether d elapsed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// sleepOrKick waits d, a kick, or ctx; it reports false when ctx is done.
func sleepOrKick(ctx context.Context, kick <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-kick:
	case <-ctx.Done():
		return false
	}
	return true
}
