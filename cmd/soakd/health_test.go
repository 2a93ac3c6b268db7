package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/soakd/soakd/soak/verdict"
)

// A server that answers every request with 500 is failing: exit 5, the
// verdict "failing" in the JSON with the requests' health, and the text
// report's first line says how many failed, why and when.
func TestRunEveryRequest500IsFailing(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "broken", http.StatusInternalServerError)
	}))
	defer srv.Close()
	var stdout, stderr bytes.Buffer
	code := run([]string{"run", "--no-probe", "-q", "--json", "-n", "200", "-c", "2", srv.URL + "/"}, &stdout, &stderr)
	if code != exitFailing {
		t.Errorf("exit code = %d; want %d (failing); stderr %s", code, exitFailing, stderr.String())
	}
	var rep struct {
		Verdict  string
		Requests *verdict.Health
	}
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("report is not JSON: %v\n%s", err, stdout.String())
	}
	h := rep.Requests
	if rep.Verdict != verdict.OverallFailing || h == nil || h.Verdict != verdict.HealthFailing || h.Requests != 200 || h.Errors != 200 {
		t.Fatalf("verdict %s, requests %+v; want failing with 200 of 200 failed", rep.Verdict, h)
	}
	if len(h.Causes) == 0 || h.Causes[0].Cause != "status_mismatch" || h.Causes[0].Count != 200 {
		t.Errorf("causes = %+v; want status_mismatch 200 first", h.Causes)
	}

	stdout.Reset()
	code = run([]string{"run", "--no-probe", "-q", "-n", "100", srv.URL + "/"}, &stdout, &stderr)
	first, _, _ := strings.Cut(stdout.String(), "\n")
	if want := "Verdict: FAILING: 100 of 100 requests failed (100 %); status_mismatch 100"; code != exitFailing || !strings.HasPrefix(first, want) ||
		!strings.HasSuffix(first, "to the end") {
		t.Errorf("exit %d, first line %q; want %d and %q… to the end", code, first, exitFailing, want)
	}
}

// --max-error-rate set above the share that failed lets a run pass; the
// default 1 % does not.
func TestRunHealthyAndToleratedErrorsAreNotFailing(t *testing.T) {
	var n int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n++; n%10 == 0 { // one in ten; the handler runs one request at a time (-c 1)
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	var stdout, stderr bytes.Buffer
	args := []string{"run", "--no-probe", "-q", "-n", "200", "-c", "1", "--max-error-rate", "20%", "--max-window-error-rate", "50%", srv.URL + "/"}
	if code := run(args, &stdout, &stderr); code != exitOK || !strings.Contains(stdout.String(), "requests  ok") {
		t.Errorf("10 %% failed under --max-error-rate 20%%: exit %d; want %d and requests ok\n%s%s", code, exitOK, stdout.String(), stderr.String())
	}
	stdout.Reset()
	args = []string{"run", "--no-probe", "-q", "-n", "200", "-c", "1", srv.URL + "/"}
	if code := run(args, &stdout, &stderr); code != exitFailing {
		t.Errorf("10 %% failed under the default 1 %%: exit %d; want %d\n%s%s", code, exitFailing, stdout.String(), stderr.String())
	}
}

func TestHealthFlagErrorsNameTheFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--max-error-rate", "lots"}, `--max-error-rate: "lots": want a share above 0 and at most 100%`},
		{[]string{"--max-window-error-rate", "0%"}, "--max-window-error-rate:"},
		{[]string{"--max-error-rate", "150%"}, "--max-error-rate:"},
		{[]string{"--error-window", "0s"}, "--error-window: must be > 0"},
	} {
		_, _, err := parseRun(append(tc.args, "-n", "10", "http://a/"), &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("parseRun(%q) error = %v; want it to contain %q", tc.args, err, tc.want)
		}
	}
	o, _, err := parseRun([]string{"--max-error-rate", "0.5%", "--max-window-error-rate", "0.2", "--error-window", "30s", "-n", "10", "http://a/"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if h := o.Health; h.MaxRate != 0.005 || h.MaxWindowRate != 0.2 || h.Window != 30 {
		t.Errorf("health thresholds = %+v; want 0.005, 0.2, 30 s", h)
	}
}

// soakd analyze judges the requests of a samples.csv too: failing wins
// over a leak (exit 5), and the first line names the leak beside it.
func TestAnalyzeJudgesTheRequests(t *testing.T) {
	code, out, stderr := analyzeArgs(t, samplesFileWithErrors(t, 1024, 0.03))
	first, _, _ := strings.Cut(out, "\n")
	if code != exitFailing || !strings.HasPrefix(first, "Verdict: FAILING: ") || !strings.HasSuffix(first, "also leaking: rss") {
		t.Errorf("exit %d, first line %q; want %d, failing and also leaking: rss\n%s", code, first, exitFailing, stderr)
	}
}

// A server whose error rate rises from 0 to 20 % over the load is failing
// and degrading: the trend finds the rise from the run's own samples. The
// rise follows the requests, not the clock, and a closed loop is bounded
// by its request count, so a slow machine takes longer instead of serving
// fewer requests (the run that failed at 4 s served 337): the duration is
// only a cap, and a machine that served fewer by then declines, saying so.
func TestRunRisingErrorRateIsDegrading(t *testing.T) {
	const n = 4000
	var mu sync.Mutex
	rng := rand.New(rand.NewPCG(1, 2))
	served := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		fail := rng.Float64() < 0.2*float64(served)/n
		served++
		mu.Unlock()
		// a millisecond a request holds the load to at least 2 s, 200
		// samples at 10 ms, however fast the machine: served in 0.1 s, the
		// load left the trend 11-15 bins and p = 0.005-0.014
		time.Sleep(time.Millisecond)
		if fail {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	var stdout, stderr bytes.Buffer
	code := run([]string{"run", "--no-probe", "-q", "--json", "-c", "2", "-n", fmt.Sprint(n), "-d", "30s", "--interval", "10ms", srv.URL + "/"}, &stdout, &stderr)
	var rep struct {
		Verdict  string
		Requests *verdict.Health
	}
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil || rep.Requests == nil {
		t.Fatalf("report: %v\n%s%s", err, stdout.String(), stderr.String())
	}
	h := rep.Requests
	t.Logf("%d requests: %s", h.Requests, h.Reason)
	if h.Requests < n {
		t.Skipf("the machine served %d of the %d requests within the 30 s cap: %s", h.Requests, n, h.Reason)
	}
	if code != exitFailing || h.Trend == nil || !h.Trend.Rising || !slices.Contains(h.Failing, verdict.FailingRising) {
		t.Errorf("exit %d, trend %+v, failing by %v; want %d and rising", code, h.Trend, h.Failing, exitFailing)
	}
}
