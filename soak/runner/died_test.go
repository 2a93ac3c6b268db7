package runner

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/soakd/soakd/probes"
	"github.com/soakd/soakd/soak/model"
)

// TestDeathIsTheFirstFinding: a report whose target died says so on its
// first line, before the verdict, with the time, the exit and the grace.
func TestDeathIsTheFirstFinding(t *testing.T) {
	at := time.Date(2026, 11, 30, 3, 14, 0, 0, time.UTC)
	rep := &model.Report{Verdict: "inconclusive", Target: model.TargetInfo{Probed: true, Description: "pid 7 (app)",
		DiedAt: &at, DeadGraceSeconds: 10, Exit: &probes.ExitInfo{Time: at, Code: -1}}}
	var b bytes.Buffer
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(b.String(), "\n")
	if !strings.HasPrefix(first, "TARGET DIED: The target died at 2026-11-30T03:14:00Z") || !strings.Contains(first, "10 s") {
		t.Errorf("first line %q; want the death, its time and the grace", first)
	}
	if !rep.TargetDied() || (&model.Report{}).TargetDied() {
		t.Errorf("TargetDied: wrong")
	}
}

// TestSmapsPaceSuitsTheRun: PSS/USS are read about 30 times over a
// duration-bounded load, 2 s to 30 s apart, so a 6-minute run has enough of
// them to decide.
func TestSmapsPaceSuitsTheRun(t *testing.T) {
	for _, c := range []struct{ d, want time.Duration }{
		{0, 30 * time.Second}, {10 * time.Second, 2 * time.Second}, {2 * time.Minute, 4 * time.Second},
		{6 * time.Minute, 12 * time.Second}, {2 * time.Hour, 30 * time.Second},
	} {
		if got := SmapsPace(c.d); got != c.want {
			t.Errorf("SmapsPace(%s) = %s; want %s", c.d, got, c.want)
		}
	}
	o := Options{}
	o.Load.Duration = 6 * time.Minute
	if o.setDefaults(); o.Sampler.SmapsInterval != 12*time.Second {
		t.Errorf("setDefaults: smaps interval %s; want 12s", o.Sampler.SmapsInterval)
	}
	o = Options{}
	o.Sampler.SmapsInterval = 5 * time.Second
	if o.setDefaults(); o.Sampler.SmapsInterval != 5*time.Second {
		t.Errorf("setDefaults changed an explicit smaps interval: %s", o.Sampler.SmapsInterval)
	}
}
