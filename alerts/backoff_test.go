package alerts

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// sleepRec is a Sleep for ManagerOptions that records each wait and
// returns at once, so that the backoff is checked without sleeping.
type sleepRec struct {
	mu sync.Mutex // guards d
	d  []time.Duration
}

func (s *sleepRec) Sleep(ctx context.Context, d time.Duration) bool {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	return ctx.Err() == nil
}

func (s *sleepRec) waits() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.d...)
}

// testRetry has backoffs far apart, so that jitter (a wait in [b/2, b])
// cannot make one step look like another.
var testRetry = RetryConfig{Initial: time.Second, Max: time.Hour, MaxAttempts: 5}

// checkWaits checks that wait i was the jittered backoff base[i].
func checkWaits(t *testing.T, got, base []time.Duration) {
	t.Helper()
	if len(got) != len(base) {
		t.Fatalf("backoff waits = %v; want %d waits, jittered from %v", got, len(base), base)
	}
	for i, b := range base {
		if got[i] < b/2 || got[i] > b {
			t.Errorf("wait %d = %v; want it in [%v, %v] (backoff %v; all waits %v)", i+1, got[i], b/2, b, b, got)
		}
	}
}

func TestBackoffDoublesUpToMax(t *testing.T) {
	rec := &sleepRec{}
	sink := &recSink{name: "s", fail: func(n int) (bool, error) {
		if n <= 6 {
			return true, errors.New("503")
		}
		return false, nil
	}}
	retry := RetryConfig{Initial: time.Second, Max: 16 * time.Second, MaxAttempts: 5}
	m, _ := newTestManager(t, ManagerOptions{Retry: retry, Sleep: rec.Sleep}, sink)
	m.Fire(LeakAlert(testLeak("web", "rss")))
	waitFor(t, "a success", func() bool { return deliveries(m, "s", ResultSuccess) == 1 })
	s := time.Second
	checkWaits(t, rec.waits(), []time.Duration{s, 2 * s, 4 * s, 8 * s, 16 * s, 16 * s})
}

func TestBackoffResetsAfterSuccess(t *testing.T) {
	rec := &sleepRec{}
	sink := &recSink{name: "s", fail: func(n int) (bool, error) {
		if n <= 3 || n == 5 { // three failures, a success, a failure
			return true, errors.New("503")
		}
		return false, nil
	}}
	m, _ := newTestManager(t, ManagerOptions{Retry: testRetry, Sleep: rec.Sleep}, sink)
	m.Fire(LeakAlert(testLeak("web", "rss")))
	waitFor(t, "the first success", func() bool { return deliveries(m, "s", ResultSuccess) == 1 })
	m.Fire(LeakAlert(testLeak("web", "fds")))
	waitFor(t, "the second success", func() bool { return deliveries(m, "s", ResultSuccess) == 2 })
	s := time.Second
	// After the success the next failure waits the initial backoff again,
	// not the 8 s the three failures before it had reached.
	checkWaits(t, rec.waits(), []time.Duration{s, 2 * s, 4 * s, s})
}

func TestBackoffFinalStatusWaitsMax(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if calls.Add(1) == 1 {
			http.Error(w, "bad payload", http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(srv.Close)
	rec := &sleepRec{}
	wh := NewWebhook("hook", srv.URL, nil, HTTPOptions{})
	m, _ := newTestManager(t, ManagerOptions{Retry: testRetry, Sleep: rec.Sleep}, wh)
	m.Fire(LeakAlert(testLeak("web", "rss")))
	waitFor(t, "a success", func() bool { return deliveries(m, "hook", ResultSuccess) == 1 })
	// A 4xx is final: asking again at the initial backoff would not help,
	// so the one retry waits retry.max.
	checkWaits(t, rec.waits(), []time.Duration{testRetry.Max})
}

func TestBackoffRetryableStatusWaitsInitial(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if calls.Add(1) == 1 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(srv.Close)
	rec := &sleepRec{}
	wh := NewWebhook("hook", srv.URL, nil, HTTPOptions{})
	// A probe interval above the backoff: the wait is one Sleep, not a
	// probing loop.
	opts := ManagerOptions{Retry: testRetry, Sleep: rec.Sleep, ProbeInterval: time.Hour}
	m, _ := newTestManager(t, opts, wh)
	m.Fire(LeakAlert(testLeak("web", "rss")))
	waitFor(t, "a success", func() bool { return deliveries(m, "hook", ResultSuccess) == 1 })
	checkWaits(t, rec.waits(), []time.Duration{testRetry.Initial})
}
