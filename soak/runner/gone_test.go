package runner

import (
	"testing"

	"github.com/soakd/soakd/probes"
	"github.com/soakd/soakd/soak/load"
	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/verdict"
)

// The soak window ends at the last record of a live target: the records
// of a dead target's grace period hold no request of the soak.
func TestSoakWindowEndsWhereTheTargetDied(t *testing.T) {
	rec := func(sec float64, phase verdict.Phase, alive bool, requests uint64) model.Record {
		return model.Record{Sample: probes.Sample{Alive: alive}, Elapsed: sec, Phase: phase, Requests: requests}
	}
	recs := []model.Record{
		rec(0, verdict.Warmup, true, 0), rec(1, verdict.Soak, true, 100), rec(2, verdict.Soak, true, 200),
		rec(3, verdict.Soak, true, 300), rec(4, verdict.Soak, false, 300), rec(5, verdict.Soak, false, 300),
	}
	a, b, ok := soakWindow(recs)
	if !ok || a.Elapsed != 1 || b.Elapsed != 3 {
		t.Errorf("window %v to %v (ok %v); want 1 s to 3 s", a.Elapsed, b.Elapsed, ok)
	}
	if got := soakRequestsPerHour(recs); got != 100*3600 {
		t.Errorf("requests per hour %.0f; want %d", got, 100*3600)
	}
	// Too few live soak records: the whole load's window, trimmed too.
	a, b, ok = soakWindow(recs[:1:1])
	if ok {
		t.Errorf("one record: window %v to %v; want none", a.Elapsed, b.Elapsed)
	}
	short := []model.Record{rec(0, verdict.Warmup, true, 0), rec(1, verdict.Soak, true, 100), rec(2, verdict.Soak, false, 100)}
	if a, b, ok = soakWindow(short); !ok || a.Elapsed != 0 || b.Elapsed != 1 {
		t.Errorf("short: window %v to %v (ok %v); want the load's, 0 s to 1 s", a.Elapsed, b.Elapsed, ok)
	}
}

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
