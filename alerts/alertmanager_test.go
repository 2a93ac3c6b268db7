package alerts

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

const alertmanagerBin = "/usr/bin/prometheus-alertmanager"

// startAlertmanager runs the real Alertmanager on a free loopback port with
// clustering off and its storage in a temp dir, waits until it is ready,
// and returns its base URL. It is killed by PID at cleanup.
func startAlertmanager(t *testing.T) string {
	t.Helper()
	return startAlertmanagerAt(t, freeAddr(t), t.TempDir()).base
}

// amProc is a running Alertmanager.
type amProc struct {
	base string
	stop func() // kills it by PID and reaps it; idempotent
}

// startAlertmanagerAt runs Alertmanager on addr with its files in dir, so
// a test can stop it and start it again at the same address.
func startAlertmanagerAt(t *testing.T, addr, dir string) amProc {
	t.Helper()
	if _, err := os.Stat(alertmanagerBin); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s missing in CI: %v", alertmanagerBin, err)
		}
		t.Skipf("%s not installed (apt-get install -y prometheus-alertmanager)", alertmanagerBin)
	}
	cfg := filepath.Join(dir, "alertmanager.yml")
	conf := "route:\n  receiver: blackhole\n  group_wait: 1s\nreceivers:\n  - name: blackhole\n"
	if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(alertmanagerBin,
		"--config.file="+cfg,
		"--storage.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr,
		"--cluster.listen-address=",
		"--log.level=warn",
	)
	cmd.Stdout, cmd.Stderr = io.Discard, &testWriter{t: t}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start alertmanager: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			_ = syscall.Kill(cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		})
	}
	t.Cleanup(stop)
	base := "http://" + addr
	waitReady(t, base+"/-/ready", exited)
	return amProc{base: base, stop: stop}
}

// testWriter forwards a process's stderr to the test log.
type testWriter struct{ t *testing.T }

func (w *testWriter) Write(p []byte) (int, error) {
	w.t.Logf("alertmanager: %s", p)
	return len(p), nil
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

func waitReady(t *testing.T, url string, exited <-chan error) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			t.Fatalf("alertmanager exited before ready: %v", err)
		default:
		}
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("alertmanager not ready at %s", url)
}

// gettableAlert is the part of API v2's GET /api/v2/alerts we check.
type gettableAlert struct {
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	EndsAt      time.Time         `json:"endsAt"`
	Status      struct {
		State string `json:"state"`
	} `json:"status"`
}

func getAlerts(t *testing.T, base string) []gettableAlert {
	t.Helper()
	resp, err := http.Get(base + "/api/v2/alerts")
	if err != nil {
		t.Fatalf("GET alerts: %v", err)
	}
	defer resp.Body.Close()
	var out []gettableAlert
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("decode alerts: %v", err)
	}
	return out
}

func findAlert(alerts []gettableAlert, name, job, resource string) *gettableAlert {
	for i, a := range alerts {
		if a.Labels[LabelAlertname] == name && a.Labels[LabelJob] == job && a.Labels[LabelResource] == resource {
			return &alerts[i]
		}
	}
	return nil
}

func TestAlertmanagerRealFireAndResolve(t *testing.T) {
	base := startAlertmanager(t)
	// An HA pair with one peer down: the send still succeeds.
	am, err := NewAlertmanager("am", []string{base, "http://" + freeAddr(t)}, HTTPOptions{Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	m, _ := newTestManager(t, ManagerOptions{ExternalURL: "http://soakhost:7797"}, am)

	m.Fire(LeakAlert(testLeak("web", "rss")))
	var got *gettableAlert
	waitFor(t, "the alert in Alertmanager", func() bool {
		got = findAlert(getAlerts(t, base), AlertLeak, "web", "rss")
		return got != nil
	})
	want := map[string]string{
		"labels.severity":                SeverityWarning,
		"annotations.summary":            testLeak("web", "rss").Summary,
		"annotations.per_request":        "4 KiB/request",
		"annotations.per_hour":           "12 MiB/h",
		"annotations.time_to_exhaustion": "31h0m0s",
		"annotations.run_id":             "42",
		"status.state":                   "active",
	}
	gotm := map[string]string{
		"labels.severity":                got.Labels[LabelSeverity],
		"annotations.summary":            got.Annotations[AnnotationSummary],
		"annotations.per_request":        got.Annotations[AnnotationPerRequest],
		"annotations.per_hour":           got.Annotations[AnnotationPerHour],
		"annotations.time_to_exhaustion": got.Annotations[AnnotationTimeToExhaustion],
		"annotations.run_id":             got.Annotations[AnnotationRunID],
		"status.state":                   got.Status.State,
	}
	for k, v := range want {
		if gotm[k] != v {
			t.Errorf("%s: got %q; want %q", k, gotm[k], v)
		}
	}

	resolveAll(m, "web", "rss")
	waitFor(t, "the alert resolved in Alertmanager", func() bool {
		a := findAlert(getAlerts(t, base), AlertLeak, "web", "rss")
		return a == nil || !a.EndsAt.After(time.Now())
	})
	// The worker counts a delivery after Alertmanager answered: wait.
	waitFor(t, "2 successful deliveries", func() bool { return deliveries(m, "am", ResultSuccess) == 2 })
	if n := deliveries(m, "am", ResultFailure); n != 0 {
		t.Errorf("failed deliveries: got %d; want 0", n)
	}
}

func TestAlertmanagerAllDown(t *testing.T) {
	cases := []struct {
		name      string
		status    int
		wantRetry bool
	}{
		{"5xx is retryable", http.StatusServiceUnavailable, true},
		{"4xx is not", http.StatusBadRequest, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var path string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				path = r.URL.Path
				http.Error(w, "nope", c.status)
			}))
			defer srv.Close()
			am, err := NewAlertmanager("am", []string{srv.URL + "/prefix"}, HTTPOptions{})
			if err != nil {
				t.Fatal(err)
			}
			retry, err := am.Send(t.Context(), LeakAlert(testLeak("web", "rss")))
			if err == nil || retry != c.wantRetry {
				t.Errorf("got retry %v, err %v; want retry %v and an error", retry, err, c.wantRetry)
			}
			if path != "/prefix/api/v2/alerts" {
				t.Errorf("path: got %q; want /prefix/api/v2/alerts", path)
			}
		})
	}
}

// TestAlertmanagerOutageLongerThanRetryBudget: Alertmanager is down when
// the alert fires and stays down past MaxAttempts failed sends (the old
// retry budget, after which the alert was lost); once it is back, the
// alert arrives, with an endsAt in the future. soakd_alert_delivery_failing
// is 1 from the budget's last failed send to the first successful one,
// and 0 from then on.
func TestAlertmanagerOutageLongerThanRetryBudget(t *testing.T) {
	addr, dir := freeAddr(t), t.TempDir()
	am := startAlertmanagerAt(t, addr, dir)
	am.stop()
	sink, err := NewAlertmanager("am", []string{am.base}, HTTPOptions{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	m, _ := newTestManager(t, ManagerOptions{
		Retry: RetryConfig{Initial: 20 * time.Millisecond, Max: 200 * time.Millisecond, MaxAttempts: 3},
	}, sink)
	m.Fire(LeakAlert(testLeak("web", "rss")))
	// Wait on the attempts, whatever they were counted as, and then check
	// how they were counted: a miscounted outcome fails at once, not after
	// a wait that can never end.
	attempts := func() int { return deliveries(m, "am", ResultRetry) + deliveries(m, "am", ResultFailure) }
	waitFor(t, "the retry budget spent and more attempts past it", func() bool { return attempts() >= 4 })
	if f, r := deliveries(m, "am", ResultFailure), deliveries(m, "am", ResultRetry); f != 1 || r < 3 {
		t.Errorf("after %d attempts: %d counted failure, %d retry; want the budget's last attempt a failure (1) and the rest retries", f+r, f, r)
	}
	if f := failing(m, "am"); f != 1 {
		t.Errorf("soakd_alert_delivery_failing during the outage = %v; want 1", f)
	}

	am = startAlertmanagerAt(t, addr, dir)
	var got *gettableAlert
	waitFor(t, "the alert in Alertmanager after the outage", func() bool {
		got = findAlert(getAlerts(t, am.base), AlertLeak, "web", "rss")
		return got != nil
	})
	if got.Status.State != "active" || !got.EndsAt.After(time.Now()) {
		t.Errorf("after the outage: state %q, endsAt %v; want active and in the future", got.Status.State, got.EndsAt)
	}
	// The worker confirms once Alertmanager answered: wait for it.
	waitFor(t, "the delivery confirmed", func() bool { return m.QueueLen("am") == 0 })
	if f := failing(m, "am"); f != 0 {
		t.Errorf("soakd_alert_delivery_failing after the delivery = %v; want 0", f)
	}
	t.Logf("delivered after %d failed attempts (retry budget %d), endsAt %s ahead",
		deliveries(m, "am", ResultRetry)+deliveries(m, "am", ResultFailure), 3, time.Until(got.EndsAt).Round(time.Second))
}

// TestAlertmanagerRecoveryIsSentAtOnce: Alertmanager is down when the
// alert fires and the backoff has grown to 10 minutes; once Alertmanager is
// back, the readiness probe ends the backoff and the alert arrives within
// seconds (the wait below gives up long before 5 minutes, the shortest
// jittered backoff).
func TestAlertmanagerRecoveryIsSentAtOnce(t *testing.T) {
	addr, dir := freeAddr(t), t.TempDir()
	am := startAlertmanagerAt(t, addr, dir)
	am.stop()
	sink, err := NewAlertmanager("am", []string{am.base}, HTTPOptions{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	m, _ := newTestManager(t, ManagerOptions{
		Retry:         RetryConfig{Initial: 10 * time.Minute, Max: 10 * time.Minute, MaxAttempts: 1},
		ProbeInterval: 100 * time.Millisecond,
	}, sink)
	m.Fire(LeakAlert(testLeak("web", "rss")))
	waitFor(t, "the first send failed", func() bool { return deliveries(m, "am", ResultFailure) == 1 })

	am = startAlertmanagerAt(t, addr, dir)
	start := time.Now()
	waitFor(t, "the alert in Alertmanager once it is back", func() bool {
		return findAlert(getAlerts(t, am.base), AlertLeak, "web", "rss") != nil
	})
	t.Logf("delivered %s after Alertmanager was ready again, with a 10-minute backoff pending", time.Since(start).Round(10*time.Millisecond))
}
