package runner

import (
	"slices"
	"time"

	"go.uber.org/zap"

	"github.com/soakd/soakd/soak/load"
	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/verdict"
)

// A run that waits for answers says so in the log when no progress lines
// are printed: after waitNotice without an answer, then at twice the
// previous gap, up to maxWaitNotice apart.
const (
	waitNotice    = 10 * time.Second
	maxWaitNotice = 5 * time.Minute
)

// stallWatch notices, at the sample ticks, that the target stopped
// answering: for longer than the timeout no response and no byte came
// while requests timed out.
type stallWatch struct {
	timeout time.Duration
	last    load.Counters // at lastAt
	lastAt  time.Time     // when an answer or a byte last came (or the load started)
	since   time.Time     // start of the stall in progress; zero when none
	conns   int           // most requests waiting in the stall in progress
	worst   *model.Stall
	spans   [][2]time.Time // every stall closed so far: since, until
	noticed time.Time      // last wait notice
	gap     time.Duration  // from the last wait notice to the next
}

// observe takes the engine's counters at now. It returns true when a
// stall has just been found.
func (s *stallWatch) observe(now time.Time, c load.Counters) (found bool) {
	if s.lastAt.IsZero() {
		s.lastAt = now
	}
	if c.Answered != s.last.Answered || c.BytesIn != s.last.BytesIn {
		s.end(now, false)
		s.last, s.lastAt, s.gap = c, now, 0
		return false
	}
	if !s.since.IsZero() {
		s.conns = max(s.conns, c.InFlight)
		return false
	}
	if c.Timeouts > s.last.Timeouts && now.Sub(s.lastAt) >= s.timeout {
		s.since, s.conns = s.lastAt, max(c.InFlight, 1)
		return true
	}
	return false
}

// end closes the stall in progress at until, keeping the longest.
func (s *stallWatch) end(until time.Time, ongoing bool) {
	if s.since.IsZero() {
		return
	}
	if s.worst == nil || until.Sub(s.since) > s.worst.Until.Sub(s.worst.Since) {
		s.worst = model.NewStall(s.since, until, s.conns, ongoing)
	}
	s.spans = append(s.spans, [2]time.Time{s.since, until})
	s.since, s.conns = time.Time{}, 0
}

// outages are the stalls so far, the one in progress up to loadEnd, in
// seconds since start: the time the target answered nothing.
func (s *stallWatch) outages(start, loadEnd time.Time) []verdict.Outage {
	spans := s.spans
	if !s.since.IsZero() {
		spans = append(slices.Clip(spans), [2]time.Time{s.since, loadEnd})
	}
	var outs []verdict.Outage
	for _, sp := range spans {
		outs = append(outs, verdict.Outage{FromSeconds: sp[0].Sub(start).Seconds(), ToSeconds: sp[1].Sub(start).Seconds(), Why: verdict.OutageStalled})
	}
	return outs
}

// waiting tells whether a wait notice is due: requests wait and nothing
// came for waitNotice since the last answer, or for gap since the last
// notice.
func (s *stallWatch) waiting(now time.Time, c load.Counters) bool {
	if c.InFlight == 0 || now.Sub(s.lastAt) < waitNotice || (s.gap > 0 && now.Sub(s.noticed) < s.gap) {
		return false
	}
	s.noticed, s.gap = now, min(max(2*s.gap, waitNotice), maxWaitNotice)
	return true
}

// watchStall is the runner's hook at each sample under load.
func (r *runner) watchStall() {
	now, c := r.o.Now(), r.eng.Counters()
	s := &r.stall
	if s.timeout == 0 {
		s.timeout = r.eng.Options().Timeout
	}
	if s.observe(now, c) {
		r.o.Log.Warn("the target stopped answering: requests time out and no byte comes",
			zap.Time("since", s.since), zap.Int("connections_open", c.InFlight),
			zap.Duration("timeout", s.timeout))
	}
	if r.o.Progress == nil && s.waiting(now, c) {
		r.o.Log.Warn("waiting for answers: no response and no byte has come",
			zap.Uint64("requests_completed", c.Completed), zap.Int("in_flight", c.InFlight),
			zap.Duration("oldest_waiting", c.Waiting.Round(time.Second)),
			zap.Duration("no_answer_for", now.Sub(s.lastAt).Round(time.Second)),
			zap.Uint64("bytes_received", c.BytesIn))
	}
}

// noteStall puts the longest stall of the load on the report.
func (r *runner) noteStall(rep *model.Report, loadEnd time.Time) {
	r.stall.end(loadEnd, true)
	rep.Target.Stall = r.stall.worst
}
