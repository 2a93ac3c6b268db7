package load

import (
	"sync"
	"time"
)

// lateAfter is how far behind its intended time a send may leave before it
// counts as late.
const lateAfter = time.Millisecond

// runOpen sends requests on a constant schedule: request n is due at
// start + n/Rate whatever happened to earlier ones. A pacer hands each due
// time to an idle worker; when none is idle it starts another, up to
// Concurrency. When all are busy the pacer waits, and the requests it hands
// out late still measure latency from their due time (no coordinated
// omission). A due time more than Timeout in the past is skipped and
// counted as missed: its request would have timed out anyway. Due times
// that pass after a stop are counted as missed too.
func (e *Engine) runOpen(start time.Time) {
	slots := make(chan time.Time)
	var wg sync.WaitGroup
	spawned := 0
	spawn := func() {
		spawned++
		w := e.addWorker()
		wg.Go(func() {
			defer w.closeAll()
			for due := range slots {
				now, intended := e.mono(), due.Sub(e.epoch)
				if now-intended > lateAfter {
					w.st.mu.Lock()
					w.st.late++
					w.st.mu.Unlock()
				}
				w.do(intended, now)
			}
		})
	}
	spawn()
	consumed, handed := e.pace(start, slots, func() bool {
		if spawned >= e.opts.Concurrency {
			return false
		}
		spawn()
		return true
	})
	close(slots)
	wg.Wait()
	e.countMissedAtEnd(start, consumed, handed)
}

// pace runs the schedule until Requests are handed out or the run stops.
// grow is called when no worker is idle; it returns false at the limit.
// pace returns the number of due times consumed (sent or skipped) and the
// number handed out.
func (e *Engine) pace(start time.Time, slots chan<- time.Time, grow func() bool) (consumed, handed uint64) {
	period := float64(time.Second) / e.opts.Rate
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	var n uint64
	for ; e.opts.Requests == 0 || handed < e.opts.Requests; n++ {
		due := start.Add(time.Duration(float64(n) * period))
		if e.opts.Duration > 0 && due.Sub(start) >= e.opts.Duration {
			<-e.stopCtx.Done() // the duration timer fires within one period
			return n, handed
		}
		if d := time.Until(due); d > 0 {
			timer.Reset(d)
			select {
			case <-timer.C:
			case <-e.stopCtx.Done():
				return n, handed
			}
		}
		if time.Since(due) > e.opts.Timeout {
			e.missed.Add(1)
			continue
		}
		if !e.handOut(slots, due, grow) {
			return n, handed
		}
		handed++
	}
	return n, handed
}

// handOut gives due to an idle worker, starting one if allowed, else waits
// for one; false when the run stopped first.
func (e *Engine) handOut(slots chan<- time.Time, due time.Time, grow func() bool) bool {
	select {
	case slots <- due:
		return true
	default:
	}
	grow()
	select {
	case slots <- due:
		return true
	case <-e.stopCtx.Done():
		return false
	}
}

// countMissedAtEnd adds the due times between the last consumed one and
// the stop, which never got a chance to be sent: at most the requests of
// the Requests budget not handed out, so a stop that cuts the last sent
// requests short after the whole budget went out misses nothing.
func (e *Engine) countMissedAtEnd(start time.Time, consumed, handed uint64) {
	if !e.stopped.Load() {
		return
	}
	due := uint64(time.Since(start).Seconds()*e.opts.Rate) + 1
	if e.opts.Duration > 0 {
		due = min(due, uint64(e.opts.Duration.Seconds()*e.opts.Rate))
	}
	if due <= consumed {
		return
	}
	missed := due - consumed
	if e.opts.Requests > 0 {
		missed = min(missed, e.opts.Requests-handed)
	}
	e.missed.Add(missed)
}
