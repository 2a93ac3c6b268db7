package analysis

import (
	"runtime"

	"github.com/soakd/soakd/soak/load"
	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/verdict"
)

// cpuInput gathers the CPU verdict's figures over the soak window.
func cpuInput(recs []model.Record, sum *load.Summary, ao Options) verdict.CPUInput {
	in := verdict.CPUInput{CPUs: ao.CPUs, OpenLoop: ao.Concurrency == 0}
	if in.CPUs == 0 {
		in.CPUs = runtime.NumCPU()
	}
	a, b, ok := soakWindow(recs)
	if !ok {
		return in
	}
	in.WallSeconds = b.Elapsed - a.Elapsed
	in.Requests = float64(b.Requests - a.Requests)
	if a.Alive && b.Alive && a.Incarnation == b.Incarnation {
		in.TargetUser = b.CPUUser - a.CPUUser
		in.TargetSystem = b.CPUSystem - a.CPUSystem
	}
	in.NoTargetCPU, in.SplitUnknown = b.NoCPU, b.CPUSplitUnknown
	in.ClientUser = b.SelfUser - a.SelfUser
	in.ClientSystem = b.SelfSystem - a.SelfSystem
	if sum != nil {
		in.MeanResponse = sum.Latency.Mean
	}
	in.Concurrency = float64(ao.Concurrency)
	if in.Concurrency == 0 && in.WallSeconds > 0 {
		in.Concurrency = in.Requests / in.WallSeconds * in.MeanResponse // Little's law
	}
	in.RunqueueWaitRate = runqueueWaitRate(recs, b.Incarnation)
	win := windowOf(recs, a, b)
	in.TargetThreads, in.TargetProcs = meanWorkers(win)
	in.P99Seconds, in.P99AtSeconds, in.RateSeries, in.RateAtSeconds = latencySeries(win)
	in.HotThread, in.HotProcess = hottest(win, b.Incarnation)
	in.LaneRunnable, in.LaneInFlight = laneSeries(win, b.Incarnation)
	in.Capacity, in.CapacitySource = b.CPUCapacity, b.CPUCapacitySource
	in.HostBusy, in.HostCPUs = hostBusy(recs, a, b)
	cs := costSeriesOf(win, b.Incarnation, in.OpenLoop)
	in.CostAtSeconds, in.CostSeconds, in.CostRequests, in.CostContention = cs.at, cs.cost, cs.req, cs.c
	return in
}

// windowOf returns the live records from a to b, by reference: a record
// is about 2 KB, and the live analysis runs every minute.
func windowOf(recs []model.Record, a, b model.Record) []*model.Record {
	var win []*model.Record
	for i := range recs {
		if r := &recs[i]; r.Elapsed >= a.Elapsed && r.Elapsed <= b.Elapsed && r.Alive {
			win = append(win, r)
		}
	}
	return win
}

// meanWorkers is the mean threads and processes of the target over the
// records that read them: a record whose threads were not read (the target
// gone, /proc unreadable) holds a zero that would shrink the mean.
func meanWorkers(win []*model.Record) (threads, procs float64) {
	var nThreads, nProcs float64
	for _, r := range win {
		if r.ThreadsValid {
			threads += float64(r.Threads)
			nThreads++
		}
		if r.Alive {
			procs += float64(r.Procs)
			nProcs++
		}
	}
	if nThreads > 0 {
		threads /= nThreads
	}
	if nProcs > 0 {
		procs /= nProcs
	}
	return threads, procs
}

// latencySeries returns the p99 and rate series of the window.
func latencySeries(win []*model.Record) (p99, p99At, rate, rateAt []float64) {
	for _, r := range win {
		if r.Rate > 0 && r.P99 > 0 { // P99 is of the last progress second: none before the first
			p99, p99At = append(p99, r.P99), append(p99At, r.Elapsed)
			rate, rateAt = append(rate, r.Rate), append(rateAt, r.Elapsed)
		}
	}
	return p99, p99At, rate, rateAt
}

// hottest averages the busiest thread's and process's readings over the
// window's thread passes of one incarnation. The thread and process named
// are the ones busiest in the most readings.
func hottest(win []*model.Record, incarnation int) (*verdict.HotThread, *verdict.HotProcess) {
	type key struct{ pid, tid int32 }
	var th verdict.HotThread
	var pr verdict.HotProcess
	threads, procs := map[key]int{}, map[int32]int{}
	for _, r := range win {
		if !r.HotValid || r.Incarnation != incarnation {
			continue
		}
		th.Readings++
		th.CPU += r.HotThreadCPU
		th.Wait += r.HotThreadWait
		pr.Cores += r.HotProcCores
		if r.HotThreadTID != 0 {
			k := key{r.HotThreadPID, r.HotThreadTID}
			if threads[k]++; threads[k] > threads[key{th.PID, th.TID}] {
				th.PID, th.TID, th.Name = k.pid, k.tid, r.HotThreadName
			}
		}
		if procs[r.HotProcPID]++; procs[r.HotProcPID] > procs[pr.PID] {
			pr.PID, pr.Name = r.HotProcPID, r.HotProcName
		}
	}
	if th.Readings == 0 {
		return nil, nil
	}
	n := float64(th.Readings)
	th.CPU, th.Wait, pr.Cores = th.CPU/n, th.Wait/n, pr.Cores/n
	var hp *verdict.HotProcess
	if pr.PID != 0 {
		hp = &pr
	}
	return &th, hp
}

// laneSeries is, at each thread pass of one incarnation, the busiest
// thread's runnable share and the requests in flight: the load's
// throughput times its median latency over its last progress second.
func laneSeries(win []*model.Record, incarnation int) (runnable, inFlight []float64) {
	for _, r := range win {
		if !r.HotValid || r.Incarnation != incarnation || r.Rate <= 0 || r.P50 <= 0 {
			continue
		}
		runnable = append(runnable, r.HotThreadCPU+r.HotThreadWait)
		inFlight = append(inFlight, r.Rate*r.P50)
	}
	return runnable, inFlight
}

// hostBusy is the machine's busy cores from its CPU readings between a
// and b, or over the whole load when the soak holds fewer than two. Each
// reading's busy and total time are summed over all CPUs.
func hostBusy(recs []model.Record, a, b model.Record) (float64, int) {
	var first, last *model.Record
	pick := func(in func(model.Record) bool) {
		first, last = nil, nil
		for i := range recs {
			if r := &recs[i]; r.HostCPUValid && in(*r) {
				if first == nil {
					first = r
				}
				last = r
			}
		}
	}
	pick(func(r model.Record) bool { return r.Elapsed >= a.Elapsed && r.Elapsed <= b.Elapsed })
	if first == last {
		pick(func(r model.Record) bool { return r.Phase == verdict.Warmup || r.Phase == verdict.Soak })
	}
	if first == last {
		return 0, 0
	}
	total := last.HostCPUTotal - first.HostCPUTotal
	if total <= 0 || last.HostCPUs <= 0 {
		return 0, 0
	}
	return (last.HostCPUBusy - first.HostCPUBusy) / total * float64(last.HostCPUs), last.HostCPUs
}

// Cost windows: each holds at least costWindow seconds (or 1/60 of the
// window, if longer) and costTicks of CPU time, so that 10 ms clock ticks
// stay a small error; a window also closes at 1/6 of the soak. A quarter
// of a second gives a 14 s soak about 40 windows where 1 s gave 12: the
// trend test allows for the windows' wander (shorter windows are more
// alike, which it reads), and 12 windows could not tell a leak from
// wander at all.
const (
	costWindow = 0.25
	costTicks  = 0.1
)

// costWindows is the cost series: each window's middle, its cost, the
// requests completed by its middle, and the contention over it.
type costWindows struct {
	at, cost, req []float64
	c             verdict.Contention
}

// costSeriesOf is costSeries with the requests completed by each
// window's middle and, in an open loop, soakd's own cores over each
// window (in a closed loop they follow the target's throughput).
func costSeriesOf(win []*model.Record, incarnation int, open bool) costWindows {
	var w costWindows
	var recs []*model.Record
	for _, r := range win {
		if r.Incarnation == incarnation {
			recs = append(recs, r)
		}
	}
	var spans [][2]*model.Record
	w.at, w.cost, w.c, spans = costSeriesSpans(recs)
	for _, sp := range spans {
		a, b := sp[0], sp[1]
		w.req = append(w.req, (float64(a.Requests)+float64(b.Requests))/2)
		if open {
			w.c.Client = append(w.c.Client, max((b.SelfUser+b.SelfSystem)-(a.SelfUser+a.SelfSystem), 0)/(b.Elapsed-a.Elapsed))
		}
	}
	return w
}

// costSeries is the target's CPU seconds per request over successive
// windows of one incarnation, at each window's middle, and the machine's
// contention over each window: the cores busy with other work than the
// target's, and the target's run-queue wait per CPU second (each nil
// when read fewer than twice).
func costSeries(win []*model.Record, incarnation int) (at, cost []float64, c verdict.Contention) {
	w := costSeriesOf(win, incarnation, false)
	return w.at, w.cost, w.c
}

// costSeriesSpans is costSeries over the records of one incarnation,
// with the first and last record of each window.
func costSeriesSpans(recs []*model.Record) (at, cost []float64, c verdict.Contention, spans [][2]*model.Record) {
	var host, runq []*model.Record
	for _, r := range recs {
		if r.HostCPUValid {
			host = append(host, r)
		}
		if r.RunqueueValid {
			runq = append(runq, r)
		}
	}
	if len(recs) < 2 {
		return nil, nil, c, nil
	}
	span := recs[len(recs)-1].Elapsed - recs[0].Elapsed
	minSpan := max(costWindow, span/60)
	start := recs[0]
	for _, r := range recs[1:] {
		dt, dcpu := r.Elapsed-start.Elapsed, (r.CPUUser+r.CPUSystem)-(start.CPUUser+start.CPUSystem)
		dreq := float64(r.Requests - start.Requests)
		if dreq <= 0 || ((dt < minSpan || dcpu < costTicks) && dt < span/6) {
			continue
		}
		at = append(at, (start.Elapsed+r.Elapsed)/2)
		cost = append(cost, dcpu/dreq)
		spans = append(spans, [2]*model.Record{start, r})
		if len(host) >= 2 {
			c.Others = append(c.Others, othersBusy(bracket(host, start.Elapsed, r.Elapsed)))
		}
		if len(runq) >= 2 {
			c.Wait = append(c.Wait, waitPerCPU(bracket(runq, start.Elapsed, r.Elapsed)))
		}
		start = r
	}
	return at, cost, c, spans
}

// waitPerCPU is the target's run-queue wait per CPU second it got between
// a and b: about the number of tasks it queues behind on its core.
func waitPerCPU(a, b *model.Record) float64 {
	cpu := (b.CPUUser + b.CPUSystem) - (a.CPUUser + a.CPUSystem)
	if cpu <= 0 {
		return 0
	}
	return max(b.RunqueueWait-a.RunqueueWait, 0) / cpu
}

// bracket returns the readings (of the machine's CPU, or of the run
// queue) that most tightly cover [from, to]: the last at or before from
// and the first at or after to, the first and last readings where none
// does. Both are read with the thread pass only, every few seconds, so a
// cost window may lie between two readings. host holds at least two.
func bracket(host []*model.Record, from, to float64) (a, b *model.Record) {
	a, b = host[0], host[len(host)-1]
	for _, h := range host {
		if h.Elapsed <= from {
			a = h
		}
	}
	for i := len(host) - 1; i >= 0; i-- {
		if host[i].Elapsed >= to {
			b = host[i]
		}
	}
	if a == b { // a window past the last reading, or before the first
		a, b = host[0], host[len(host)-1]
	}
	return a, b
}

// othersBusy is the machine's cores busy between a and b with other work
// than the target's and soakd's: every other process's. soakd's own load
// is left out because it follows the target's throughput: a target whose
// CPU cost rises serves fewer requests in a closed loop, soakd's CPU
// falls with them, and counted here that fall would look like the
// machine's contention moving in step with the rise.
func othersBusy(a, b *model.Record) float64 {
	total, dt := b.HostCPUTotal-a.HostCPUTotal, b.Elapsed-a.Elapsed
	if total <= 0 || dt <= 0 || b.HostCPUs <= 0 {
		return 0
	}
	busy := (b.HostCPUBusy - a.HostCPUBusy) / total * float64(b.HostCPUs)
	target := ((b.CPUUser + b.CPUSystem) - (a.CPUUser + a.CPUSystem)) / dt
	self := max((b.SelfUser+b.SelfSystem)-(a.SelfUser+a.SelfSystem), 0) / dt
	return max(busy-target-self, 0)
}

// runqueueWaitRate is the target's time runnable but waiting for a CPU per
// second, over the load's fresh schedstat readings of one incarnation. The
// readings come every few seconds, so their span can differ a little from
// the soak window; as a rate it does not need to match.
func runqueueWaitRate(recs []model.Record, incarnation int) float64 {
	var first, last *model.Record
	for i := range recs {
		r := &recs[i]
		if !r.RunqueueValid || r.Phase == verdict.Cooldown || r.Phase == verdict.Baseline || r.Incarnation != incarnation {
			continue
		}
		if first == nil {
			first = r
		}
		last = r
	}
	if first == nil || last.Elapsed <= first.Elapsed {
		return 0
	}
	return max(last.RunqueueWait-first.RunqueueWait, 0) / (last.Elapsed - first.Elapsed)
}
