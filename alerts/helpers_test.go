package alerts

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/soakd/soakd/internal/soaktest"
	"go.uber.org/zap/zaptest"
)

// waitFor waits up to 60 s for cond (soaktest.WaitFor).
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	soaktest.WaitFor(t, 60*time.Second, what, cond)
}

// recSink records every batch it is sent; fail, when set, decides each
// send's outcome.
type recSink struct {
	name string
	mu   sync.Mutex // guards got and fail
	got  [][]Alert
	fail func(n int) (bool, error)
}

func (s *recSink) Name() string { return s.name }

func (s *recSink) Send(_ context.Context, alerts ...Alert) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got = append(s.got, append([]Alert(nil), alerts...))
	if s.fail != nil {
		return s.fail(len(s.got))
	}
	return false, nil
}

func (s *recSink) batches() [][]Alert {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]Alert(nil), s.got...)
}

// amSink is a recSink the Manager treats as an Alertmanager: it keeps its
// firing alerts' endsAt fresh and sends their updates at once.
type amSink struct{ *recSink }

func (amSink) refreshes() bool { return true }

// fakeClock is a settable clock.
type fakeClock struct {
	mu sync.Mutex // guards t
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// newTestManager starts a Manager over sinks with fast retries and closes
// it at cleanup.
func newTestManager(t *testing.T, opts ManagerOptions, sinks ...Sink) (*Manager, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewRegistry()
	opts.Sinks = map[string]Sink{}
	for _, s := range sinks {
		opts.Sinks[s.Name()] = s
	}
	opts.Logger = zaptest.NewLogger(t)
	opts.Registerer = reg
	if opts.Retry.Initial == 0 {
		opts.Retry = RetryConfig{Initial: time.Millisecond, Max: 20 * time.Millisecond, MaxAttempts: 5}
	}
	m, err := NewManager(opts)
	if err != nil {
		t.Fatalf("NewManager: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = m.Close(ctx)
	})
	return m, reg
}

func deliveries(m *Manager, sink, result string) int {
	return int(testutil.ToFloat64(m.metrics.Deliveries.WithLabelValues(sink, result)))
}

func failing(m *Manager, sink string) float64 {
	return testutil.ToFloat64(m.metrics.Failing.WithLabelValues(sink))
}

func testLeak(job, resource string) Leak {
	return Leak{
		Job: job, Resource: resource, Unit: "bytes", RunID: "42",
		Summary:    "RSS grows 4 KiB per request through the last third of the soak.",
		PerRequest: 4096, PerHour: 12 << 20, CI95: [2]float64{3900, 4300},
		TimeToExhaustion: 31 * time.Hour,
	}
}

// resolveAll resolves every firing alert of (job, resource), whatever its
// alertname, as a run that ends without that leak does.
func resolveAll(m *Manager, job, resource string) {
	m.ResolveIf(func(a Alert) bool {
		fp := a.Fingerprint()
		return fp.Job == job && fp.Resource == resource
	})
}
