// Package analysis turns a soak's records into a report: the resources'
// fits, the CPU verdict and its inputs, request health, endpoint
// attribution and the process that grew. soak/runner runs soaks and calls
// it at the end; the daemon's live and recovered runs and `soakd analyze`
// call it on records alone.
package analysis

import (
	"cmp"
	"slices"
	"time"

	"github.com/soakd/soakd/soak/load"
	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/verdict"
)

// NewReport analyses records into a report. The daemon uses it for live
// analysis and for runs that a crash interrupted (sum is then nil).
func NewReport(recs []model.Record, sum *load.Summary, ti model.TargetInfo, ao Options) *model.Report {
	if ao.Collector == "" {
		ao.Collector = ti.Collector
	}
	rep := &model.Report{Load: sum, Target: ti, Samples: len(recs), Records: recs, RateShortfall: model.RateShortfall(sum)}
	if n := len(recs); n > 0 {
		rep.Started, rep.Ended = recs[0].Time, recs[n-1].Time
	}
	rep.Phases = phases(recs)
	rep.Requests = health(recs, sum, ti.DiedAt, ao.Health, ao.Stalls)
	if !ti.Probed {
		rep.Resources = map[string]verdict.Resource{}
		rep.CPU = verdict.CPU{Bound: verdict.Inconclusive, Reason: "no target was sampled: the run was load only"}
		rep.Verdict = verdict.WithHealth(verdict.Inconclusive, rep.Requests)
		return rep
	}
	rep.Target.Incarnations, rep.Target.Restarts = incarnations(recs)
	rep.Target.Stopped = model.StoppedSpans(recs)
	rep.Resources, rep.CPU = Analyze(recs, sum, ao)
	rep.Verdict = verdict.WithHealth(verdict.WithCPU(Overall(rep.Resources), rep.CPU), rep.Requests)
	rep.Grew = grew(recs, rep.Resources["rss"])
	return rep
}

// health judges the load's requests: from the load's summary and the
// samples' counters when the run had a load, from the samples alone when
// they are all there is (soakd analyze, a run a crash cut short); nil
// when there was no load at all. When the target died (died is set),
// only the samples until then count: the attempts made while it was gone
// are the death's finding, not the requests' (the totals then come from
// the samples, not the summary).
//
// The time the target answered nothing counts too: the load's stalls
// (given, on the records' scale) and the spans in which the target was
// stopped and no request completed (from the records, so that soakd
// analyze finds them as well).
func health(recs []model.Record, sum *load.Summary, died *time.Time, th verdict.HealthThresholds, stalls []verdict.Outage) *verdict.Health {
	in := verdict.HealthInput{Thresholds: th, Outages: append(stoppedOutages(recs), stalls...)}
	for _, r := range recs {
		if died != nil && r.Time.After(*died) {
			break
		}
		in.Points = append(in.Points, verdict.HealthPoint{Seconds: r.Elapsed, Requests: r.Requests, Errors: r.Errors, Phase: r.Phase})
	}
	if sum != nil {
		in.Causes = causes(sum)
		if died == nil {
			in.Requests, in.Errors = sum.Requests, sum.Errors
		}
	} else if !slices.ContainsFunc(in.Points, func(p verdict.HealthPoint) bool { return p.Requests > 0 }) {
		return nil
	}
	h := verdict.AnalyzeHealth(in)
	return &h
}

// stoppedOutages are the spans, on the records' scale, in which the
// target was stopped (SIGSTOP, a debugger) and no request completed:
// from the first sample that saw it stopped to the last, the stretch it
// is known to have been stopped (the load resumes before the next sample
// sees it run). A tree whose other processes answered while one was
// stopped (a prefork server's worker) was not unavailable.
func stoppedOutages(recs []model.Record) []verdict.Outage {
	var outs []verdict.Outage
	from := -1
	closeSpan := func(last int) {
		if recs[last].Requests == recs[from].Requests && recs[last].Elapsed > recs[from].Elapsed {
			outs = append(outs, verdict.Outage{FromSeconds: recs[from].Elapsed, ToSeconds: recs[last].Elapsed, Why: verdict.OutageStopped})
		}
		from = -1
	}
	for i, r := range recs {
		stopped := r.Alive && r.Stopped > 0
		switch {
		case stopped && from < 0:
			from = i
		case !stopped && from >= 0:
			closeSpan(i - 1)
		}
	}
	if from >= 0 {
		closeSpan(len(recs) - 1)
	}
	return outs
}

// causes are the load's errors by cause, most first, with their texts.
func causes(sum *load.Summary) []verdict.Cause {
	var cs []verdict.Cause
	for c, n := range sum.ErrorsByCause {
		if n == 0 {
			continue
		}
		vc := verdict.Cause{Cause: c, Count: n}
		for _, t := range sum.ErrorTexts[c] {
			vc.Examples = append(vc.Examples, verdict.Example{Text: t.Text, Count: t.Count})
		}
		cs = append(cs, vc)
	}
	slices.SortFunc(cs, func(a, b verdict.Cause) int {
		if a.Count != b.Count {
			return cmp.Compare(b.Count, a.Count)
		}
		return cmp.Compare(a.Cause, b.Cause)
	})
	return cs
}

// overall is the run's verdict. PSS and USS (read about 30 times over a
// timed load, 2 s to 30 s apart: SmapsPace) and CLOSE_WAIT sockets
// (counted every 5 s) are sampled more slowly than
// the rest, so a short run often has too few of them to decide; when they
// are inconclusive and RSS, fds and threads are decided, those speak for
// the run and the slow ones do not hold its verdict back. A leak in any
// resource still counts.
func Overall(rs map[string]verdict.Resource) string {
	deciding := make(map[string]verdict.Resource, len(rs))
	for name, r := range rs {
		if res, ok := model.ResourceNamed(name); ok && res.Slow && r.Verdict == verdict.Inconclusive {
			continue
		}
		deciding[name] = r
	}
	if len(deciding) == 0 {
		return verdict.Overall(rs)
	}
	return verdict.Overall(deciding)
}

// phases measures the phases from the records. The load starts at the
// last baseline sample (taken as the baseline ends), or at the run's start
// when there is none.
func phases(recs []model.Record) model.Phases {
	var p model.Phases
	var loadStart, loadEnd float64
	for _, r := range recs {
		switch r.Phase {
		case verdict.Baseline:
			p.BaselineSeconds, loadStart, loadEnd = r.Elapsed-recs[0].Elapsed, r.Elapsed, r.Elapsed
		case verdict.Warmup:
			p.WarmupSeconds, p.WarmupRequests = r.Elapsed-loadStart, r.Requests
			loadEnd = r.Elapsed
		case verdict.Soak:
			p.SoakSeconds, p.SoakRequests = r.Elapsed-loadStart-p.WarmupSeconds, r.Requests-p.WarmupRequests
			p.SoakSamples++
			loadEnd = r.Elapsed
		case verdict.Cooldown:
			p.CooldownSeconds = r.Elapsed - loadEnd
		}
	}
	return p
}

func incarnations(recs []model.Record) (n, restarts int) {
	seen := map[int]bool{}
	for _, r := range recs {
		if r.Incarnation > 0 && !seen[r.Incarnation] {
			seen[r.Incarnation] = true
		}
	}
	return len(seen), max(len(seen)-1, 0)
}
