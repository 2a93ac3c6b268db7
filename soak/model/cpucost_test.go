package model

import (
	"slices"
	"strings"
	"testing"

	"github.com/soakd/soakd/soak/verdict"
)

// The CPU cost per request says its finding under the verdict block: a
// rising cost is among the leaks; an inconclusive one is said so, and is
// no leak.
func TestTextReportCPUCostLines(t *testing.T) {
	for _, tc := range []struct {
		name string
		cost verdict.CostDrift
		leak bool
	}{
		{"rising", verdict.CostDrift{Rising: true, Reason: "CPU per request rising: 50 µs to 100 µs (+100 %) over the soak: a CPU leak"}, true},
		{"inconclusive", verdict.CostDrift{Inconclusive: true, Reason: "CPU per request inconclusive: it rose +21 % while the machine's other work went from 0.20 to 1.80 cores; the contention explains the rise"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := &Report{Verdict: "clean", CPU: verdict.CPU{Bound: "io", Reason: "io: waits", Cost: tc.cost}}
			var b strings.Builder
			if err := rep.WriteText(&b); err != nil {
				t.Fatal(err)
			}
			block, _, _ := strings.Cut(b.String(), "\n\n")
			if !strings.Contains(block, "\n  "+tc.cost.Reason+"\n") && !strings.HasSuffix(block, "\n  "+tc.cost.Reason) {
				t.Errorf("verdict block:\n%s\nwant the cost's line %q", block, tc.cost.Reason)
			}
			if got := slices.Contains(rep.Leaks(), CPUCostName); got != tc.leak || rep.HasLeak() != tc.leak {
				t.Errorf("leaks %v, has a leak %v; want %q among them (exit 1): %v", rep.Leaks(), rep.HasLeak(), CPUCostName, tc.leak)
			}
		})
	}
}

// A cost decided not rising says by which bar in the CPU figures: the
// absolute floor (what its rise adds of a core over 24 h), the relative
// bar, or both.
func TestTextReportCPUCostNotRising(t *testing.T) {
	cost := verdict.CostDrift{Windows: 10, Start: 1e-4, CI95: [2]float64{-1e-3, 1e-3}, FloorPerHour: 2e-3, HorizonCores: 0.0002}
	rep := &Report{Verdict: "clean", Phases: Phases{SoakSeconds: 600},
		CPU: verdict.CPU{Bound: "io", Reason: "io: waits", Throughput: 10, Cost: cost}}
	var b strings.Builder
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	want := "CPU cost:          not rising: its rise adds at most 0.02 % of a core over 24 h at this throughput (the floor is 10 %)\n"
	if !strings.Contains(b.String(), want) {
		t.Errorf("report:\n%s\nwant the line %q", b.String(), want)
	}
}
