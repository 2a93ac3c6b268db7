package runner

import (
	"fmt"
	"time"

	"github.com/soakd/soakd/probes"
	"github.com/soakd/soakd/soak/load"
)

// settleLoad makes the load's summary the soak's: the requests completed
// while the target was gone are taken out and counted apart, and a load
// stopped because the target died says so.
func (r *runner) settleLoad(sum *load.Summary, tgt *probes.Target) {
	r.tally.settle(sum)
	if r.died == nil {
		return
	}
	sum.StoppedBy = load.StopTargetDied
	var exit *probes.ExitInfo
	if tgt != nil {
		exit = tgt.Exit()
	}
	sum.StopDetail = deathDetail(*r.died, r.o.DeadGrace, exit)
}

// deathDetail says how the target died, e.g. "gone at 12:00:05, not back
// within 10 s; exit status 1".
func deathDetail(at time.Time, grace time.Duration, exit *probes.ExitInfo) string {
	d := fmt.Sprintf("gone at %s, not back within %s", at.Format(time.TimeOnly), grace)
	switch {
	case exit == nil || !exit.Known:
	case exit.Signal != "":
		d += "; killed by " + exit.Signal
	default:
		d += fmt.Sprintf("; exit status %d", exit.Code)
	}
	return d
}

// soakCounts returns the load's completed requests and errors, less those
// completed while the target was gone, never below the previous record's
// (the two counts are read a moment apart).
func (r *runner) soakCounts() (requests, errors uint64) {
	goneReq, goneErr := r.tally.goneTotals() // first: the engine's counts only grow after
	requests, errors = r.eng.Completed(), r.eng.Errors()
	requests -= min(goneReq, requests)
	errors -= min(goneErr, errors)
	if p := r.prev; p != nil {
		requests, errors = max(requests, p.Requests), max(errors, p.Errors)
	}
	return requests, errors
}
