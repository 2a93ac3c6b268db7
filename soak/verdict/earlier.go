package verdict

import (
	"fmt"
	"math"

	"github.com/soakd/soakd/soak/trend"
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
	// Points are the earlier runs' soak points joined into one soak:
	// their Requests and Seconds count from the first run's soak start
	// over the soaks only (the idle time between runs left out), and
	// the first run's baseline points lead them. Runs is how many runs
	// they join. With them, a run that does not decide on its own is
	// judged on its own points appended to them (growth per request
	// across runs); nil = none.
	Points []Point
	Runs   int
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

// across judges res, inconclusive on this run's points pts alone, on the
// soak joined from the earlier runs' points and this run's: a leak there
// is this run's verdict, with the joined fit's figures and AcrossRuns
// set. The joined soak is judged without the earlier runs' evidence (its
// own baseline is the first-seen level) and without the lives check.
func across(res Resource, pts []Point, opt ResourceOptions) Resource {
	e := opt.Earlier
	if e == nil || len(e.Points) == 0 || res.Verdict != Inconclusive {
		return res
	}
	joined := joinRun(e.Points, pts)
	o := opt
	o.Earlier, o.Lives, o.RequestsPerHour = nil, nil, 0
	j := analyze(joined, o, trend.ByMin)
	if j.Verdict != Leak {
		return res
	}
	j.AcrossRuns = e.Runs + 1
	j.Reason = fmt.Sprintf("growth across the %d runs of the same process (%s), by the requests each served: %s; this run alone: %s",
		j.AcrossRuns, e.Process, j.Reason, res.Reason)
	j.Baseline, j.ReleasedAfterCooldown, j.CooldownLevel = res.Baseline, res.ReleasedAfterCooldown, res.CooldownLevel
	j.Limit, j.TimeToExhaustionSeconds = res.Limit, nil
	return j
}

// joinRun appends a run's soak points to the earlier runs' joined soak,
// its requests and seconds counted on from where the joined soak ends.
func joinRun(earlier, pts []Point) []Point {
	var req, sec float64
	for _, p := range earlier {
		req, sec = math.Max(req, p.Requests), math.Max(sec, p.Seconds)
	}
	out := append([]Point(nil), earlier...)
	var req0, sec0 float64
	first := true
	for _, p := range pts {
		if p.Phase != Soak {
			continue
		}
		if first {
			req0, sec0, first = p.Requests, p.Seconds, false
		}
		p.Requests, p.Seconds = req+p.Requests-req0, sec+p.Seconds-sec0
		p.Incarnation = 0
		out = append(out, p)
	}
	return out
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
