package load

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// A run against a server that fails in several ways reports each failure
// with its text, counts its timeouts in the latency, and counts requests
// per endpoint, in the text report and the JSON.
func TestReportNamesFailures(t *testing.T) {
	ts := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/missing":
			http.NotFound(w, r)
		case "/hang":
			select {
			case <-time.After(10 * time.Second):
			case <-r.Context().Done():
			}
		default:
			okHandler(w, r)
		}
	})
	eps := []Endpoint{{URL: ts.URL + "/ok"}, {URL: ts.URL + "/missing?key=secret"}, {URL: ts.URL + "/hang"}}
	s := run(t, Options{Endpoints: eps, Requests: 30, Concurrency: 2, KeepAlive: true, Timeout: 200 * time.Millisecond})
	var buf bytes.Buffer
	if err := s.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"Latencies censored at the 200 ms timeout: ",
		"status_mismatch", "HTTP/1.1 404 Not Found",
		"no response byte within the 200ms timeout",
		"Requests by endpoint:",
		"GET " + ts.URL + "/missing?key=REDACTED",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "secret") {
		t.Errorf("report shows a query value:\n%s", out)
	}
	var sum uint64
	for _, ep := range s.Endpoints {
		sum += ep.Requests
	}
	if sum != s.Requests || len(s.Endpoints) != 3 {
		t.Errorf("endpoints %v add up to %d; want 3 adding up to %d", s.Endpoints, sum, s.Requests)
	}
	checkLatencyCount(t, s)
	js, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"error_texts":{`, `"censored":`, `"endpoints":[`, `"text":"HTTP/1.1 404 Not Found"`} {
		if !bytes.Contains(js, []byte(key)) {
			t.Errorf("JSON lacks %s: %s", key, js)
		}
	}
}

// While no request completes, progress lines say how many wait, for how
// long, and how many bytes came.
func TestProgressWhileWaiting(t *testing.T) {
	url := rawServer(t, stalled)
	var buf bytes.Buffer
	var ivs []Interval
	progress := NewProgress(&buf, 100)
	o := Options{Endpoints: endpoints(url), Requests: 100, Duration: time.Second, Timeout: time.Minute,
		Interval: 100 * time.Millisecond, OnInterval: func(iv Interval) { ivs = append(ivs, iv); progress(iv) }}
	s := run(t, o)
	if s.Requests != 0 || s.Abandoned != 1 {
		t.Fatalf("got %d requests, %d abandoned; want 0 and 1", s.Requests, s.Abandoned)
	}
	waited := false
	for _, iv := range ivs {
		waited = waited || (iv.InFlight == 1 && iv.Waiting > 0 && iv.Count == 0)
	}
	if !waited {
		t.Errorf("no interval with 1 request waiting: %+v", ivs)
	}
	if !strings.Contains(buf.String(), " 1 in flight, waiting ") || !strings.Contains(buf.String(), ", 0 bytes received") {
		t.Errorf("progress does not show the waiting request:\n%s", buf.String())
	}
}

func TestErrText(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"read tcp 127.0.0.1:41234->127.0.0.1:8080: read: connection reset by peer", "read tcp: read: connection reset by peer"},
		{"dial tcp [::1]:8080: connect: connection refused", "dial tcp: connect: connection refused"},
		{"tls: first record does not look like a TLS handshake", "tls: first record does not look like a TLS handshake"},
	} {
		if got := stripAddrs(tt.in); got != tt.want {
			t.Errorf("stripAddrs(%q) = %q; want %q", tt.in, got, tt.want)
		}
	}
	if got := cleanText("HTTP/1.1 500 \x00bad\x1b[31m", nil); got != "HTTP/1.1 500 ?bad?[31m" {
		t.Errorf("cleanText = %q; want control characters replaced", got)
	}
}

// In open loop a timed-out request counts at its time from the intended
// send, not from when a busy worker sent it: never less than the timeout,
// as the latency histogram reads it (2 significant digits: 200.0–200.7 ms
// read as 199.68 ms, the low edge of their bucket; a busy machine's run
// read Min 0.19968).
func TestOpenLoopTimeoutsCount(t *testing.T) {
	url := rawServer(t, stalled)
	s := run(t, Options{Endpoints: endpoints(url), Rate: 20, Concurrency: 2, Requests: 6,
		Duration: time.Minute, Timeout: 200 * time.Millisecond})
	if s.Censored == 0 || s.Censored != s.ErrorsByCause[CauseTimeout] {
		t.Fatalf("censored %d, timeouts %v; want the same, > 0", s.Censored, s.ErrorsByCause)
	}
	h := newHist()
	if err := h.RecordValue(200_000); err != nil {
		t.Fatal(err)
	}
	if floor := usToSec(h.Min()); s.Latency.Min < floor || len(s.Percentiles) == 0 {
		t.Errorf("latency %+v; want every latency at least the 200 ms timeout (%g s as the histogram reads it)", s.Latency, floor)
	}
	checkLatencyCount(t, s)
}
