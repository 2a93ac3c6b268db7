package analysis

import (
	"testing"

	"github.com/soakd/soakd/probes"
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
