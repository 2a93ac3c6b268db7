package web

import (
	"testing"

	"github.com/soakd/soakd/soak/load"
	"github.com/soakd/soakd/soak/verdict"
)

// TestReportShowsTheRequestsVerdict: a run whose requests fail reads
// FAILING; its page names the requests' verdict and why in the verdict
// table, and the figures the verdict judged (the rate against its
// thresholds, the worst window, when the errors came, their trend and
// example texts), so that a failing run's page says what failed.
func TestReportShowsTheRequestsVerdict(t *testing.T) {
	rep := loadRun(t, "testdata/run1")
	if rep.Load == nil {
		rep.Load = &load.Summary{}
	}
	first, last := 12.0, 60.0
	rep.Verdict = verdict.OverallFailing
	rep.Requests = &verdict.Health{
		Verdict: verdict.HealthFailing, Requests: 20000, Errors: 100, Rate: 0.005, MaxRate: 0.001, MaxWindowRate: 0.05, WindowSeconds: 60,
		WorstWindow:       &verdict.ErrorWindow{StartSeconds: 10, EndSeconds: 70, Requests: 2000, Errors: 100, Rate: 0.05},
		FirstErrorSeconds: &first, LastErrorSeconds: &last, ErrorsToEnd: true, LoadSeconds: 60,
		Causes: []verdict.Cause{{Cause: "status_mismatch", Count: 100, Examples: []verdict.Example{{Text: "HTTP 500 Internal Server Error", Count: 100}}}},
		Trend:  &verdict.ErrorTrend{Bins: 12, FirstThirdRate: 0, LastThirdRate: 0.015, PValue: 3e-5, Rising: true},
		Reason: "0.5 % of 20000 requests failed, over the 0.1 % allowed",
	}
	pageHolds(t, rep,
		`<tr id="requests-verdict"><th scope="row">requests</th><td><span class="badge bad"`,
		"0.5 % of 20000 requests failed, over the 0.1 % allowed</td>",
		"<td class=\"num\">0.5 % (100 of 20000)</td><td>judged against 0.1 % over the load and 5 % in any 60 s window</td>",
		"<th scope=\"row\">Worst window</th><td class=\"num\">5 % (100 of 2000)</td><td>from 10 s to 70 s of the load</td>",
		"12 s – 60 s</td><td>of 60 s of load; no request succeeded after the last error</td>",
		"0 % → 1.5 %</td><td>first third to last, over 12 bins; rising (p = 3e-05)</td>",
		"status_mismatch: <code>HTTP 500 Internal Server Error</code> (100)",
	)
}
