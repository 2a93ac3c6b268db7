package runner_test

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/soakd/soakd/soak/load"
	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/runner"
	"github.com/soakd/soakd/soak/verdict"
)

// The zoo: soakd end to end against servers of its own under testdata/zoo,
// each misbehaving in a known way, in C (glibc malloc), Python, Node and a
// JVM.
// The C server's leak is exact in RSS (see testdata/zoo/httpd.c), so its
// per-request figure is checked to ±10 %.

// startZooC starts testdata/zoo/httpd.c, compiled once, with args.
func startZooC(t *testing.T, args ...string) (string, int) {
	t.Helper()
	return startServer(t, cBinary(t, "testdata/zoo/httpd.c"), append([]string{"--max-lifetime", "300"}, args...)...)
}

// startZooScript starts the script testdata/zoo/NAME with the interpreter.
func startZooScript(t *testing.T, interpreter, name string, args ...string) (string, int) {
	t.Helper()
	bin, err := exec.LookPath(interpreter)
	if err != nil {
		t.Fatalf("%s is needed for testdata/zoo/%s (.ci/run installs it): %v", interpreter, name, err)
	}
	script, err := filepath.Abs(filepath.Join("..", "..", "testdata", "zoo", name))
	if err != nil {
		t.Fatal(err)
	}
	return startServer(t, bin, append([]string{script, "--max-lifetime", "300"}, args...)...)
}

// zooRun is the shape of one zoo soak: c=1 keep-alive, closed loop, to
// 127.0.0.1, stopped by Requests or Duration, whichever comes first. A
// zero Interval leaves the sampling cadence to soakd.
type zooRun struct {
	Requests uint64
	Duration time.Duration
	Cooldown time.Duration
	Interval time.Duration
}

// zooSoak soaks the server at url (process pid) as r says, with soakd's
// defaults for the rest (warm-up, thresholds), logs the report, and fails
// the test on any load error.
func zooSoak(t *testing.T, url string, pid int, r zooRun) *model.Report {
	t.Helper()
	if !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("zoo servers listen on 127.0.0.1 only, got %s", url)
	}
	o := runner.Options{
		Load: load.Options{
			Endpoints:   []load.Endpoint{{URL: url}},
			Concurrency: 1,
			KeepAlive:   true,
			Timeout:     5 * time.Second,
			Requests:    r.Requests,
			Duration:    r.Duration,
		},
		Interval: r.Interval,
		Cooldown: r.Cooldown,
		OutDir:   t.TempDir(),
		Log:      zaptest.NewLogger(t),
	}
	o.Target.PID = pid
	o.Target.URL = url
	ctx, cancel := context.WithTimeout(context.Background(), r.Duration+r.Cooldown+time.Minute)
	defer cancel()
	rep, err := runner.Run(ctx, o)
	if err != nil {
		t.Fatalf("runner.Run: %v", err)
	}
	var b strings.Builder
	rep.WriteText(&b)
	t.Logf("report:\n%s", b.String())
	if rep.Load == nil || rep.Load.Errors > 0 {
		t.Fatalf("load summary %+v; want no errors", rep.Load)
	}
	return rep
}

// wantLeak checks that the resource is a leak, and when truth > 0 that its
// per-request growth is within tol (a fraction) of truth.
func wantLeak(t *testing.T, rep *model.Report, name string, truth, tol float64) verdict.Resource {
	t.Helper()
	r := rep.Resources[name]
	if r.Verdict != verdict.Leak {
		t.Errorf("%s verdict = %q; want leak (%s)", name, r.Verdict, r.Reason)
	}
	if truth > 0 {
		if lo, hi := (1-tol)*truth, (1+tol)*truth; r.PerRequest < lo || r.PerRequest > hi {
			t.Errorf("%s per_request = %.2f; want %.0f ± %.0f %% (%.2f–%.2f)", name, r.PerRequest, truth, 100*tol, lo, hi)
		}
	}
	if rep.Verdict != verdict.Leak {
		t.Errorf("overall verdict = %q; want leak", rep.Verdict)
	}
	return r
}

// released formats a resource's released_after_cooldown as its JSON does.
func released(r verdict.Resource) string {
	if r.ReleasedAfterCooldown == nil {
		return "null"
	}
	return fmt.Sprint(*r.ReleasedAfterCooldown)
}

// A fast server (~50k req/s at c=1) that leaks 120 B a request: 200 000
// requests take a few seconds, and soakd, sampling at its own cadence,
// must still find the leak and measure it.
func TestZooFastLeak(t *testing.T) {
	const leak = 120
	url, pid := startZooC(t, "--leak-bytes", fmt.Sprint(leak))
	rep := zooSoak(t, url, pid, zooRun{Requests: 200_000, Duration: 60 * time.Second, Cooldown: 2 * time.Second})
	rss := wantLeak(t, rep, "rss", leak, 0.10)
	if rss.ReleasedAfterCooldown == nil || *rss.ReleasedAfterCooldown {
		t.Errorf("released_after_cooldown = %s; want false", released(rss))
	}
}

// The same fast server leaking nothing: it allocates nothing per request,
// so its RSS does not move by one byte. Stable means the interval lies
// under the lowest floor in force: for RSS the horizon floor (64 MiB a day,
// 0.016 B/request at 50 000 req/s) is finer than a page over 200 000
// requests at full speed, so the run lasts 16 s (its soak about 10 s: a
// page over more than the 5.3 s that 64 MiB a day takes to grow by 4 KiB,
// at any throughput). An fd or thread count that
// never moved proves no less than one over the soak, and 1 000 a day is
// one every 86 s: a soak of seconds leaves them inconclusive, with advice
// naming the horizon floor, never a leak.
func TestZooFlatIsStable(t *testing.T) {
	url, pid := startZooC(t)
	rep := zooSoak(t, url, pid, zooRun{Requests: 5_000_000, Duration: 16 * time.Second})
	if r := rep.Resources["rss"]; r.Verdict != verdict.Stable {
		t.Errorf("rss verdict = %q; want stable (%s)", r.Verdict, r.Reason)
	}
	for _, name := range []string{"fds", "threads"} {
		r := rep.Resources[name]
		if r.Verdict != verdict.Stable && (r.Verdict != verdict.Inconclusive || !strings.Contains(r.Settle, "horizon floor")) {
			t.Errorf("%s verdict = %q, advice %q; want stable, or inconclusive with advice naming the horizon floor (%s)", name, r.Verdict, r.Settle, r.Reason)
		}
	}
	if rss := rep.Resources["rss"]; rss.Growth != 0 || rss.PerRequest != 0 {
		t.Errorf("rss growth = %.0f B, per_request = %g B; want 0 and 0 (the server allocates nothing)", rss.Growth, rss.PerRequest)
	}
	// A CPU leak called here is false too: a quiet CI run's cost per
	// request rose 11 → 22 µs as the suite's other package left (other
	// work 0.91 → 0.09 cores), which the contention test now reads
	// inconclusive (verdict's quietens-mid-soak models; bench/cpu-false.sh's
	// quiet shape).
	if rep.Verdict != verdict.OverallClean && rep.Verdict != verdict.OverallInconclusive {
		t.Errorf("overall verdict = %q; want clean or inconclusive (CPU: %s)", rep.Verdict, rep.CPU.Cost.Reason)
	}
}

// 8 B a request, half the per-request floor, over a million requests:
// 8 MB, which at the observed throughput is gigabytes a day. A slow leak
// matters by what it adds over time, so this is a leak.
func TestZooSlowLeakOverAMillionRequests(t *testing.T) {
	const leak = 8
	url, pid := startZooC(t, "--leak-bytes", fmt.Sprint(leak))
	// The duration bound is a safety net for a slow machine: the leak
	// is as plain after fewer requests, only its total is smaller (under
	// two busy loops 959 259 requests in 120 s gave 8.07 B, CI 7.78–8.5,
	// well inside the ±10 % asked).
	rep := zooSoak(t, url, pid, zooRun{Requests: 1_000_000, Duration: 60 * time.Second})
	t.Logf("%d requests in %.1f s", rep.Load.Requests, rep.Load.DurationSeconds)
	if rss := rep.Resources["rss"]; rss.Verdict != verdict.Leak && leak*float64(rep.Phases.SoakRequests) < rss.Start {
		// The transient rule: a leak that has not outgrown the process's
		// size at the load's start cannot be told from a runtime sizing
		// itself. Under bench/busy.sh beside two other suites (load 12–14)
		// the 60 s served 181 797 requests: 8 B each grew 1.38 MiB of a
		// 1.43 MiB process (the fit read 8.23 B, CI 7.55–8.78).
		t.Skipf("the machine was too busy: %d soak requests grew %.2f MiB at %d B each, under the process's %.2f MiB at the load's start (rss %s, %.2f B/request)",
			rep.Phases.SoakRequests, leak*float64(rep.Phases.SoakRequests)/(1<<20), leak, rss.Start/(1<<20), rss.Verdict, rss.PerRequest)
	}
	wantLeak(t, rep, "rss", leak, 0.10)
}

// A runtime that shrinks when idle: under load the server grows a 64 MiB
// scratch pool (within its first 4096 requests, well inside the warm-up)
// and leaks 200 B a request; 1 s after the load stops it gives the pool
// back (munmap). Its RSS then falls below the soak's start level, yet 200 B
// of every request are still held: released means back near the idle
// level before the load, not below the soak's start, so the leak is not
// hidden.
func TestZooShrinkWhenIdleStillLeaks(t *testing.T) {
	const leak = 200
	url, pid := startZooC(t, "--leak-bytes", fmt.Sprint(leak), "--mode", "shrink",
		"--pool-mib", "64", "--pool-every", "64", "--idle-ms", "1000")
	rep := zooSoak(t, url, pid, zooRun{Requests: 200_000, Duration: 60 * time.Second,
		Cooldown: 4 * time.Second, Interval: 100 * time.Millisecond})
	rss := wantLeak(t, rep, "rss", leak, 0.10)
	if rss.ReleasedAfterCooldown == nil || *rss.ReleasedAfterCooldown {
		t.Errorf("released_after_cooldown = %s; want false: the pool went back, the leak did not", released(rss))
	}
	// The server did shrink: without this the test would not be testing
	// the release rule.
	if rss.CooldownLevel > rss.End-32<<20 {
		t.Errorf("cool-down level %.1f MiB, soak end %.1f MiB; want the 64 MiB pool given back",
			rss.CooldownLevel/(1<<20), rss.End/(1<<20))
	}
}

// A Python http.server keeping 2 KiB a request in a list. CPython adds
// its object header and a list slot, so RSS grows a little more than the
// payload.
func TestZooPythonLeak(t *testing.T) {
	const leak = 2048
	url, pid := startZooScript(t, "python3", "leak.py", "--leak-bytes", fmt.Sprint(leak))
	rep := zooSoak(t, url, pid, zooRun{Requests: 40_000, Duration: 30 * time.Second,
		Cooldown: 2 * time.Second, Interval: 100 * time.Millisecond})
	rss := wantLeak(t, rep, "rss", 0, 0)
	if lo, hi := 0.9*leak, 1.5*leak; rss.PerRequest < lo || rss.PerRequest > hi {
		t.Errorf("rss per_request = %.0f B; want between %.0f and %.0f B for a %d B payload", rss.PerRequest, lo, hi, leak)
	}
}

// A Node server keeping a 4 KiB Buffer a request in an array. The
// Buffer's wrapper and backing-store bookkeeping add a few hundred bytes.
func TestZooNodeLeak(t *testing.T) {
	const leak = 4096
	url, pid := startZooScript(t, "node", "leak.js", "--leak-bytes", fmt.Sprint(leak))
	rep := zooSoak(t, url, pid, zooRun{Requests: 60_000, Duration: 30 * time.Second,
		Cooldown: 2 * time.Second, Interval: 100 * time.Millisecond})
	rss := wantLeak(t, rep, "rss", 0, 0)
	if lo, hi := 0.9*leak, 1.5*leak; rss.PerRequest < lo || rss.PerRequest > hi {
		t.Errorf("rss per_request = %.0f B; want between %.0f and %.0f B for a %d B payload", rss.PerRequest, lo, hi, leak)
	}
}

// A JVM (OpenJDK's com.sun.net.httpserver) without a leak: its RSS climbs
// by a few hundred MiB as the young generation is first touched, then
// stays flat. Never a leak. (A JVM that leaks is in testdata/verdicts: it
// needs about a million requests to decide, too long for the tests.)
func TestZooJVMFlatIsNotALeak(t *testing.T) {
	url, pid := startZooScript(t, "java", "Leak.java", "--leak-bytes", "0")
	const requests = 150_000
	rep := zooSoak(t, url, pid, zooRun{Requests: requests, Duration: 30 * time.Second})
	rss := rep.Resources["rss"]
	if rss.Verdict != verdict.Leak && rep.Verdict != verdict.Leak {
		return
	}
	if h := rep.CPU.HotThread; rep.Load.Requests < requests && h != nil && h.Wait > h.CPU {
		// The first touch follows the bytes allocated, so the requests
		// served: a JVM starved of cores is still climbing at the end.
		t.Skipf("the machine was too busy: the JVM served %d of %d requests in 30 s, its busiest thread waiting for a core %.0f %% of the time and running %.0f %%, so the young generation's first touch spans the soak (leaking: %v; %s)",
			rep.Load.Requests, requests, 100*h.Wait, 100*h.CPU, rep.Leaks(), rss.Reason)
	}
	t.Errorf("rss %s, overall %s (leaking: %v); want no leak (%s)", rss.Verdict, rep.Verdict, rep.Leaks(), rss.Reason)
}
