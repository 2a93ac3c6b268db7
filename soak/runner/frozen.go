package runner

import (
	"time"

	"go.uber.org/zap"

	"github.com/soakd/soakd/soak/model"
)

// stopWatch follows the target's stopped state (SIGSTOP) sample by
// sample: it logs when the target is stopped and when it runs again, and
// counts the timeouts of each span, from its first stopped sample until
// one request timeout after it ended (requests queued during the stop
// time out after it). The spans themselves are found again from the
// records (model.StoppedSpans), which the analysis of stored samples
// does too; the timeouts are only known live.
type stopWatch struct {
	log     *zap.Logger
	timeout time.Duration

	open     bool      // the target is stopped now
	from     time.Time // the open span's first sample
	n0       uint64    // timeouts at from
	counting []spanCount
	timeouts map[int64]uint64 // by the span's From, in Unix ns
}

// spanCount is a span that ended less than a request timeout ago, whose
// timeouts are still being counted.
type spanCount struct {
	from  time.Time
	n0    uint64
	until time.Time
}

func newStopWatch(log *zap.Logger, timeout time.Duration) *stopWatch {
	return &stopWatch{log: log, timeout: timeout, timeouts: map[int64]uint64{}}
}

// observe takes one record and the load's timeouts so far.
func (w *stopWatch) observe(rec model.Record, timeouts uint64) {
	stopped := rec.Alive && rec.Stopped > 0
	switch {
	case stopped && !w.open:
		w.open, w.from, w.n0 = true, rec.Time, timeouts
		w.log.Warn("the target is stopped (SIGSTOP or a debugger): it answers nothing until it is continued (SIGCONT)",
			zap.Int32("pid", rec.RootPID), zap.Bool("root_stopped", rec.RootStopped), zap.Int("stopped_procs", rec.Stopped))
	case !stopped && w.open:
		w.open = false
		w.counting = append(w.counting, spanCount{from: w.from, n0: w.n0, until: rec.Time.Add(w.timeout)})
		w.log.Warn("the target runs again after being stopped",
			zap.Int32("pid", rec.RootPID), zap.Duration("stopped_for", rec.Time.Sub(w.from).Round(time.Millisecond)),
			zap.Uint64("timeouts_so_far", timeouts-w.n0))
	}
	w.count(rec.Time, timeouts)
}

// count updates the timeouts of the open span and of those still being
// counted, and lets go of those counted to their end.
func (w *stopWatch) count(now time.Time, timeouts uint64) {
	if w.open {
		w.timeouts[w.from.UnixNano()] = timeouts - w.n0
	}
	kept := w.counting[:0]
	for _, c := range w.counting {
		w.timeouts[c.from.UnixNano()] = timeouts - c.n0
		if now.Before(c.until) {
			kept = append(kept, c)
		}
	}
	w.counting = kept
}

// fill sets the timeouts of the spans found in the records, counting
// the load's timeouts up to its end into the spans still open.
func (w *stopWatch) fill(spans []model.StoppedSpan, timeouts uint64) {
	if len(w.counting) > 0 || w.open {
		w.count(time.Time{}, timeouts)
	}
	for i := range spans {
		spans[i].Timeouts = w.timeouts[spans[i].From.UnixNano()]
	}
}
