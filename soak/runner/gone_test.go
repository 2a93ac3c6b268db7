package runner

import (
	"testing"

	"github.com/soakd/soakd/soak/load"
)

// settle takes what completed while the target was gone out of every
// count of the summary, cause by cause.
func TestTallySettlesTheAttemptsWhileGone(t *testing.T) {
	var ty tally
	ty.observe(load.Result{Status: 200})
	ty.observe(load.Result{Cause: load.CauseTimeout})
	ty.gone.Store(true)
	for range 3 {
		ty.observe(load.Result{Cause: load.CauseConnRefused})
	}
	ty.observe(load.Result{Status: 500, Cause: load.CauseStatus})
	ty.gone.Store(false)
	ty.observe(load.Result{Status: 200})
	if req, errs := ty.goneTotals(); req != 4 || errs != 4 {
		t.Fatalf("gone %d requests, %d errors; want 4, 4", req, errs)
	}
	s := &load.Summary{Requests: 10, Successes: 5, Errors: 5, DurationSeconds: 2,
		ErrorsByCause: map[string]uint64{load.CauseTimeout: 1, load.CauseConnRefused: 3, load.CauseStatus: 1},
		StatusClasses: map[string]uint64{"2xx": 5, "5xx": 1},
		ErrorTexts: map[string][]load.ErrorText{load.CauseTimeout: {{Text: "i/o timeout", Count: 1}},
			load.CauseConnRefused: {{Text: "connection refused", Count: 3}}}}
	ty.settle(s)
	if s.Requests != 6 || s.Successes != 5 || s.Errors != 1 || s.AttemptsWhileGone != 4 || s.RPS != 3 {
		t.Errorf("summary %+v; want 6 requests, 5 successes, 1 error, 4 attempts while gone, 3 req/s", s)
	}
	if len(s.ErrorsByCause) != 1 || s.ErrorsByCause[load.CauseTimeout] != 1 || len(s.StatusClasses) != 1 || s.StatusClasses["2xx"] != 5 {
		t.Errorf("causes %v, classes %v; want the timeout and the 2xx left", s.ErrorsByCause, s.StatusClasses)
	}
	if len(s.ErrorTexts) != 1 || len(s.ErrorTexts[load.CauseTimeout]) != 1 {
		t.Errorf("error texts %v; want the timeout's alone: the refusals all came while the target was gone", s.ErrorTexts)
	}
}
