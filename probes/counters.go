package probes

// counters are one process's (or thread's) cumulative values.
type counters struct {
	UTime, STime          uint64 // clock ticks
	CtxVol, CtxInvol      uint64
	RChar, WChar          uint64
	ReadBytes, WriteBytes uint64
	RunWait               uint64 // nanoseconds runnable but waiting for a CPU (schedstat)
	OnCPU                 uint64 // nanoseconds on a CPU (schedstat, or stat's ticks)
}

// fields lists the counters for the delta loop.
func (c *counters) fields() [10]*uint64 {
	return [10]*uint64{&c.UTime, &c.STime, &c.CtxVol, &c.CtxInvol, &c.RChar, &c.WChar, &c.ReadBytes, &c.WriteBytes, &c.RunWait, &c.OnCPU}
}

// accumulator keeps tree-wide totals monotonic while processes come and go:
// it remembers each identity's last values and adds deltas. A new identity
// adds its whole value; a vanished one leaves its last value in the total.
// A value that went down (a counter the kernel reset, or a reused thread
// ID) counts as new.
type accumulator struct {
	last  map[procID]counters
	seen  map[procID]bool
	total counters
}

func newAccumulator() *accumulator {
	return &accumulator{last: map[procID]counters{}, seen: map[procID]bool{}}
}

// observe adds id's current values to the totals.
func (a *accumulator) observe(id procID, cur counters) {
	prev := a.last[id]
	p, c, tot := prev.fields(), cur.fields(), a.total.fields()
	for i := range c {
		if *c[i] >= *p[i] {
			*tot[i] += *c[i] - *p[i]
		} else {
			*tot[i] += *c[i]
		}
	}
	a.last[id] = cur
	a.seen[id] = true
}

// lastOf returns id's previous values (zero if new).
func (a *accumulator) lastOf(id procID) (counters, bool) {
	c, ok := a.last[id]
	return c, ok
}

// sweep forgets identities not observed since the previous sweep; their
// values stay in the total.
func (a *accumulator) sweep() {
	for id := range a.last {
		if !a.seen[id] {
			delete(a.last, id)
		}
	}
	clear(a.seen)
}
