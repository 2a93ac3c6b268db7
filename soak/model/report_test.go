package model

import (
	"strings"
	"testing"

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
		"  rss reaches its limit (1.00 GiB) in 1.0 h at this rate\n" +
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
