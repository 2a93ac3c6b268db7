package model

import (
	"bytes"
	"strings"
	"testing"

	"github.com/soakd/soakd/soak/load"
	"github.com/soakd/soakd/soak/verdict"
)

func TestRateShortfall(t *testing.T) {
	open := func(target, rps float64) *load.Summary {
		return &load.Summary{Mode: "open", TargetRate: target, RPS: rps, DurationSeconds: 60, LateSends: 1200, MissedSends: 3180}
	}
	for _, c := range []struct {
		name string
		s    *load.Summary
		want string
	}{
		{"147 of 200 req/s", open(200, 147), "the open loop reached 147 of the 200 req/s requested (74 %, under 90 %): 1200 sends left late and 3180 never left; the verdicts are of this lighter load"},
		{"180 of 200 req/s is 90 %", open(200, 180), ""},
		{"199 of 200 req/s", open(200, 199), ""},
		{"closed loop", &load.Summary{Mode: "closed", RPS: 10, DurationSeconds: 60}, ""},
		{"no load", nil, ""},
		{"no duration", &load.Summary{Mode: "open", TargetRate: 200}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := RateShortfall(c.s); got != c.want {
				t.Errorf("RateShortfall = %q; want %q", got, c.want)
			}
		})
	}
	rep := &Report{Verdict: "clean", Load: open(200, 147), RateShortfall: RateShortfall(open(200, 147))}
	var b bytes.Buffer
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if first, _, _ := strings.Cut(b.String(), "\n"); !strings.HasPrefix(first, "LOAD BELOW RATE: the open loop reached 147 of the 200 req/s") {
		t.Errorf("report text's first line = %q; want the shortfall", first)
	}
	// A failing run leads with its failure; the shortfall follows the
	// verdict (TestFaults/emfile: an fd-starved server slows the open
	// loop down as it fails).
	failing := &Report{Verdict: verdict.HealthFailing, Load: open(200, 147), RateShortfall: RateShortfall(open(200, 147)),
		Requests: &verdict.Health{Verdict: verdict.HealthFailing, Reason: "133 of 282 requests failed (47.2 %)"}}
	b.Reset()
	if err := failing.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if lines := strings.SplitN(b.String(), "\n", 3); len(lines) < 2 || !strings.HasPrefix(lines[0], "Verdict: FAILING: 133 of 282") || !strings.HasPrefix(lines[1], "LOAD BELOW RATE: ") {
		t.Errorf("a failing run's text starts %.300q; want the failure, then the shortfall", b.String())
	}
	b.Reset()
	if err := rep.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"rate_shortfall": "the open loop reached 147 of the 200 req/s requested`) {
		t.Errorf("report JSON lacks rate_shortfall:\n%.400s", b.String())
	}
}
