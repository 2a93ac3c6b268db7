package model

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/soakd/soakd/probes"
	"github.com/soakd/soakd/soak/verdict"
)

func TestTextReportOpensWithTheVerdictBlock(t *testing.T) {
	ttl := 3600.0
	rep := &Report{
		Verdict: "leak",
		Resources: map[string]verdict.Resource{
			"rss": {Verdict: "leak", Unit: "bytes", Reason: "rss +101 B/request", Limit: 1 << 30, TimeToExhaustionSeconds: &ttl},
			"fds": {Verdict: "stable", Unit: "fds", Reason: "fds stable", Limit: 1024},
		},
		CPU: verdict.CPU{Bound: "cpu", Reason: "CPU-bound: busy 94 %"},
	}
	var b strings.Builder
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	block, _, _ := strings.Cut(b.String(), "\n\n")
	want := "Verdict: LEAK\n" +
		"  rss  leak    rss +101 B/request\n" +
		"  fds  stable  fds stable\n" +
		"  cpu  cpu     CPU-bound: busy 94 %\n" +
		"  rss reaches its limit (1 GiB) in 1.0 h at this rate\n" +
		"  fds never reaches its limit (1024 fds): not growing"
	if block != want {
		t.Errorf("verdict block:\n%s\nwant:\n%s", block, want)
	}
}

func TestTextReportSaysHowItSampled(t *testing.T) {
	rep := &Report{Verdict: "clean", Target: TargetInfo{Probed: true},
		Sampling: &Sampling{Auto: true, IntervalSeconds: 0.02043, MinIntervalSeconds: 0.0127, MaxIntervalSeconds: 0.05,
			ProbeCostSeconds: 85e-6, CPUShare: 0.0042}}
	var b strings.Builder
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	want := "Sampling:          every 20.4ms (paced to the run, 12.7ms to 50ms under load); 85µs of soakd's CPU per sample, 0.42 % of a core in all"
	if !strings.Contains(b.String(), want) {
		t.Errorf("text report lacks %q:\n%s", want, b.String())
	}
}

// TestDeathIsTheFirstFinding: a report whose target died says so on its
// first line, before the verdict, with the time, the exit and the grace.
func TestDeathIsTheFirstFinding(t *testing.T) {
	at := time.Date(2026, 11, 30, 3, 14, 0, 0, time.UTC)
	rep := &Report{Verdict: "inconclusive", Target: TargetInfo{Probed: true, Description: "pid 7 (app)",
		DiedAt: &at, DeadGraceSeconds: 10, Exit: &probes.ExitInfo{Time: at, Code: -1}}}
	var b bytes.Buffer
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(b.String(), "\n")
	if !strings.HasPrefix(first, "TARGET DIED: The target died at 2026-11-30T03:14:00Z") || !strings.Contains(first, "10 s") {
		t.Errorf("first line %q; want the death, its time and the grace", first)
	}
	if !rep.TargetDied() || (&Report{}).TargetDied() {
		t.Errorf("TargetDied: wrong")
	}
}

// A failing run's first line says how many requests failed, why and when,
// and names a leak found beside it; a run that is not failing lists its
// requests' verdict in the block.
func TestTextReportOpensWithFailingRequests(t *testing.T) {
	h := &verdict.Health{Verdict: verdict.HealthFailing, Requests: 100, Errors: 100,
		Reason: `100 of 100 requests failed (100 %); status_mismatch 100 (e.g. "HTTP/1.1 500 Internal Server Error"); errors from 0 s to the end`}
	rep := &Report{Verdict: verdict.OverallFailing, Requests: h,
		Resources: map[string]verdict.Resource{"rss": {Verdict: "leak", Unit: "bytes", Reason: "rss +101 B/request"}}}
	var b strings.Builder
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(b.String(), "\n")
	want := `Verdict: FAILING: 100 of 100 requests failed (100 %); status_mismatch 100 (e.g. "HTTP/1.1 500 Internal Server Error"); errors from 0 s to the end; also leaking: rss`
	if first != want {
		t.Errorf("first line:\n%s\nwant:\n%s", first, want)
	}
	if !rep.Failing() || !rep.HasLeak() {
		t.Errorf("Failing %v, HasLeak %v; want both", rep.Failing(), rep.HasLeak())
	}
	rep.Verdict, h.Verdict, h.Reason = verdict.OverallClean, verdict.HealthOK, "0 of 100 requests failed (0 %)"
	rep.Resources = nil
	b.Reset()
	rep.WriteText(&b)
	if want := "Verdict: CLEAN\n  requests  ok  0 of 100 requests failed (0 %)\n"; !strings.HasPrefix(b.String(), want) {
		t.Errorf("report:\n%s\nwant it to start:\n%s", b.String(), want)
	}
}

// TestTextReportSaysWhatSettlesEachInconclusive: every resource left
// inconclusive gives its advice, in a leak's report as in an
// inconclusive one; a failing run's report gives none.
func TestTextReportSaysWhatSettlesEachInconclusive(t *testing.T) {
	const advice = "run ≥ 90 000 more requests (about 60 s at this throughput)"
	for _, tt := range []struct {
		overall string
		want    bool
	}{{verdict.OverallLeak, true}, {verdict.OverallInconclusive, true}, {verdict.OverallFailing, false}} {
		rep := &Report{
			Verdict: tt.overall,
			Resources: map[string]verdict.Resource{
				"rss":     {Verdict: "leak", Unit: "bytes", Reason: "rss +1 KiB/request", Settle: "never shown for a leak"},
				"threads": {Verdict: "inconclusive", Unit: "threads", Reason: "threads +0 threads/request", Settle: advice},
			},
		}
		var b strings.Builder
		if err := rep.WriteText(&b); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(b.String(), "  to settle threads: "+advice+"\n"); got != tt.want {
			t.Errorf("%s run: advice shown %v, want %v:\n%s", tt.overall, got, tt.want, b.String())
		}
		if strings.Contains(b.String(), "never shown") {
			t.Errorf("%s run: a leak's settle text shown:\n%s", tt.overall, b.String())
		}
	}
}

// TestVerdictLineConcludes: the first line says what a user can
// conclude: for CLEAN the resource closest to its floor and its bound;
// for INCONCLUSIVE first the resource that needs the longest, and how
// long at the soak's throughput. A clean run whose slowly sampled
// resources are undecided (they do not hold its verdict back) says so.
func TestVerdictLineConcludes(t *testing.T) {
	rep := &Report{Verdict: verdict.OverallClean, Phases: Phases{SoakSeconds: 100, SoakRequests: 100000},
		Resources: map[string]verdict.Resource{
			"rss": {Verdict: verdict.Stable, Unit: "bytes", BoundPerDay: 12 << 20, FloorPerDay: 64 << 20,
				Bound: "under +12 MiB per 24 h at this throughput (95 %; the floor 64 MiB)"},
			"fds": {Verdict: verdict.Stable, Unit: "fds", BoundPerDay: 900, FloorPerDay: 1000,
				Bound: "under +900 fds per 24 h at this throughput (exact; the floor 1000 fds)"},
			"threads": {Verdict: verdict.Stable, Unit: "threads"},
		}}
	want := "Verdict: CLEAN: no resource grows faster than its floor; closest: fds under +900 fds per 24 h at this throughput (exact; the floor 1000 fds)"
	if got := rep.VerdictLine(); got != want {
		t.Errorf("clean:\ngot  %s\nwant %s", got, want)
	}
	rep.Resources["pss"] = verdict.Resource{Verdict: verdict.Inconclusive, SettleRequests: 5700}
	want = "Verdict: CLEAN: no resource decided grows faster than its floor; closest: fds under +900 fds per 24 h at this throughput (exact; the floor 1000 fds); undecided, sampled more slowly: pss"
	if got := rep.VerdictLine(); got != want {
		t.Errorf("clean, pss undecided:\ngot  %s\nwant %s", got, want)
	}
	delete(rep.Resources, "pss")
	rep.Verdict = verdict.OverallInconclusive
	rep.Resources["threads"] = verdict.Resource{Verdict: verdict.Inconclusive, SettleRequests: 120000, Settle: "run ≥ 120 000 more requests"}
	rep.Resources["close_wait"] = verdict.Resource{Verdict: verdict.Inconclusive, SettleRequests: 30000, Settle: "run ≥ 30 000 more requests"}
	want = "Verdict: INCONCLUSIVE: threads needs about 2.0 min more to settle (≥ 120 000 more requests); also undecided: close_wait"
	if got := rep.VerdictLine(); got != want {
		t.Errorf("inconclusive:\ngot  %s\nwant %s", got, want)
	}
	rep.Resources["pss"] = verdict.Resource{Verdict: verdict.Inconclusive, Settle: "run a longer soak, or sample more often (--smaps-interval)"}
	want = "Verdict: INCONCLUSIVE: pss: run a longer soak, or sample more often (--smaps-interval); also undecided: threads, close_wait"
	if got := rep.VerdictLine(); got != want {
		t.Errorf("no figure:\ngot  %s\nwant %s", got, want)
	}
}

// TestPhasesCountsInTheSingular: the Phases line says "1 sample" and "1
// request", not "1 samples" (issue 41, item 7: a one-sample soak read
// "soak 1.0 s (499 requests, 1 samples)").
func TestPhasesCountsInTheSingular(t *testing.T) {
	rep := &Report{Verdict: "inconclusive", Phases: Phases{SoakSeconds: 1, WarmupRequests: 1, SoakRequests: 499, SoakSamples: 1}}
	var b strings.Builder
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	want := "warm-up 0.0 s (1 request), soak 1.0 s (499 requests, 1 sample), cool-down"
	if !strings.Contains(b.String(), want) {
		t.Errorf("text report lacks %q:\n%s", want, b.String())
	}
}
