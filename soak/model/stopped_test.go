package model

import (
	"strings"
	"testing"
	"time"

	"github.com/soakd/soakd/probes"
)

func TestStoppedSpans(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	rec := func(sec int, alive bool, stopped int, root bool) Record {
		return Record{Sample: probes.Sample{Time: t0.Add(time.Duration(sec) * time.Second), Alive: alive, Stopped: stopped, RootStopped: root}}
	}
	recs := []Record{
		rec(0, true, 0, false), rec(5, true, 1, true), rec(10, true, 1, true), rec(15, true, 0, false),
		rec(20, true, 2, false), rec(21, false, 0, false), // a worker stopped, then the target gone
		rec(30, true, 1, true), rec(31, true, 1, true), // stopped to the end
	}
	got := StoppedSpans(recs)
	want := []StoppedSpan{
		{From: t0.Add(5 * time.Second), To: t0.Add(15 * time.Second), Seconds: 10, Root: true, Procs: 1},
		{From: t0.Add(20 * time.Second), To: t0.Add(21 * time.Second), Seconds: 1, Procs: 2},
		{From: t0.Add(30 * time.Second), To: t0.Add(31 * time.Second), Seconds: 1, Root: true, Procs: 1, UntilEnd: true},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d spans %+v; want %d", len(got), got, len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("span %d: got %+v; want %+v", i, got[i], want[i])
		}
	}
	if spans := StoppedSpans(recs[:1]); len(spans) != 0 {
		t.Errorf("a running target: got spans %+v; want none", spans)
	}
}

func TestStoppedFindingInText(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 12, 0, 5, 0, time.UTC)
	rep := &Report{Verdict: "clean", Target: TargetInfo{Probed: true, Stopped: []StoppedSpan{
		{From: t0, To: t0.Add(10 * time.Second), Seconds: 10, Timeouts: 1382, Root: true, Procs: 1},
		{From: t0.Add(time.Minute), To: t0.Add(61 * time.Second), Seconds: 1, Procs: 3, UntilEnd: true},
	}}}
	var b strings.Builder
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	want := []string{
		"TARGET STOPPED: the target was stopped (SIGSTOP or a debugger) from 12:00:05 to 12:00:15 (10 s); 1382 requests timed out meanwhile.",
		"TARGET STOPPED: 3 of the target's processes were stopped (SIGSTOP or a debugger) from 12:01:05 until the end of the run, at least to 12:01:06 (1 s).",
		"Verdict: CLEAN",
	}
	for i, w := range want {
		if lines[i] != w {
			t.Errorf("line %d: got %q; want %q", i+1, lines[i], w)
		}
	}
}

func TestUnsampledWarning(t *testing.T) {
	rep := &Report{Verdict: "clean", Target: TargetInfo{Probed: true, Unsampled: []string{
		"127.0.0.1:8081 (pid 1234 (nginx), not in the sampled tree)", "192.0.2.1:80 (not on this machine)"}}}
	var b strings.Builder
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"  WARNING: endpoint 127.0.0.1:8081 (pid 1234 (nginx), not in the sampled tree) is not sampled: its requests are in the load, its server's resources in no verdict; sample it with its own run, or use --pid/--match to choose the tree\n",
		"  WARNING: endpoint 192.0.2.1:80 (not on this machine) is not sampled",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report does not say %q:\n%s", want, b.String())
		}
	}
}
