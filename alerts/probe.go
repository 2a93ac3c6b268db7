package alerts

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/soakd/soakd/soak/urlx"
)

// DefaultProbeInterval is how often the Manager checks, during a failing
// sink's backoff, whether its receiver is back.
const DefaultProbeInterval = 2 * time.Second

// prober is implemented by sinks that can tell cheaply whether their
// receiver is back. While a sink's backoff runs, the Manager probes it
// every ProbeInterval and retries at once when the probe succeeds, so a
// recovered receiver gets its alerts within seconds, not at the end of a
// backoff grown to retry.max.
type prober interface {
	probe(ctx context.Context) error
}

// probe asks each Alertmanager's /-/ready; one ready is enough.
func (am *Alertmanager) probe(ctx context.Context) error {
	var last error
	for _, b := range am.bases {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.JoinPath("-", "ready").String(), nil)
		if err != nil {
			return err
		}
		resp, err := am.client.Do(req)
		if err != nil {
			last = redactErr(err, b.String())
			continue
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			return nil
		}
		last = fmt.Errorf("%s: status %d", urlx.Redact(b.String()), resp.StatusCode)
	}
	return last
}

func (w *Webhook) probe(ctx context.Context) error { return dialProbe(ctx, w.url) }
func (s *Slack) probe(ctx context.Context) error   { return dialProbe(ctx, s.url) }

// dialProbe tells whether rawURL's host accepts a TCP connection.
func dialProbe(ctx context.Context, rawURL string) error {
	a, err := urlx.ParseAddr(rawURL)
	if err != nil {
		return err
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", a.String())
	if err != nil {
		return err
	}
	return c.Close()
}

// backoffWait waits d before the next attempt on w's sink, or less when
// probing (after a failure that says the receiver was unreachable or
// unwell) finds it back; it reports false when the Manager gave up.
func (m *Manager) backoffWait(w *worker, d time.Duration, probing bool) bool {
	p, ok := w.sink.(prober)
	every := m.opts.ProbeInterval
	if !ok || !probing || d <= every {
		return m.opts.Sleep(m.ctx, d)
	}
	deadline := time.Now().Add(d)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return true
		}
		if !m.opts.Sleep(m.ctx, min(left, every)) {
			return false
		}
		ctx, cancel := context.WithTimeout(m.ctx, every)
		err := p.probe(ctx)
		cancel()
		if err == nil {
			return true
		}
	}
}
