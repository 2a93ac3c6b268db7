package alerts

import (
	"context"
	"math/rand/v2"
	"time"

	"go.uber.org/zap"
)

// enqueue queues batch for each named sink; a full queue drops its oldest
// batch, and a closed one the new batch, each counted as dropped.
func (m *Manager) enqueue(sinks []string, batch []Alert) {
	for _, name := range sinks {
		w, ok := m.workers[name]
		if !ok {
			continue
		}
		if d := w.q.push(batch); d != 0 {
			m.metrics.Deliveries.WithLabelValues(name, ResultDropped).Inc()
			// Log the first drop and every 100th: a stuck sink must not
			// flood the log.
			if n := w.dropped.Add(1); n%100 == 1 {
				m.log.Warn("alert queue full or closed: dropped a send", zap.String("sink", name), zap.Int64("dropped", n))
			}
		}
	}
}

// work delivers sink's batches until its queue is closed and empty, or the
// Manager gives up draining.
func (m *Manager) work(name string, w *worker) {
	defer m.wg.Done()
	for {
		batch, ok := w.q.pop(m.ctx)
		if !ok {
			break
		}
		m.deliver(name, w.sink, batch)
	}
	if n := w.q.len(); n > 0 {
		m.metrics.Deliveries.WithLabelValues(name, ResultDropped).Add(float64(n))
	}
}

// deliver sends batch, retrying retryable failures with capped, jittered
// exponential backoff up to MaxAttempts.
func (m *Manager) deliver(name string, s Sink, batch []Alert) {
	log := m.log.With(zap.String("sink", name), zap.Int("alerts", len(batch)),
		zap.String("first", batch[0].Fingerprint().String()))
	backoff := m.opts.Retry.Initial
	for attempt := 1; ; attempt++ {
		retry, err := s.Send(m.ctx, batch...)
		if err == nil {
			m.metrics.Deliveries.WithLabelValues(name, ResultSuccess).Inc()
			return
		}
		if !retry || attempt >= m.opts.Retry.MaxAttempts || m.ctx.Err() != nil {
			m.metrics.Deliveries.WithLabelValues(name, ResultFailure).Inc()
			log.Error("alert delivery failed", zap.Int("attempt", attempt), zap.Bool("retryable", retry), zap.Error(err))
			return
		}
		m.metrics.Deliveries.WithLabelValues(name, ResultRetry).Inc()
		log.Warn("alert delivery failed; retrying", zap.Int("attempt", attempt), zap.Duration("backoff", backoff), zap.Error(err))
		if !sleep(m.ctx, jitter(backoff)) {
			m.metrics.Deliveries.WithLabelValues(name, ResultFailure).Inc()
			return
		}
		backoff = min(2*backoff, m.opts.Retry.Max)
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
