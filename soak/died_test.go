package soak

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/soakd/soakd/probes"
)

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
