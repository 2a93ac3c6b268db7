package runner

import (
	"strings"
	"testing"
	"time"

	"github.com/soakd/soakd/soak/load"
	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/verdict"
)

func TestSettleUntilSaysDecided(t *testing.T) {
	r := &runner{until: &until{decided: true}}
	sum := &load.Summary{StoppedBy: "interrupt", DurationSeconds: 92}
	r.settleUntil(sum)
	if sum.StoppedBy != load.StopDecided || sum.StoppedText() != "decided after 1.5 min" {
		t.Errorf("stopped by %q, text %q; want decided, \"decided after 1.5 min\"", sum.StoppedBy, sum.StoppedText())
	}
	died := &load.Summary{StoppedBy: load.StopTargetDied}
	r.settleUntil(died)
	if died.StoppedBy != load.StopTargetDied {
		t.Errorf("a death was overwritten by %q", died.StoppedBy)
	}
}

func TestDecidedParts(t *testing.T) {
	cost := verdict.CostDrift{Windows: 10, Start: 1e-4, CI95: [2]float64{-1e-6, 1e-6}}
	rep := &model.Report{
		Resources: map[string]verdict.Resource{
			"rss": {Verdict: verdict.Stable},
			"fds": {Verdict: verdict.Inconclusive, Settle: "run ≥ 1 000 more requests"},
		},
		Requests: &verdict.Health{Verdict: verdict.HealthOK},
		CPU:      verdict.CPU{Bound: verdict.BoundIO, Cost: cost},
	}
	parts, missing := decidedParts(rep, 600)
	if parts["rss"] != verdict.Stable || parts["fds"] != "" || parts["requests"] != verdict.HealthOK || parts["cpu"] != "not rising" {
		t.Errorf("parts %v", parts)
	}
	if len(missing) != 1 || !strings.HasPrefix(missing[0], "fds: run ≥ 1 000 more requests") {
		t.Errorf("missing %q; want the fds' advice alone", missing)
	}
}

func TestNewUntilNeedsAMost(t *testing.T) {
	if _, err := newUntil(&Options{UntilDecided: true}); err != errUntilUnbounded {
		t.Errorf("no bound: %v; want %v", err, errUntilUnbounded)
	}
	o := &Options{UntilDecided: true, NoProbe: true}
	o.Load.Duration = time.Minute
	if _, err := newUntil(o); err != errUntilNoProbe {
		t.Errorf("no probe: %v; want %v", err, errUntilNoProbe)
	}
	if u, err := newUntil(&Options{}); u != nil || err != nil {
		t.Errorf("not until-decided: %v, %v; want nil, nil", u, err)
	}
}
