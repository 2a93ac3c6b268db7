package runner_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/soakd/soakd/probes"
	"github.com/soakd/soakd/soak/load"
	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/runner"
	"github.com/soakd/soakd/soak/verdict"
)

// startNginxProxy runs nginx (a master and one worker, in the
// foreground) proxy_passing every request to backend ("127.0.0.1:PORT")
// with its default HTTP/1.0: a connection to the backend per request,
// opened by the worker when the request comes.
func startNginxProxy(t *testing.T, backend string) (string, int) {
	return startNginxWith(t, "location / { proxy_pass http://"+backend+"; }")
}

// proxiedLeak starts testdata/zoo/leak.py (leak bytes a request) behind
// nginx and soaks nginx by its PID, c=1 keep-alive, for n requests or d
// with a warm-up of that share of it, with follow's --follow-upstreams. nginx holds a
// connection to python3 only while a request is in flight, and a look
// for upstreams (at every sample in the warm-up, every 500 ms in the
// soak) catches one only while it is open, so the warm-up gives it many.
func proxiedLeak(t *testing.T, leak int, n uint64, d time.Duration, warmup float64, follow bool) (*model.Report, int) {
	t.Helper()
	backURL, backPID := startZooScript(t, "python3", "leak.py", "--leak-bytes", fmt.Sprint(leak))
	url, pid := startNginxProxy(t, mustHost(t, backURL))
	o := runner.Options{
		Load: load.Options{
			Endpoints: []load.Endpoint{{URL: url}}, Concurrency: 1, KeepAlive: true,
			Timeout: 5 * time.Second, Duration: d, Requests: n,
		},
		Interval:        100 * time.Millisecond,
		Baseline:        time.Second,
		Warmup:          runner.Warmup{Fraction: warmup},
		Sampler:         probes.SamplerOptions{SmapsInterval: time.Second},
		FollowUpstreams: follow,
		OutDir:          t.TempDir(),
		Log:             zaptest.NewLogger(t),
	}
	o.Target.PID, o.Target.URL = pid, url
	rep := runSoak(t, o)
	if len(rep.Target.Upstreams) != 1 {
		t.Fatalf("upstreams %+v; want python3's alone", rep.Target.Upstreams)
	}
	u := rep.Target.Upstreams[0]
	if u.PID != int32(backPID) || u.Name != "python3" || u.Addr != mustHost(t, backURL) || u.Via != "nginx" {
		t.Errorf("upstream %+v; want %s served by pid %d (python3), via nginx", u, mustHost(t, backURL), backPID)
	}
	return rep, backPID
}

func reportText(t *testing.T, rep *model.Report) string {
	t.Helper()
	var b strings.Builder
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestEndToEndProxyUpstreamIsNamed: nginx soaked without
// --follow-upstreams forwards to a python3 outside its tree; the report
// names it, says it is not sampled and what to do.
func TestEndToEndProxyUpstreamIsNamed(t *testing.T) {
	t.Parallel()
	rep, backPID := proxiedLeak(t, 2048, 0, 6*time.Second, 0.5, false)
	u := rep.Target.Upstreams[0]
	if u.Followed {
		t.Errorf("upstream followed without --follow-upstreams: %+v", u)
	}
	want := fmt.Sprintf("WARNING: nginx forwards to %s, served by pid %d (python3), which is not sampled: add --pid %d or soak it directly", u.Addr, backPID, backPID)
	if txt := reportText(t, rep); !strings.Contains(txt, want) {
		t.Errorf("report does not say %q:\n%s", want, txt)
	}
}

// TestEndToEndProxyFollowsUpstream: with --follow-upstreams the python3
// behind nginx joins the sampled set in the warm-up, and its leak is the
// run's. It keeps 128 KiB a request, at most 3000 requests (375 MiB): the
// growth over the soak must outdo python3's size at the load's start, the
// warm-up's growth included, for the transient rule, which judges rss,
// pss and uss alike. Beside bench/busy.sh, soaks with a 30 % warm-up
// read "not yet twice its size": at 16 and 64 KiB a request they served
// 2031 and 1366 requests, and at 128 KiB one served 460 in its 7 s of
// warm-up and 444 in its 14 s of soak, the machine's other work rising.
// A 10 % warm-up leaves the soak nine tenths of the run; the looks for
// upstreams, at every sample before the soak, have 2 s. Quiet, the
// requests end it in about 4 s.
func TestEndToEndProxyFollowsUpstream(t *testing.T) {
	t.Parallel()
	const leak = 128 << 10
	rep, backPID := proxiedLeak(t, leak, 3000, 20*time.Second, 0.1, true)
	u := rep.Target.Upstreams[0]
	if !u.Followed || u.SeenPhase == "soak" {
		t.Errorf("upstream %+v; want followed, seen before the soak", u)
	}
	if rep.Verdict != verdict.Leak {
		t.Errorf("verdict %s; want leak: python3 keeps %d B a request", rep.Verdict, leak)
	}
	if rss := rep.Resources["rss"]; rss.PerRequest < 0.9*leak || rss.PerRequest > 1.5*leak {
		t.Errorf("rss per_request = %.0f B; want between %.0f and %.0f B for python3's %d B payload (%s)", rss.PerRequest, 0.9*leak, 1.5*leak, leak, rss.Reason)
	}
	// The report names python3 as the process that grew, and the hint on
	// where to look is Python's, not the root nginx's (glibc malloc).
	if len(rep.Grew) != 1 || rep.Grew[0].PID != int32(backPID) || rep.Grew[0].Name != "python3" || rep.Grew[0].Root {
		t.Fatalf("grew %+v; want pid %d (python3)", rep.Grew, backPID)
	}
	if g := rep.Grew[0]; g.Growth < 0.9*g.TreeGrowth {
		t.Errorf("%s; want python3 to carry nearly all of it (nginx holds its level)", g)
	}
	txt := reportText(t, rep)
	wantHint := fmt.Sprintf("where: the growth is in pid %d (python3), not the root pid %d (nginx): ", backPID, pid(rep))
	if !strings.Contains(txt, fmt.Sprintf("rss grew in pid %d (python3): +", backPID)) || !strings.Contains(txt, wantHint) ||
		!strings.Contains(txt, "tracemalloc") || strings.Contains(txt, "jemalloc") {
		t.Errorf("report does not name python3 as the process that grew, with the Python hint %q:\n%s", wantHint, txt)
	}
}

// pid is the sampled root's PID, from the report's target description.
func pid(rep *model.Report) int {
	var p int
	fmt.Sscanf(rep.Target.Description, "pid %d", &p)
	return p
}
