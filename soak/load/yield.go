package load

import (
	"runtime"
	"time"
)

// yieldEvery is how often a goroutine that never parks (a worker on a
// blocking socket, an event loop) passes through the scheduler.
const yieldEvery = 5 * time.Millisecond

// yielder makes a goroutine that never parks call runtime.Gosched now and
// then. The runtime's sysmon takes to be stuck a goroutine that has not
// been rescheduled for 10 ms: it signals the thread to preempt it and,
// when it sits in a system call (a blocking read, epoll_wait), takes its
// P away and hands it to another thread. Each such retake also resets
// sysmon's own sleep to 20 µs, so at c=1 sysmon woke about 6 000 times a
// second, and the worker paid a signal and a thread hand-off every 10 ms.
// One Gosched every 5 ms keeps the goroutine's schedule tick moving,
// and sysmon backs off to its 10 ms sleep. Not more often: a Gosched
// wakes another thread to look for work (two futex calls), 0.036 futex
// calls per request at c=50 with one every 1 ms, 0.008 with 5 ms.
type yielder struct{ last time.Duration }

// maybe yields when yieldEvery has passed since the last yield; now is an
// Engine.mono time the caller has just read.
func (y *yielder) maybe(now time.Duration) {
	if now-y.last >= yieldEvery {
		y.last = now
		runtime.Gosched()
	}
}
