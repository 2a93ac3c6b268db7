package abrun

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/soakd/soakd/soak/compare"
	"github.com/soakd/soakd/soak/load"

	"go.uber.org/zap/zaptest"
)

var (
	targetOnce sync.Once
	targetBin  string
	targetErr  error
)

// targetBinary builds testdata/target once per test binary.
func targetBinary(t *testing.T) string {
	t.Helper()
	targetOnce.Do(func() {
		dir, err := os.MkdirTemp("", "abrun-target")
		if err != nil {
			targetErr = err
			return
		}
		targetBin = filepath.Join(dir, "target")
		out, err := exec.Command("go", "build", "-o", targetBin, "github.com/soakd/soakd/testdata/target").CombinedOutput()
		if err != nil {
			targetErr = err
			t.Logf("%s", out)
		}
	})
	if targetErr != nil {
		t.Fatalf("go build testdata/target: %v", targetErr)
	}
	return targetBin
}

// abRun runs an A/B soak of two commands of the test target.
func abRun(t *testing.T, a, b string, o Options) *Result {
	t.Helper()
	bin := targetBinary(t)
	o.A.Exec = bin + " --listen 127.0.0.1:{port} " + a
	o.B.Exec = bin + " --listen 127.0.0.1:{port} " + b
	o.Log = zaptest.NewLogger(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := Run(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s after %d pairs, %d requests (A %d, B %d), %.1fs, %d looks, stopped by %s",
		res.Verdict, res.Pairs, res.Requests, res.RequestsA, res.RequestsB, res.Seconds, res.Looks, res.StoppedBy)
	for _, name := range res.Names() {
		m, c := res.Metrics[name], res.Metrics[name].Cells()
		t.Logf("  %-16s %-12s old %s new %s diff %s [%s] margin %s, at %d pairs", name, m.Verdict, c.Old, c.New, c.Difference, c.CI95, c.Margin, res.DecidedAt[name])
	}
	return res
}

// e2eOptions is a short A/B run: blocks of 1000 requests from 4
// connections, a look after every pair, at most 400 000 requests or 60 s.
func e2eOptions() Options {
	return Options{Requests: 400000, Duration: 60 * time.Second, BlockRequests: 1000, LookEvery: 1,
		Load: load.Options{Concurrency: 4, KeepAlive: true}}
}

// TestABFindsLeak: a clean target against one that leaks 400 B/request
// reads regressed on rss, and the run stops as soon as it is decided. The
// leaky build's own fit must read a leak first (heldBack), which on a
// short soak means its RSS passed its level at the soak's start (the
// transient rule): 400 B/request gets there in about a third of the
// requests that 120 B/request needs (about 150 000 a build).
func TestABFindsLeak(t *testing.T) {
	const leakBuildRequests = 50000 // about a third of the 150 000 that 120 B/request needs
	res := abRun(t, "", "--leak-bytes 400", e2eOptions())
	if rss := res.Metrics["rss_per_request"]; rss.Verdict != compare.Regressed && res.StoppedBy == "duration" && res.RequestsB < leakBuildRequests {
		// Under bench/busy.sh at load 16 the 60 s served 20 000 requests
		// a build (882–1682 req/s): the leaky build's RSS had not passed
		// its level at the soak's start, so its own fit could not read a
		// leak, whatever the difference (386 B/request, CI 356–417).
		t.Skipf("the machine was too busy: build B served %d requests in %.0f s, fewer than the %d its leak needs to outgrow its start; rss_per_request %s", res.RequestsB, res.Seconds, leakBuildRequests, rss.Verdict)
	}
	if rss := res.Metrics["rss_per_request"]; rss.Verdict != compare.Regressed {
		t.Errorf("rss_per_request: %s; want regressed", rss.Verdict)
	}
	if res.Verdict != compare.Regressed || !res.Decided || res.StoppedBy != "decided" {
		t.Errorf("verdict %s, decided %v, stopped by %s; want regressed, decided", res.Verdict, res.Decided, res.StoppedBy)
	}
	if res.RequestsA != res.RequestsB || res.Blocks != 2*(res.Pairs+1) {
		t.Errorf("A %d requests, B %d, %d blocks for %d pairs; want equal shares, 2 blocks a pair and a warm-up pair",
			res.RequestsA, res.RequestsB, res.Blocks, res.Pairs)
	}
}

// TestABCleanTwice: the same clean target twice reads no regression, and
// rss reads same or inconclusive (bench/README.md records one false
// 'improved' on rss in a 10-minute run: the Go heap's early sizing). At 40 000 requests a build the Go heap's
// sawtooth leaves rss's interval about ±25 B/request, wider than the
// 16 B margin: deciding same takes about 4 times longer, which
// bench/ab-e2e.sh runs (see bench/README.md).
func TestABCleanTwice(t *testing.T) {
	o := e2eOptions()
	o.Requests = 40000
	res := abRun(t, "", "", o)
	for name, m := range res.Metrics {
		if m.Verdict == compare.Regressed {
			t.Errorf("%s: regressed, %+.3g in [%.3g, %.3g]; want no regression", name, m.Difference, m.CI95[0], m.CI95[1])
		}
	}
	if rss := res.Metrics["rss_per_request"]; rss.Verdict != compare.Same && rss.Verdict != compare.Inconclusive {
		t.Errorf("rss_per_request: %s, %+.3g in [%.3g, %.3g]; want same or inconclusive", rss.Verdict, rss.Difference, rss.CI95[0], rss.CI95[1])
	}
	if res.Verdict == compare.Regressed || res.StoppedBy == "a_died" || res.StoppedBy == "b_died" {
		t.Errorf("verdict %s, stopped by %s; want same or inconclusive", res.Verdict, res.StoppedBy)
	}
}

func TestABOptionErrors(t *testing.T) {
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{A: Target{Exec: "x"}, B: Target{Exec: "y {port}"}}, "a: the command must hold {port}"},
		{Options{A: Target{Exec: "x {port}"}}, ""},
		{Options{A: Target{URL: "ftp://x"}, B: Target{URL: "http://127.0.0.1:1"}}, "a-url"},
	} {
		_, err := Run(context.Background(), c.o)
		if err == nil || c.want != "" && !strings.Contains(err.Error(), c.want) {
			t.Errorf("Run(%+v) = %v; want an error with %q", c.o, err, c.want)
		}
	}
}
