package runner_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/soakd/soakd/soak/load"
	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/runner"
	"github.com/soakd/soakd/soak/verdict"
)

// untilRate is the until-decided tests' open-loop rate. At full speed
// (9 000–17 000 req/s under -race) the client and the server burned both
// cores for the whole run beside the rest of the package: the two tests
// took 265 s of CPU, 46 s at this rate. The looks' mechanics do not need
// the speed: a flat count's horizon floor is in units per day at the
// soak's throughput, so the soak it takes to decide is the same at any
// rate (the look at 92 s decided fds, threads and close_wait at both),
// and a leak of 2 KiB a request is 1 MiB a second here.
const untilRate = 500

// untilSoak soaks the C server at url (testdata/zoo/httpd.c: its RSS
// moves by whole mallocs, no runtime's wander) until decided, for at most
// 200 s of load by one keep-alive client at untilRate (its one connection
// never reopens, so the fds net of the load's stay flat), with the looks
// allowed to decide from their first (the shipped minimum soak,
// verdict.MinDecideSeconds, is for the study's slow wander; the mechanics
// are the same). A flat count (fds, threads, close_wait) is decided once
// one of it over the soak's requests is under the horizon floor, after
// 86.4 s of soak at any rate:
// the looks at 92, 115 and 144 s of the 180 s soak decide it (a
// 240 s run, as before, added only time at its most: a busy machine that
// misses a look ends at the most either way, decided there).
func untilSoak(t *testing.T, url string, pid int) *model.Report {
	t.Helper()
	o := runner.Options{
		Load: load.Options{Rate: untilRate, Concurrency: 1, Duration: 200 * time.Second, KeepAlive: true,
			Timeout: 5 * time.Second, Endpoints: []load.Endpoint{{URL: url}}},
		Interval:     250 * time.Millisecond,
		OutDir:       t.TempDir(),
		Log:          zaptest.NewLogger(t),
		UntilDecided: true,
		UntilMinSoak: -1,
	}
	o.Target.PID, o.Target.URL = pid, url
	o.Sampler.SmapsInterval = time.Second
	// This server's fd count moved by a few over millions of requests
	// (two runs read intervals of −7 to +1 fds over their soaks, cause
	// not looked into): against 1 000 fds a day that stays "wide" for
	// minutes. The test is of the looks, not of fds: floors about 100
	// times coarser (100 000 a day, the limit 10 times over or within an
	// hour) decide it within the soak.
	o.FDs = verdict.FDThresholds
	o.FDs.HorizonGrowth, o.FDs.HorizonLimitShare, o.FDs.Exhaustion = 100000, 10, 3600
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	rep, err := runner.Run(ctx, o)
	if err != nil {
		t.Fatalf("runner.Run: %v", err)
	}
	var b strings.Builder
	rep.WriteText(&b)
	t.Logf("report:\n%s", b.String())
	if rep.Until == nil {
		t.Fatal("report has no until_decided")
	}
	return rep
}

// TestEndToEndUntilDecidedCleanStops: a clean target soaked until decided
// stops by "decided" before its most, every part decided, and the report
// is the deciding look's analysis, at its spent level. On a busy machine
// the CPU cost per request can miss one of the few looks after 86 s of
// soak (its interval's upper end at 25–31 % of a rise where 25 % is the
// bar; 2 of 4 runs here): the run then ends at its most, decided there
// or with only the CPU missing, and the test says so.
func TestEndToEndUntilDecidedCleanStops(t *testing.T) {
	t.Parallel()
	url, pid := startZooC(t)
	rep := untilSoak(t, url, pid)
	u := rep.Until
	if rep.Load.StoppedBy != load.StopDecided {
		if !u.Decided {
			skipIfCPUOnly(t, rep)
			t.Fatalf("stopped by %q, undecided; want decided (missing: %v)", rep.Load.StoppedBy, u.Missing)
		}
		t.Logf("every part decided at the most (the CPU cost missed a look in between): not stopped early")
	} else if u.Looks < verdict.ConfirmLooks || u.Looks >= u.PlannedLooks {
		t.Errorf("looks %d of %d; want at least %d and fewer than planned", u.Looks, u.PlannedLooks, verdict.ConfirmLooks)
	}
	if !(u.Share > 0 && u.Share < 1) || u.Level <= verdict.DefaultLevel {
		t.Errorf("share %g, level %g; want a look's share of the budget, its level above 95 %%", u.Share, u.Level)
	}
	if rss := rep.Resources["rss"]; rss.Level != u.Level {
		t.Errorf("rss analysed at %g; want the deciding look's level %g", rss.Level, u.Level)
	}
	if rep.Verdict == verdict.Leak {
		t.Errorf("verdict leak on a clean target")
	}
}

// TestEndToEndUntilDecidedLeakStops: a server leaking 2 KiB a request,
// soaked until decided, is a leak, and every part is decided: the run
// stopped by "decided", or its last look (the most) decided them.
func TestEndToEndUntilDecidedLeakStops(t *testing.T) {
	t.Parallel()
	url, pid := startZooC(t, "--leak-bytes", "2048")
	rep := untilSoak(t, url, pid)
	if rss := rep.Resources["rss"]; rss.Verdict != verdict.Leak || rep.Verdict != verdict.Leak {
		t.Errorf("rss verdict %q, run %q; want leak (%s)", rss.Verdict, rep.Verdict, rss.Reason)
	}
	// Every part decided, the run stops three looks later; on a busy
	// machine the CPU cost of a server whose heap grows can miss one of
	// the few looks a 4-minute run has after 86 s of soak, and the run
	// then ends at its most, decided there.
	if rep.Load.StoppedBy != load.StopDecided && !rep.Until.Decided {
		skipIfCPUOnly(t, rep)
		t.Errorf("stopped by %q, undecided; want decided (missing: %v)", rep.Load.StoppedBy, rep.Until.Missing)
	}
	t.Logf("stopped by %s, decided %v", rep.Load.StoppedBy, rep.Until.Decided)
}

// skipIfCPUOnly declines a run that reached its most with only the CPU
// verdict undecided: the cost per request rose with the machine's other
// work (contention), or its interval stayed too wide to rule out a 25 %
// rise over the soak, as it does on a machine whose other work comes and
// goes (a leaking server's own cost, 2 KiB of heap a request, also moves
// a little). Both are rightly not decided, and a shared machine's other
// work is not the test's to control; the looks' stop is what the test is
// about.
func skipIfCPUOnly(t *testing.T, rep *model.Report) {
	t.Helper()
	m := rep.Until.Missing
	if rep.Load.StoppedBy == load.StopDecided || len(m) == 0 {
		return
	}
	for _, s := range m {
		if !strings.HasPrefix(s, "cpu: ") {
			return
		}
	}
	t.Skipf("only the CPU verdict was undecided at the most: %v", m)
}
