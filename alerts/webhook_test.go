package alerts

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/soakd/soakd/soak/urlx"
)

func TestWebhookSignatureAndBody(t *testing.T) {
	secret := []byte("s3cret")
	type received struct {
		body []byte
		sig  string
		team string
	}
	got := make(chan received, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- received{b, r.Header.Get(SignatureHeader), r.Header.Get("X-Team")}
	}))
	defer srv.Close()

	hook := NewWebhook("hook", srv.URL, secret, HTTPOptions{Headers: urlx.Headers{"X-Team": "payments"}})
	a := LeakAlert(testLeak("web", "rss"))
	if _, err := hook.Send(t.Context(), a); err != nil {
		t.Fatalf("Send: %v", err)
	}
	r := <-got
	if !Verify(secret, r.body, r.sig) {
		t.Errorf("signature %q does not verify", r.sig)
	}
	if Verify([]byte("other"), r.body, r.sig) {
		t.Errorf("signature verifies under the wrong secret")
	}
	if r.team != "payments" {
		t.Errorf("X-Team: got %q; want payments", r.team)
	}
	var p Payload
	if err := json.Unmarshal(r.body, &p); err != nil {
		t.Fatalf("decode payload: %v", err)
	}
	checks := []struct{ name, got, want string }{
		{"version", p.Version, PayloadVersion},
		{"receiver", p.Receiver, "hook"},
		{"status", string(p.Status), "firing"},
		{"fingerprint", p.Alerts[0].Fingerprint, "SoakdLeak/web/rss"},
		{"alertname", p.Alerts[0].Labels[LabelAlertname], AlertLeak},
		{"per_hour", p.Alerts[0].Annotations[AnnotationPerHour], "12 MiB/h"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: got %q; want %q", c.name, c.got, c.want)
		}
	}
}

func TestWebhookRetriesAfter503(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) <= 2 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	m, _ := newTestManager(t, ManagerOptions{}, NewWebhook("hook", srv.URL, nil, HTTPOptions{}))
	m.Fire(LeakAlert(testLeak("web", "rss")))
	waitFor(t, "delivery", func() bool { return deliveries(m, "hook", ResultSuccess) == 1 })
	if n := calls.Load(); n != 3 {
		t.Errorf("calls: got %d; want 3", n)
	}
	if n := deliveries(m, "hook", ResultRetry); n != 2 {
		t.Errorf("retries: got %d; want 2", n)
	}
}

func TestWebhookRetriesUntilReceiverListens(t *testing.T) {
	addr := freeAddr(t) // nothing listens there yet
	m, _ := newTestManager(t, ManagerOptions{
		Retry: RetryConfig{Initial: 5 * time.Millisecond, Max: 50 * time.Millisecond, MaxAttempts: 1 << 20},
	}, NewWebhook("hook", "http://"+addr+"/hook", nil, HTTPOptions{}))
	m.Fire(LeakAlert(testLeak("web", "rss")))
	waitFor(t, "a failed attempt", func() bool { return deliveries(m, "hook", ResultRetry) >= 1 })

	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("port %s taken meanwhile: %v", addr, err)
	}
	var hits atomic.Int32
	srv := &http.Server{Handler: http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) })}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	waitFor(t, "delivery once listening", func() bool { return deliveries(m, "hook", ResultSuccess) == 1 })
	if hits.Load() != 1 {
		t.Errorf("hits: got %d; want 1", hits.Load())
	}
}

// TestWebhookSendsAreBounded: alerts fired while the receiver is stuck
// wait, none lost, and go out in sends of at most QueueSize alerts.
func TestWebhookSendsAreBounded(t *testing.T) {
	release := make(chan struct{})
	var once sync.Once
	var mu sync.Mutex
	seen := map[string]bool{}
	largest := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		var p Payload
		if err := json.NewDecoder(r.Body).Decode(&p); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		largest = max(largest, len(p.Alerts))
		for _, a := range p.Alerts {
			seen[a.Labels[LabelResource]] = true
		}
	}))
	t.Cleanup(func() { once.Do(func() { close(release) }); srv.Close() })

	const bound, fired = 8, 100
	hook := NewWebhook("hook", srv.URL, nil, HTTPOptions{Timeout: time.Hour})
	m, _ := newTestManager(t, ManagerOptions{QueueSize: bound}, hook)
	for i := range fired {
		m.Fire(LeakAlert(testLeak("web", fmt.Sprintf("r%d", i))))
	}
	if n := m.QueueLen("hook"); n < fired-bound {
		t.Errorf("pending while the receiver is stuck: %d; want at least %d", n, fired-bound)
	}
	once.Do(func() { close(release) })
	waitFor(t, "every alert confirmed", func() bool { return m.QueueLen("hook") == 0 })
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != fired || largest > bound {
		t.Errorf("receiver saw %d distinct alerts, at most %d per send; want %d, at most %d", len(seen), largest, fired, bound)
	}
}

func TestSendErrorsAreRedacted(t *testing.T) {
	addr := freeAddr(t)
	raw := "http://user:hunter2@" + addr + "/services/T0000/B0000/abcdefghijklmnopqrstuvwx?token=tok3n"
	sinks := map[string]Sink{
		"hook":  NewWebhook("hook", raw, nil, HTTPOptions{}),
		"slack": NewSlack("slack", raw, HTTPOptions{}),
	}
	for name, s := range sinks {
		_, err := s.Send(t.Context(), TestAlert(time.Now()))
		if err == nil {
			t.Fatalf("%s: sending to a closed port: got nil error", name)
		}
		for _, secret := range []string{"hunter2", "tok3n", "abcdefghijklmnopqrstuvwx"} {
			if strings.Contains(err.Error(), secret) {
				t.Errorf("%s: error leaks %q: %v", name, secret, err)
			}
		}
	}
}

// TestWebhookProbeEndsTheBackoff: a webhook receiver that starts listening
// during a 10-minute backoff gets the alert at once: the TCP probe finds
// it.
func TestWebhookProbeEndsTheBackoff(t *testing.T) {
	addr := freeAddr(t) // nothing listens there yet
	m, _ := newTestManager(t, ManagerOptions{
		Retry:         RetryConfig{Initial: 10 * time.Minute, Max: 10 * time.Minute, MaxAttempts: 1},
		ProbeInterval: 50 * time.Millisecond,
	}, NewWebhook("hook", "http://"+addr+"/hook", nil, HTTPOptions{}))
	m.Fire(LeakAlert(testLeak("web", "rss")))
	waitFor(t, "a failed attempt", func() bool { return deliveries(m, "hook", ResultFailure) == 1 })
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("port %s taken meanwhile: %v", addr, err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	waitFor(t, "delivery once listening", func() bool { return deliveries(m, "hook", ResultSuccess) == 1 })
}
