package runner

import (
	"errors"
	"math"
	"sort"
	"strings"

	"go.uber.org/zap"

	"github.com/soakd/soakd/soak/analysis"
	"github.com/soakd/soakd/soak/load"
	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/verdict"
)

// until runs the looks of an until-decided run (Options.UntilDecided):
// it plans them once the soak has run verdict.FirstLookSeconds (a
// verdict.Schedule over the soak's progress towards the run's most, by
// time or requests), analyses the soak so far at each, each at its
// share of the error budget, and stops the load once verdict.ConfirmLooks
// looks in a row decide every part (see decidedParts). Used by the
// sampling goroutine only.
type until struct {
	sched   *verdict.Schedule // nil until the first look is due
	taken   int               // looks passed: taken, or skipped before the soak's minimum
	looked  int               // looks taken
	confirm verdict.Confirm

	soakSec, soakReq float64 // Elapsed and requests at the soak's first record; soakSec < 0 before it
	mostSec, mostReq float64 // the soak's most, from its start; 0 = no such bound

	decided bool    // the load was stopped: decided
	atSoak  float64 // soak seconds of the look the report is at
	share   float64 // that look's share
	latSum  float64 // the load's latencies so far, seconds × requests (wireLoad)
	latN    float64
}

// errUntilUnbounded: an until-decided run needs its most.
var errUntilUnbounded = errors.New("until-decided: the run needs a most to stop at undecided: a load duration or a request count")

// errUntilNoProbe: an until-decided run decides on the target's samples.
var errUntilNoProbe = errors.New("until-decided: the run decides on the target's resources, and no target is sampled")

// newUntil returns the looks' state of o, or nil when o is not
// until-decided.
func newUntil(o *Options) (*until, error) {
	if !o.UntilDecided {
		return nil, nil
	}
	if o.Load.Duration <= 0 && o.Load.Requests == 0 {
		return nil, errUntilUnbounded
	}
	if o.NoProbe {
		return nil, errUntilNoProbe
	}
	return &until{soakSec: -1}, nil
}

// progress is the soak's share of its most at rec: by time or by
// requests, whichever is further.
func (u *until) progress(rec model.Record) float64 {
	p := 0.0
	if u.mostSec > 0 {
		p = (rec.Elapsed - u.soakSec) / u.mostSec
	}
	if u.mostReq > 0 {
		p = math.Max(p, (float64(rec.Requests)-u.soakReq)/u.mostReq)
	}
	return p
}

// observeUntil takes a look at rec when one is due, and stops the load when
// the looks have decided.
func (r *runner) observeUntil(rec model.Record) {
	u := r.until
	if u == nil || u.decided || rec.Phase != verdict.Soak {
		return
	}
	if u.soakSec < 0 {
		u.soakSec, u.soakReq = rec.Elapsed, float64(rec.Requests)
		if d := r.o.Load.Duration; d > 0 {
			u.mostSec = r.loadStart + d.Seconds() - rec.Elapsed
		}
		if n := r.o.Load.Requests; n > 0 {
			u.mostReq = float64(n) - u.soakReq
		}
	}
	p := u.progress(rec)
	if u.sched == nil {
		if rec.Elapsed-u.soakSec < verdict.FirstLookSeconds {
			return
		}
		s := verdict.NewSchedule(p, 0)
		u.sched = &s
		r.o.Log.Info("until decided: looks planned", zap.Int("looks", s.Looks()))
	}
	// A look that came due while the last one ran is taken once: the
	// looks passed by are not taken, and spend nothing.
	k := u.taken
	for k+1 < u.sched.Looks() && u.sched.Due(k+1, p) {
		k++
	}
	if k == u.sched.Looks()-1 || !u.sched.Due(k, p) {
		return // the last look is the run's end: the final report
	}
	soak := rec.Elapsed - u.soakSec
	if soak < r.minDecide() {
		u.taken = k + 1 // not taken, and not spent
		return
	}
	rep, err := r.lookReport(u.sched.Share(k))
	if err != nil {
		r.o.Log.Warn("until decided: a look could not read the samples back", zap.Error(err))
		return
	}
	u.taken, u.looked = k+1, u.looked+1
	parts, missing := decidedParts(rep, soak)
	r.o.Log.Info("until decided: look", zap.Int("look", k+1), zap.Float64("soak_seconds", soak),
		zap.Strings("undecided", missing))
	if !u.confirm.Look(parts) {
		return
	}
	u.decided, u.atSoak, u.share = true, soak, u.sched.Share(k)
	r.o.Log.Info("until decided: every part decided; stopping the load", zap.Float64("soak_seconds", soak))
	r.stopLoad()
}

// minDecide is the soak, in seconds, before which no look decides.
func (r *runner) minDecide() float64 {
	switch m := r.o.UntilMinSoak; {
	case m < 0:
		return 0
	case m > 0:
		return m.Seconds()
	}
	return verdict.MinDecideSeconds
}

// lookReport analyses the soak so far at a look's share.
func (r *runner) lookReport(share float64) (*model.Report, error) {
	recs, err := r.spool.Records()
	if err != nil {
		return nil, err
	}
	ao := r.analysisOptions()
	ao.Share = share
	r.mu.Lock()
	mean := 0.0
	if r.until.latN > 0 {
		mean = r.until.latSum / r.until.latN
	}
	r.mu.Unlock()
	var sum *load.Summary
	if n := len(recs); n > 0 {
		last := recs[n-1]
		sum = &load.Summary{Requests: last.Requests, Errors: last.Errors, Latency: load.LatencySummary{Mean: mean}}
	}
	return analysis.NewReport(recs, sum, model.TargetInfo{Probed: true}, ao), nil
}

// decidedParts are a report's parts, each with its decided verdict or ""
// (see verdict.Confirm), and, for each undecided part, what it misses:
// every resource leak, stable or plateau; the requests ok or failing;
// the CPU verdict decided (verdict.CPUDecided), its part the cost's
// answer.
func decidedParts(rep *model.Report, soakSeconds float64) (map[string]string, []string) {
	parts := map[string]string{}
	var missing []string
	for _, n := range rep.ResourceNames() {
		res := rep.Resources[n]
		switch {
		case verdict.Decided(res.Verdict):
			parts[n] = res.Verdict
		default:
			parts[n] = ""
			why := res.Settle
			if why == "" {
				why = res.Reason
			}
			missing = append(missing, n+": "+why)
		}
	}
	switch h := rep.Requests; {
	case h == nil:
		parts["requests"] = ""
		missing = append(missing, "requests: no load was judged")
	case h.Verdict == verdict.Inconclusive:
		parts["requests"] = ""
		missing = append(missing, "requests: "+h.Reason)
	default:
		parts["requests"] = h.Verdict
	}
	// The CPU part is its cost's answer (rising or not): the bound's answer
	// may move between the bars from look to look (io, then between
	// waiting and CPU-bound, on a busy machine) and is decided at each.
	answer, why := verdict.CPUDecided(rep.CPU, soakSeconds)
	_, parts["cpu"], _ = strings.Cut(answer, ", ")
	if why != "" {
		missing = append(missing, "cpu: "+why)
	}
	sort.Strings(missing)
	return parts, missing
}

// settleUntil says in the summary and the report how an until-decided
// run ended: stopped by "decided" after how long, or at its most, with
// what was missing.
func (r *runner) settleUntil(sum *load.Summary) {
	u := r.until
	if u == nil || !u.decided || sum.StoppedBy == load.StopTargetDied {
		return
	}
	sum.StoppedBy = load.StopDecided
	sum.StopDetail = "after " + model.FormatDuration(sum.DurationSeconds)
}

// reportShare is the share of the error budget the final report is
// analysed at: the deciding look's, else the schedule's last look (the
// run's end, or the next look of a run cut short), or all of it when no
// look was planned (the soak ended before the first).
func (u *until) reportShare() float64 {
	switch {
	case u == nil:
		return 1
	case u.decided:
		return u.share
	case u.sched != nil:
		return u.sched.Share(u.sched.Looks() - 1)
	}
	return 1
}

// fillUntil records the looks in the report, and for a run that ended
// undecided, what each undecided part misses.
func (r *runner) fillUntil(rep *model.Report) {
	u := r.until
	if u == nil {
		return
	}
	out := &model.Until{Decided: u.decided, Looks: u.looked, Share: u.reportShare(), SoakSeconds: u.atSoak}
	out.Level = 1 - (1-verdict.DefaultLevel)*out.Share
	if u.sched != nil {
		out.PlannedLooks = u.sched.Looks()
	}
	if !u.decided {
		out.Looks++ // the end is the last look
		out.SoakSeconds = rep.Phases.SoakSeconds
		parts, missing := decidedParts(rep, out.SoakSeconds)
		out.Missing = missing
		out.Decided = len(missing) == 0 && len(parts) > 0
	}
	rep.Until = out
}
