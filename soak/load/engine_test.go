package load

import (
	"context"
	"fmt"
	"io"
	"log"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/soakd/soakd/internal/soaktest"
)

func TestExactRequestCounts(t *testing.T) {
	tests := []struct {
		name string
		o    Options
	}{
		{"closed c=1", Options{Concurrency: 1, Requests: 57, KeepAlive: true}},
		{"closed c=7", Options{Concurrency: 7, Requests: 101, KeepAlive: true}},
		{"closed no keep-alive", Options{Concurrency: 3, Requests: 40}},
		{"open", Options{Rate: 1000, Requests: 77, KeepAlive: true}},
		{"open c=2", Options{Rate: 2000, Concurrency: 2, Requests: 64, KeepAlive: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := newTestServer(t, okHandler)
			tt.o.Endpoints = endpoints(ts.URL)
			s := run(t, tt.o)
			if s.Requests != tt.o.Requests || uint64(ts.requests.Load()) != tt.o.Requests {
				t.Errorf("got %d completed, %d at server; want %d", s.Requests, ts.requests.Load(), tt.o.Requests)
			}
			if s.StoppedBy != "requests" || s.Errors != 0 {
				t.Errorf("got stopped by %q, %d errors %v; want requests, 0", s.StoppedBy, s.Errors, s.ErrorsByCause)
			}
		})
	}
}

// An open loop at 500/s for 4 s has 2000 due times. Each is accounted
// for whatever the machine did: completed, abandoned in flight at the
// stop, or missed. On a machine with cores to spare, 2000 ± 2 % complete.
// Fewer is a pacer that fell behind (missed sends) or requests still in
// flight at the stop (abandoned). The test declines only when the test's
// own threads waited for a core (schedstat) at least as long as the
// schedule it fell short by, and, if sends were missed, the pacer saw its
// sends leave late: the shortfall is then the machine's, not the pacer's.
func TestOpenLoopRate(t *testing.T) {
	const rate, d, want = 500, 4 * time.Second, 2000
	ts := newTestServer(t, okHandler)
	before, probed := soaktest.SelfCPU()
	s := run(t, Options{Endpoints: endpoints(ts.URL), Rate: rate, Duration: d, KeepAlive: true})
	after, _ := soaktest.SelfCPU()
	if s.Mode != "open" || s.StoppedBy != "duration" {
		t.Errorf("got mode %q stopped by %q; want open, duration", s.Mode, s.StoppedBy)
	}
	if got := s.Requests + s.Abandoned + s.MissedSends; got != want {
		t.Errorf("got %d completed + %d abandoned + %d missed = %d; want the schedule's %d due times",
			s.Requests, s.Abandoned, s.MissedSends, got, want)
	}
	used := after.Sub(before)
	t.Logf("%d completed, %d late, %d missed, %d abandoned; the test's threads %s", s.Requests, s.LateSends, s.MissedSends, s.Abandoned, used)
	got := float64(s.Requests)
	if got <= want*1.02 && got >= want*0.98 {
		return
	}
	behind := time.Duration(float64(time.Second) * (want - min(got, want)) / rate)
	if got < want && (s.MissedSends == 0 || s.LateSends > 0) && probed && used.Wait >= behind {
		t.Skipf("the machine was busy: %v completed of %d; the test's threads %s in the %s run, at least the %.2f s of schedule it fell short by (%d late, %d missed, %d abandoned)",
			got, want, used, d, behind.Seconds(), s.LateSends, s.MissedSends, s.Abandoned)
	}
	t.Errorf("got %v requests at %d/s for %s; want %d ± 2 %% (%d late, %d missed, %d abandoned; the test's threads %s)",
		got, rate, d, want, s.LateSends, s.MissedSends, s.Abandoned, used)
}

func TestOpenLoopCountsMissedSends(t *testing.T) {
	release := make(chan struct{})
	ts := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	defer close(release)
	s := run(t, Options{Endpoints: endpoints(ts.URL), Rate: 200, Concurrency: 2,
		Duration: time.Second, Timeout: 5 * time.Second, KeepAlive: true})
	if s.MissedSends < 100 {
		t.Errorf("got %d missed sends with 2 stuck workers at 200/s for 1s; want >= 100", s.MissedSends)
	}
	if s.Abandoned != 2 {
		t.Errorf("got %d abandoned; want 2 (both stuck requests)", s.Abandoned)
	}
}

// resetServer reads a request and closes with SO_LINGER 0, so the client
// sees a TCP reset.
func resetServer(t *testing.T) string {
	return rawServer(t, func(c net.Conn) {
		buf := make([]byte, 4096)
		_, _ = c.Read(buf)
		_ = c.(*net.TCPConn).SetLinger(0)
	})
}

// closeServer reads a request and closes the connection without a word.
func closeServer(t *testing.T) string {
	return rawServer(t, func(c net.Conn) {
		buf := make([]byte, 4096)
		_, _ = c.Read(buf)
	})
}

func TestErrorCauses(t *testing.T) {
	var n atomic.Int64
	growing := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, strings.Repeat("x", int(n.Add(1))))
	})
	sleeper := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(10 * time.Second):
		case <-r.Context().Done():
		}
	})
	failing := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "boom", http.StatusInternalServerError)
	})
	ok := newTestServer(t, okHandler)
	plain := newTestServer(t, okHandler)
	plain.Config.ErrorLog = log.New(io.Discard, "", 0) // expected TLS handshakes on a plain port
	tests := []struct {
		name  string
		o     Options
		cause string
		class string
		text  string // in the first error text of cause
	}{
		{"reset", Options{Endpoints: endpoints(resetServer(t))}, CauseReset, "", "connection reset by peer"},
		{"closed", Options{Endpoints: endpoints(closeServer(t))}, CauseReset, "", "the server closed the connection before answering"},
		{"timeout", Options{Endpoints: endpoints(sleeper.URL), Timeout: 200 * time.Millisecond}, CauseTimeout, "", "no response byte within the 200ms timeout"},
		{"500", Options{Endpoints: endpoints(failing.URL)}, CauseStatus, "5xx", "HTTP/1.1 500 Internal Server Error"},
		{"refused", Options{Endpoints: endpoints(closedPort(t))}, CauseConnRefused, "", "dial: connect: connection refused"},
		{"address", Options{Endpoints: endpoints("http://no-such-host.invalid/")}, CauseAddress, "", "no-such-host.invalid"},
		{"body", Options{Endpoints: endpoints(ok.URL), ExpectBody: regexp.MustCompile("goodbye")}, CauseBody, "2xx", "body does not match goodbye"},
		{"length", Options{Endpoints: endpoints(growing.URL), CheckLength: true}, CauseLength, "2xx", "body length 2, the first response's 1"},
		{"200 expected", Options{Endpoints: endpoints(ok.URL), ExpectStatus: []string{"201"}}, CauseStatus, "2xx", "HTTP/1.1 200 OK"},
		{"tls to a plain port", Options{Endpoints: endpoints(strings.Replace(plain.URL, "http:", "https:", 1))}, CauseTLS, "", "first record does not look like a TLS handshake"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.o.Requests, tt.o.Concurrency = 4, 1
			s := run(t, tt.o)
			want := uint64(4)
			if tt.cause == CauseLength {
				want = 3 // the first response sets the length
			}
			if got := s.ErrorsByCause[tt.cause]; got != want || s.Errors != want {
				t.Errorf("got %v (errors %d); want %s %d", s.ErrorsByCause, s.Errors, tt.cause, want)
			}
			if tt.class != "" && s.StatusClasses[tt.class] != 4 {
				t.Errorf("got classes %v; want %s 4", s.StatusClasses, tt.class)
			}
			checkTexts(t, s, tt.cause, tt.text)
			checkLatencyCount(t, s)
		})
	}
}

// checkTexts checks that cause's texts count every error of the cause,
// that the first contains want, and that no text names a port.
func checkTexts(t *testing.T, s *Summary, cause, want string) {
	t.Helper()
	texts := s.ErrorTexts[cause]
	var n uint64
	for _, x := range texts {
		n += x.Count
		if strings.Contains(x.Text, "127.0.0.1:") {
			t.Errorf("text %q names an address and port; want them stripped", x.Text)
		}
	}
	if n != s.ErrorsByCause[cause] {
		t.Errorf("texts %v count %d; want the %d errors of %s", texts, n, s.ErrorsByCause[cause], cause)
	}
	if len(texts) == 0 || !strings.Contains(texts[0].Text, want) {
		t.Errorf("texts of %s: %v; want the first to contain %q", cause, texts, want)
	}
}

// checkLatencyCount checks that every request with an answer or a
// timeout is a latency, timeouts censored at no less than the timeout,
// and that the others are counted as unanswered.
func checkLatencyCount(t *testing.T, s *Summary) {
	t.Helper()
	var answered uint64
	for _, n := range s.StatusClasses {
		answered += n
	}
	timeouts := s.ErrorsByCause[CauseTimeout]
	if s.Censored != timeouts {
		t.Errorf("censored %d; want the %d timeouts", s.Censored, timeouts)
	}
	if timeouts > 0 && s.Latency.Max < s.TimeoutSeconds {
		t.Errorf("max latency %v s with %d timeouts; want at least the %v s timeout", s.Latency.Max, timeouts, s.TimeoutSeconds)
	}
	if want := s.Requests - answered - timeouts; s.Unanswered != want {
		t.Errorf("unanswered %d; want %d (requests %d, answered %d, timeouts %d)", s.Unanswered, want, s.Requests, answered, timeouts)
	}
	if s.Requests > s.Unanswered && len(s.Percentiles) == 0 {
		t.Errorf("no percentiles with %d latencies", s.Requests-s.Unanswered)
	}
}

func TestConnectionsPerKeepAlive(t *testing.T) {
	tests := []struct {
		name      string
		keepAlive bool
		c         int
		requests  uint64
		wantConns int64
	}{
		{"off: one per request", false, 2, 30, 30},
		{"on: one per worker", true, 3, 60, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The first c requests wait until all c are in flight, so every
			// worker has started before the budget runs out (on a busy
			// machine a worker may otherwise start after the others have
			// sent everything).
			var arrived atomic.Int32
			gate := make(chan struct{})
			ts := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
				if arrived.Add(1) == int32(tt.c) {
					close(gate)
				}
				select {
				case <-gate:
				case <-time.After(10 * time.Second):
				}
				okHandler(w, r)
			})
			s := run(t, Options{Endpoints: endpoints(ts.URL), Concurrency: tt.c,
				Requests: tt.requests, KeepAlive: tt.keepAlive})
			if got := ts.conns.Load(); got != tt.wantConns || int64(s.Connections) != tt.wantConns {
				t.Errorf("got %d accepted, %d reported; want %d", got, s.Connections, tt.wantConns)
			}
		})
	}
}

func TestRequestShape(t *testing.T) {
	type seen struct{ method, ct, custom, body string }
	got := make(chan seen, 10)
	ts := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- seen{r.Method, r.Header.Get("Content-Type"), r.Header.Get("X-Soak"), string(b)}
	})
	run(t, Options{
		Endpoints:   []Endpoint{{Method: "POST", URL: ts.URL + "/form", Body: []byte("a=b&c=d")}},
		Headers:     []Header{{"X-Soak", "yes"}},
		ContentType: "application/x-www-form-urlencoded",
		Requests:    2, KeepAlive: true,
	})
	want := seen{"POST", "application/x-www-form-urlencoded", "yes", "a=b&c=d"}
	for range 2 {
		if s := <-got; s != want {
			t.Errorf("got %+v; want %+v", s, want)
		}
	}
}

func TestWeightedEndpoints(t *testing.T) {
	var a, b atomic.Int64
	ts := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/a" {
			a.Add(1)
		} else {
			b.Add(1)
		}
	})
	run(t, Options{Endpoints: []Endpoint{{URL: ts.URL + "/a", Weight: 9}, {URL: ts.URL + "/b"}},
		Requests: 1000, Concurrency: 2, KeepAlive: true})
	if a.Load() < 800 || b.Load() < 50 {
		t.Errorf("got /a %d, /b %d of 1000; want about 900 and 100", a.Load(), b.Load())
	}
}

func TestHTTPS(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(okHandler))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // expected handshake failures
	srv.StartTLS()
	t.Cleanup(srv.Close)
	tests := []struct {
		name     string
		insecure bool
		wantErr  string
	}{
		{"skip verify", true, ""},
		{"verify fails", false, CauseTLS},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := run(t, Options{Endpoints: endpoints(srv.URL), Requests: 5, KeepAlive: true, InsecureTLS: tt.insecure})
			if tt.wantErr == "" && (s.Successes != 5 || s.Connections != 1) {
				t.Errorf("got %d successes on %d connections; want 5 on 1 (%v)", s.Successes, s.Connections, s.ErrorsByCause)
			}
			if tt.wantErr != "" && s.ErrorsByCause[tt.wantErr] != 5 {
				t.Errorf("got %v; want %s 5", s.ErrorsByCause, tt.wantErr)
			}
		})
	}
}

func TestStopByDurationAndInterrupt(t *testing.T) {
	ts := newTestServer(t, okHandler)
	s := run(t, Options{Endpoints: endpoints(ts.URL), Duration: 300 * time.Millisecond, KeepAlive: true, Concurrency: 2})
	if s.StoppedBy != "duration" || s.Requests == 0 {
		t.Errorf("got stopped by %q after %d; want duration after > 0", s.StoppedBy, s.Requests)
	}
	e, err := New(Options{Endpoints: endpoints(ts.URL), Duration: time.Hour, KeepAlive: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go cancelWhen(cancel, func() bool { return e.Completed() >= 20 })
	s, err = e.Run(ctx)
	if err != nil || s.StoppedBy != "interrupt" || s.Requests < 20 {
		t.Errorf("got %v, stopped by %q after %d; want interrupt after >= 20", err, s.StoppedBy, s.Requests)
	}
	if s.Requests != e.Completed() {
		t.Errorf("got Summary.Requests %d, Completed() %d; want equal", s.Requests, e.Completed())
	}
}

func TestNewValidates(t *testing.T) {
	ep := endpoints("http://127.0.0.1:1/")
	tests := []struct {
		name string
		o    Options
		want string
	}{
		{"rate", Options{Endpoints: ep, Rate: -5, Requests: 1}, "load: rate must be > 0, got -5"},
		{"no stop", Options{Endpoints: ep}, "load: requests and duration are both 0: set at least one so the run stops by itself"},
		{"no endpoints", Options{Requests: 1}, "load: endpoints: need at least one target URL"},
		{"scheme", Options{Endpoints: endpoints("ftp://x/"), Requests: 1}, `load: endpoints[0].url: "ftp://x/": scheme "ftp" is not taken here: want an absolute http:// or https:// URL`},
		{"status", Options{Endpoints: ep, Requests: 1, ExpectStatus: []string{"2x"}}, `load: expect status[0]: "2x" is not a status code (100-599) or class like 2xx`},
		{"header", Options{Endpoints: ep, Requests: 1, Headers: []Header{{"A B", "c"}}}, `load: headers[0]: header name "A B": must be a non-empty token without spaces or colons`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.o)
			if err == nil || err.Error() != tt.want {
				t.Errorf("got %v; want %s", err, tt.want)
			}
		})
	}
}

func TestDefaults(t *testing.T) {
	o := withDefaults(Options{Endpoints: []Endpoint{{URL: "http://127.0.0.1/"}}, Rate: 1000, Timeout: time.Second})
	if o.Concurrency != MaxOpenLoopConcurrency || o.Interval != time.Second || o.Endpoints[0].Method != "GET" || o.Endpoints[0].Weight != 1 {
		t.Errorf("got %+v; want open-loop concurrency %d, 1s interval, GET, weight 1", o, MaxOpenLoopConcurrency)
	}
	if got := openLoopConcurrency(10, time.Second); got != 10 {
		t.Errorf("got %d; want 10", got)
	}
	// 1 is a choice, not "unset": an open loop of rate 300 with 1 in
	// flight keeps 1 (it used to get 256).
	if o := withDefaults(Options{Rate: 300, Concurrency: 1}); o.Concurrency != 1 {
		t.Errorf("rate 300, concurrency 1: got concurrency %d; want 1", o.Concurrency)
	}
	if o := withDefaults(Options{}); o.Concurrency != DefaultConcurrency {
		t.Errorf("closed loop, concurrency unset: got %d; want %d", o.Concurrency, DefaultConcurrency)
	}
}

func TestOnResult(t *testing.T) {
	ts := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/bad" {
			w.WriteHeader(http.StatusNotFound)
		}
	})
	var ok, bad, bytesIn atomic.Int64
	s := run(t, Options{
		Endpoints: []Endpoint{{URL: ts.URL + "/ok"}, {URL: ts.URL + "/bad"}},
		Requests:  200, Concurrency: 3, KeepAlive: true,
		OnResult: func(r Result) {
			switch {
			case r.Cause == "" && r.Status == 200:
				ok.Add(1)
			case r.Cause == CauseStatus && r.Status == 404:
				bad.Add(1)
			}
			bytesIn.Add(int64(r.BytesIn))
		},
	})
	if uint64(ok.Load()) != s.Successes || uint64(bad.Load()) != s.Errors || ok.Load()+bad.Load() != 200 {
		t.Errorf("got ok %d bad %d; want %d and %d summing to 200", ok.Load(), bad.Load(), s.Successes, s.Errors)
	}
	if uint64(bytesIn.Load()) != s.BytesIn {
		t.Errorf("got %d bytes in results; want %d as in the summary", bytesIn.Load(), s.BytesIn)
	}
}

func TestFramingAgainstRealServer(t *testing.T) {
	ts := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/chunked":
			fmt.Fprint(w, "part one ")
			w.(http.Flusher).Flush()
			fmt.Fprint(w, "part two")
		case "/empty":
			w.WriteHeader(http.StatusNoContent)
		case "/close":
			w.Header().Set("Connection", "close")
			fmt.Fprint(w, "bye")
		default:
			fmt.Fprint(w, strings.Repeat("y", 100))
		}
	})
	tests := []struct {
		method, path string
		wantConns    uint64
	}{
		{"GET", "/chunked", 1},
		{"HEAD", "/", 1},
		{"GET", "/empty", 1},
		{"GET", "/close", 10},
	}
	for _, tt := range tests {
		t.Run(tt.method+tt.path, func(t *testing.T) {
			s := run(t, Options{Endpoints: []Endpoint{{Method: tt.method, URL: ts.URL + tt.path}},
				Requests: 10, KeepAlive: true, CheckLength: true, ExpectBody: regexp.MustCompile(`^(part one part two|y*|bye)$`)})
			if s.Successes != 10 || s.Connections != tt.wantConns {
				t.Errorf("got %d successes on %d connections (%v); want 10 on %d", s.Successes, s.Connections, s.ErrorsByCause, tt.wantConns)
			}
		})
	}
}

// An open-loop run that has handed out all of its -n requests has no
// sends left to miss, even when a stop cuts its last requests short.
func TestOpenLoopStopAfterBudgetMissesNothing(t *testing.T) {
	release := make(chan struct{})
	ts := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	defer close(release)
	e, err := New(Options{Endpoints: endpoints(ts.URL), Rate: 200, Concurrency: 5, Requests: 5,
		Duration: time.Hour, Timeout: time.Hour, KeepAlive: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go cancelWhen(cancel, func() bool { return ts.requests.Load() >= 5 }, 100*time.Millisecond)
	s, err := e.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if s.MissedSends != 0 || s.Abandoned != 5 {
		t.Errorf("got %d missed, %d abandoned; want 0 missed, 5 abandoned (all 5 requests were sent)", s.MissedSends, s.Abandoned)
	}
}

// cancelWhen calls cancel once cond holds and then after more time has
// passed (the time under test: a schedule running on past its budget),
// or after 10 s, so that an engine that never gets there fails its test
// instead of hanging it.
func cancelWhen(cancel func(), cond func() bool, more ...time.Duration) {
	deadline := time.Now().Add(10 * time.Second)
	for !cond() && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	for _, d := range more {
		time.Sleep(d)
	}
	cancel()
}

// An answer that arrives together with the server's close (HTTP/1.0
// without a length: the close ends the body) is read whole by the event
// loop (-c 2 and more), not left to the timeout: the edge-triggered event
// that carried both is the last one.
func TestAnswerWithTheCloseIsRead(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 4096)
				if _, err := c.Read(buf); err != nil {
					return
				}
				// One write, then the close: both are there before
				// the client's first read.
				_, _ = c.Write([]byte("HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nhello"))
			}()
		}
	}()
	for _, conc := range []int{1, 4} {
		s := run(t, Options{Endpoints: endpoints("http://" + ln.Addr().String() + "/"),
			Concurrency: conc, Requests: 400, KeepAlive: false, Timeout: 5 * time.Second})
		if s.Errors != 0 || s.Successes != 400 {
			t.Errorf("-c %d: %d successes, errors %v; want 400 and none (an answer ended by the close is whole)",
				conc, s.Successes, s.ErrorsByCause)
		}
	}
}

// TestOpenConns holds the engine's count of its open connections to the
// server's own count of the connections it holds, while the load runs and
// after it: every dial is counted once and every close uncounts it, on
// each I/O path (TestPollerPath and TestLoopPath run it again). The
// connections EachConn lists are the server's, by their addresses.
func TestOpenConns(t *testing.T) {
	tests := []struct {
		name string
		o    Options
	}{
		{"closed loop, one worker", Options{Concurrency: 1, KeepAlive: true, Duration: 30 * time.Second}},
		{"closed loop, keep-alive", Options{Concurrency: 3, KeepAlive: true, Duration: 30 * time.Second}},
		{"closed loop, a connection per request", Options{Concurrency: 2, Duration: 30 * time.Second}},
		{"open loop", Options{Rate: 200, Concurrency: 4, KeepAlive: true, Duration: 30 * time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var e *Engine
			var open atomic.Int64 // the server's connections, accepted and not yet closed
			var mu sync.Mutex     // guards ends
			ends := map[string]bool{}
			srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				time.Sleep(time.Millisecond)
				okHandler(w, r)
			}))
			srv.Config.ConnState = func(c net.Conn, s http.ConnState) {
				k := c.RemoteAddr().String() + " → " + c.LocalAddr().String()
				mu.Lock()
				defer mu.Unlock()
				switch s {
				case http.StateNew:
					open.Add(1)
					ends[k] = true
				case http.StateClosed, http.StateHijacked:
					open.Add(-1)
					delete(ends, k)
				}
			}
			listed := func() (engine, server []string) {
				e.EachConn(func(l, r netip.AddrPort) { engine = append(engine, l.String()+" → "+r.String()) })
				mu.Lock()
				server = slices.Collect(maps.Keys(ends))
				mu.Unlock()
				slices.Sort(engine)
				slices.Sort(server)
				return engine, server
			}
			srv.Start()
			t.Cleanup(srv.Close)
			o := tt.o
			o.Endpoints = endpoints(srv.URL)
			var err error
			e, err = New(o)
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			go func() { _, err := e.Run(ctx); done <- err }()
			// Mid-run the two counts agree at some reading: a connection
			// between the client's dial and the server's accept, or its
			// close and the server's, is counted by one side only.
			agreed, last := false, ""
			for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline) && !agreed; time.Sleep(5 * time.Millisecond) {
				c, s := e.OpenConns(), open.Load()
				agreed = e.Completed() > 50 && c > 0 && int64(c) == s
				last = fmt.Sprintf("engine %d, server %d, after %d requests", c, s, e.Completed())
			}
			if !agreed {
				t.Errorf("open connections never agreed mid-run: last %s", last)
			}
			agreed = false
			for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline) && !agreed; time.Sleep(5 * time.Millisecond) {
				c, s := listed()
				agreed = len(c) > 0 && slices.Equal(c, s)
				last = fmt.Sprintf("engine %q, server %q", c, s)
			}
			if !agreed {
				t.Errorf("the connections EachConn lists never were the server's mid-run: last %s", last)
			}
			if c := e.OpenConns(); c > o.Concurrency {
				t.Errorf("engine counts %d open connections; want at most its %d workers", c, o.Concurrency)
			}
			if e.Closing() {
				t.Errorf("Closing mid-run; want false until the load ends")
			}
			cancel()
			if err := <-done; err != nil {
				t.Fatalf("Run: %v", err)
			}
			if c := e.OpenConns(); c != 0 {
				t.Errorf("after the run the engine counts %d open connections; want 0", c)
			}
			if c, _ := listed(); len(c) != 0 {
				t.Errorf("after the run EachConn lists %q; want none", c)
			}
			if !e.Closing() {
				t.Errorf("Closing after the run = false; want true")
			}
		})
	}
}
