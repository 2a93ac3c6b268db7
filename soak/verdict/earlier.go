package verdict

import (
	"fmt"
	"math"
)

// Earlier is the evidence of a job's earlier runs of the same process
// (the same {PID, start time}): a long-lived server soaked again and again
// is one body of evidence, not a fresh process each time.
type Earlier struct {
	// Level is the resource's level when soakd first saw the process:
	// the idle baseline (else the soak's start) of its first run. The
	// transient rule judges growth against it instead of this run's
	// start; 0 = unknown.
	Level float64
	// LeakRun is the earlier run that decided a leak which no run since
	// has turned (by reading stable or plateau, or by a fall); 0 = none.
	LeakRun int64
	// Process names the process in the reason, e.g. "pid 123".
	Process string
}

// carry keeps a leak decided in an earlier run of the same process: a run
// that fails to decide again is no evidence that the leak stopped. The
// leak stays while this run's slope is positive with its 95 % interval
// above zero and the level did not fall; a stable or plateau verdict, or
// a fall, turns it.
func carry(res Resource, e *Earlier) Resource {
	if e == nil || e.LeakRun <= 0 || res.Verdict != Inconclusive {
		return res
	}
	if !(res.CI95[0] > 0) || !(res.PerRequest > 0) || res.Growth < 0 || math.IsNaN(res.Growth) {
		return res
	}
	res.Verdict, res.CarriedFromRun = Leak, e.LeakRun
	res.Reason = fmt.Sprintf("leak decided in run %d of the same process (%s), and this run's growth is still above zero; this run: %s",
		e.LeakRun, e.Process, res.Reason)
	res.Settle, res.SettleRequests = "", 0
	return res
}

// transientLevel is the level the transient rule judges growth against:
// the process's level when soakd first saw it, when an earlier run of
// the same process measured one, else this run's own (the idle baseline,
// else the envelope at the soak's start).
func transientLevel(f fit, base *float64, e *Earlier) (float64, bool) {
	if e != nil && e.Level > 0 {
		return e.Level, true
	}
	if base != nil {
		return *base, false
	}
	return f.start, false
}
