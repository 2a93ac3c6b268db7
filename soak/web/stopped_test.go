package web

import (
	"html"
	"strings"
	"testing"
	"time"

	"github.com/soakd/soakd/soak/load"
	"github.com/soakd/soakd/soak/model"
)

// TestReportNamesStopsAndUnsampled: the page names a span in which the
// target was stopped, an endpoint not sampled, the load's stop by the
// target's death and the attempts while it was gone.
func TestReportNamesStopsAndUnsampled(t *testing.T) {
	rep := loadRun(t, "testdata/run1")
	from := time.Date(2026, 12, 1, 12, 0, 5, 0, time.UTC)
	rep.Target.Stopped = []model.StoppedSpan{{From: from, To: from.Add(10 * time.Second), Seconds: 10, Timeouts: 7, Root: true, Procs: 1}}
	rep.Target.Unsampled = []string{"127.0.0.1:8081 (pid 1234 (nginx), not in the sampled tree)"}
	if rep.Load == nil {
		rep.Load = &load.Summary{}
	}
	rep.Load.StoppedBy, rep.Load.StopDetail, rep.Load.AttemptsWhileGone = load.StopTargetDied, "gone at 12:01:00, not back within 10s", 310
	pageHolds(t, rep,
		"<dt>Target stopped</dt><dd>the target was stopped (SIGSTOP or a debugger) from 12:00:05 to 12:00:15 (10 s); 7 requests timed out meanwhile</dd>",
		"<dt>Not sampled</dt><dd>endpoint 127.0.0.1:8081 (pid 1234 (nginx), not in the sampled tree): ",
		"<td>the target died (gone at 12:01:00, not back within 10s)</td>",
		"310 attempts, not counted above",
	)
}

// TestReportSaysHowTheRunEnded: a stored run that did not complete says
// so above its verdict, with its stored error; a completed one says
// nothing; a run whose open loop fell short of its rate says that too.
func TestReportSaysHowTheRunEnded(t *testing.T) {
	rep := loadRun(t, "testdata/run1")
	rep.RateShortfall = "the open loop reached 147 of the 200 req/s requested (74 %, under 90 %): 1200 sends left late and 3180 never left; the verdicts are of this lighter load"
	render := func(o PageOptions) string {
		var b strings.Builder
		if err := RunReport(&b, rep, o); err != nil {
			t.Fatal(err)
		}
		return html.UnescapeString(b.String())
	}
	page := render(PageOptions{Status: "interrupted", Error: "soakd stopped during the run (crash, kill or power loss); the report covers the samples stored until then"})
	for _, want := range []string{
		"INTERRUPTED</span> This run was interrupted: soakd stopped during the run (crash, kill or power loss); the report covers the samples stored until then.</p>",
		"BELOW RATE</span> Load below its rate: the open loop reached 147 of the 200 req/s requested (74 %, under 90 %)",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page does not hold %q", want)
		}
	}
	if page := render(PageOptions{Status: "completed"}); strings.Contains(page, `class="ended" role="status"><span class="badge plain"`) || strings.Contains(page, "This run") {
		t.Errorf("a completed run's page says it did not complete")
	}
}
