package sweep

import (
	"fmt"
	"math"
	"strings"

	"github.com/dustin/go-humanize"

	"github.com/soakd/soakd/soak/verdict"
)

// Causes of a knee.
const (
	CauseCPU           = "cpu"
	CauseListenQueue   = "listen_queue"
	CauseFDLimit       = "fd_limit"
	CausePerConnection = "per_connection"
	CauseContention    = "contention"
	CauseCoherency     = "coherency"
	CauseSerial        = "serial"
	CauseClient        = "client"
	CauseNone          = "none"
)

// Knee is the level past which throughput stops growing in proportion to
// the clients, and why.
type Knee struct {
	// Concurrency is the last level that still scaled; 0 when the ladder
	// found no knee.
	Concurrency int    `json:"concurrency"`
	Cause       string `json:"cause"`
	Reason      string `json:"reason"` // one sentence
	// Confirmed says the knee held beyond one level: a wall was measured
	// (fds, the accept queue), or two levels past it were measured and
	// neither scaled from it. The ladder stops early only past a
	// confirmed knee.
	Confirmed bool `json:"confirmed"`
}

// Scaling thresholds.
const (
	// proportionShare: a step up the ladder scales when the throughput
	// grows by at least this share of the concurrency's growth.
	proportionShare = 0.5
	// perConnEfficiency: throughput per client at the top level at least
	// this share of the first level's is growth in proportion.
	perConnEfficiency = 0.7
	// idleShare: a target using less than this share of its usable cores
	// is not saturated.
	idleShare = 0.5
	// selectLow and selectHigh bound an fd count that stops at select()'s
	// FD_SETSIZE (1024).
	selectLow, selectHigh = 1000, 1024
	// starvedShare: a target that waited for a core this share of each
	// request was held back by the machine.
	starvedShare = 0.25
	// cpuUsed: cores (or a thread's share of one) a CPU-bound target
	// uses at least.
	cpuUsed = 0.5
	// machineBusy: the machine's busy share at which it is full.
	machineBusy = 0.9
	fdSetSize   = 1024
)

// kneeIndex is the index of the last level that scaled: the first level
// i from which the next grows by less than proportionShare of its
// concurrency's growth, and so does the one after it when it was
// measured (a level after the next that scaled from i again means the
// next was a noisy dip, not a knee); -1 when every step scaled.
func kneeIndex(ls []Level) int {
	for i := 0; i+1 < len(ls); i++ {
		if ls[i].Throughput <= 0 || scaled(ls[i], ls[i+1]) {
			continue
		}
		if i+2 < len(ls) && scaled(ls[i], ls[i+2]) {
			continue
		}
		return i
	}
	return -1
}

// scaled tells whether level b's throughput grew from a's by at least
// proportionShare of the concurrency's growth.
func scaled(a, b Level) bool {
	gain := b.Throughput/a.Throughput - 1
	prop := float64(b.Concurrency)/float64(a.Concurrency) - 1
	return gain >= proportionShare*prop
}

// fdCeiling is the fd count the target stopped at, and which limit: its
// RLIMIT_NOFILE, or select()'s FD_SETSIZE when its fds stay within
// [1000, 1024] while more connections were established (or more clients
// asked) than it had fds.
// ok is false when no level reached either.
func fdCeiling(l Level) (limit int, what string, ok bool) {
	switch {
	case l.FDLimit > 0 && l.FDs >= l.FDLimit-2:
		return l.FDLimit, fmt.Sprintf("its fd limit (RLIMIT_NOFILE %d)", l.FDLimit), true
	case l.FDs >= selectLow && l.FDs <= selectHigh && max(l.Established, float64(l.Concurrency)) > float64(l.FDs)+5:
		return fdSetSize, "select()'s FD_SETSIZE (1024)", true
	}
	return 0, "", false
}

// explain finds the knee and names its cause from the evidence, in the
// order of the hardest walls first: fds (a hard limit whatever the
// throughput did below it), a server that serves one request at a time
// (its accept queue then overflows as a consequence), the accept queue
// (only where the throughput still scaled up to the level below it: an
// overflow past an earlier knee is noted, not blamed), the client, the
// target's cores, the whole machine's cores (which the target shares
// with soakd), a throttle per connection, then the USL's σ and κ. The
// stop rule reads the same knee.
func explain(ls []Level, u USL, pc PerConnection) Knee {
	if len(ls) == 0 {
		return Knee{Cause: CauseNone, Reason: "no level was measured"}
	}
	k := kneeIndex(ls)
	before := func(i int) bool { return k < 0 || k >= i-1 }
	var note string
	for i, l := range ls {
		if _, what, ok := fdCeiling(l); ok {
			return fdKnee(ls, i, what, pc)
		}
	}
	for i, l := range ls {
		if !overflowed(l) {
			continue
		}
		if before(i) && serialReason(ls, k) == "" {
			return queueKnee(ls, i)
		}
		note += fmt.Sprintf("; at %d clients its accept queue (limit %d) overflowed as well (%d handshakes dropped), past the knee", l.Concurrency, l.AcceptQueueLimit, l.ListenOverflows)
		break
	}
	if k < 0 {
		return noKnee(ls)
	}
	kn := throughputKnee(ls, k, u)
	kn.Reason += note
	return kn
}

// throughputKnee names the cause of the knee at level k, the last that
// scaled.
func throughputKnee(ls []Level, k int, u USL) Knee {
	past := ls[k+1]
	kn := Knee{Concurrency: ls[k].Concurrency, Confirmed: k+2 < len(ls)}
	switch {
	case past.CPU.Bound == verdict.BoundClient:
		kn.Cause = CauseClient
		kn.Reason = fmt.Sprintf("at %d clients soakd itself was the limit (%s), not the target: run it on another machine or with more cores", past.Concurrency, past.CPU.Reason)
	case cpuSaturated(past):
		kn.Cause = CauseCPU
		kn.Reason = cpuReason(past)
	case serialReason(ls, k) != "":
		kn.Cause, kn.Concurrency = CauseSerial, 1
		kn.Reason = serialReason(ls, k)
	case machineFull(past) && shortOfCPU(past):
		c := past.CPU
		kn.Cause = CauseCPU
		kn.Reason = fmt.Sprintf("at %d clients all %d cores of the machine were busy (the target %.2f, soakd %.2f, other work the rest) and the target was short of CPU (%s): it could get no more; sweep from another machine to find the target's own limit",
			past.Concurrency, c.HostCPUs, c.Utilization, c.ClientUtilization, shortWords(past))
	default:
		kn.Cause, kn.Reason = uslCause(ls, k, u)
	}
	return kn
}

// Serial bounds, on S = 1/X past the knee, the time per request of a
// server never idle: the median latency of one client alone within
// oneWorker of S (a second worker would make it 2·S or more; above S by
// soakd's own turnaround between a response and its next request), and
// the median latency at n clients within latencyBand of n·S.
var (
	oneWorker   = [2]float64{0.6, 1.9}
	latencyBand = [2]float64{0.6, 1.6}
)

// serialReason is the sentence for a server that serves one request at a
// time, or "" when the evidence says otherwise. Its knee is at one client
// whatever the ladder's throughput knee (1 or 2 clients: a second client
// fills the gaps that soakd's own turnaround leaves at one).
//
// The latency law: past the knee the server is never idle, so S = 1/X is
// its time per request; one worker makes one client alone wait about S
// (a second worker would halve S, so one client would wait 2·S), and
// each request at n clients waits for the n−1 ahead of it: a median
// latency of about n·S. The thread states: its busiest thread was
// runnable (on a CPU or waiting for one) under half the time, the target
// used under half a core (a GIL's threads take turns on one core: that
// is cpu) and did not wait for a core a quarter of each request, so
// neither its CPU nor the machine's set the pace: it was blocked (a
// sleep, a disk, a backend) while the other clients' requests waited.
func serialReason(ls []Level, k int) string {
	if k < 0 || k+1 >= len(ls) || ls[0].Concurrency != 1 || ls[k].Concurrency > 2 {
		return ""
	}
	first, past := ls[0], ls[k+1]
	if first.P50 <= 0 || past.P50 <= 0 || past.Throughput <= 0 {
		return ""
	}
	s := 1 / past.Throughput
	alone, perN := first.P50/s, past.P50/(float64(past.Concurrency)*s)
	if alone < oneWorker[0] || alone >= oneWorker[1] || perN < latencyBand[0] || perN > latencyBand[1] {
		return ""
	}
	c := past.CPU
	who := fmt.Sprintf("it used %.2f cores", c.Utilization)
	if h := c.HotThread; h != nil {
		if h.CPU+h.Wait >= cpuUsed {
			return ""
		}
		who += fmt.Sprintf(" and its busiest thread %d (%s) was on a CPU %.0f %% of the time and waited for one %.0f %%", h.TID, h.Name, 100*h.CPU, 100*h.Wait)
	}
	if c.Utilization >= cpuUsed || starved(past) {
		return ""
	}
	threads := ""
	if past.Threads > 0 {
		threads = singular(fmt.Sprintf(" (%d threads)", past.Threads))
	}
	return fmt.Sprintf("at %d clients the target%s served %.4g req/s, %s a request (S = 1/throughput), with a p50 of %s = %.2f × %d × S, one client alone %s = %.2f × S, while %s: it serves one request at a time, its thread busy or blocked for each (a single thread, one worker, or a lock held across a wait), at most about %.0f req/s whatever the clients",
		past.Concurrency, threads, past.Throughput, dur(s), dur(past.P50), perN, past.Concurrency, dur(first.P50), alone, who, past.Throughput)
}

// shortWords says how the target was short of CPU.
func shortWords(l Level) string {
	c := l.CPU
	var w []string
	if c.ResponseSeconds > 0 && c.RunqueueWaitSeconds > 0 {
		w = append(w, fmt.Sprintf("it waited for a core %.0f %% of each request", 100*c.RunqueueWaitSeconds/c.ResponseSeconds))
	}
	if h := c.HotThread; h != nil {
		w = append(w, fmt.Sprintf("its busiest thread was runnable %.0f %% of the time, on a CPU %.0f %%", 100*(h.CPU+h.Wait), 100*h.CPU))
	}
	if len(w) == 0 {
		return fmt.Sprintf("it used %.2f cores", c.Utilization)
	}
	return strings.Join(w, "; ")
}

// shortOfCPU tells whether the target wanted more CPU than it got: it
// used half a core, its busiest thread was runnable half the time, or
// it waited for a core a quarter of each request.
func shortOfCPU(l Level) bool {
	c := l.CPU
	return c.Utilization >= cpuUsed || starved(l) || (c.HotThread != nil && c.HotThread.CPU+c.HotThread.Wait >= cpuUsed)
}

// overflowed tells whether the level's own listener overflowed: drops
// counted, and the queue seen full or the retransmits' latency modes (the
// counters are the namespace's, which other servers share).
func overflowed(l Level) bool {
	full := l.AcceptQueueLimit > 0 && l.AcceptQueueMax >= l.AcceptQueueLimit
	return l.ListenOverflows > 0 && (full || len(l.SynModes) > 0)
}

// fdKnee puts the knee at the last level below the fd wall (level i).
func fdKnee(ls []Level, i int, what string, pc PerConnection) Knee {
	at := ls[i]
	kn := Knee{Cause: CauseFDLimit, Concurrency: at.Concurrency, Confirmed: true}
	if i > 0 {
		kn.Concurrency = ls[i-1].Concurrency
	}
	kn.Reason = fmt.Sprintf("at %d clients the target's fds stopped at %d, %s, with %.0f connections established", at.Concurrency, at.FDs, what, at.Established)
	if pc.CeilingConnections > 0 {
		kn.Reason += fmt.Sprintf("; at %.2g fds per connection the ceiling is about %.0f connections", pc.FDs, pc.CeilingConnections)
	}
	return kn
}

func queueKnee(ls []Level, i int) Knee {
	at := ls[i]
	kn := Knee{Cause: CauseListenQueue, Concurrency: at.Concurrency, Confirmed: true}
	if i > 0 {
		kn.Concurrency = ls[i-1].Concurrency
	}
	kn.Reason = fmt.Sprintf("at %d clients the accept queue (limit %d) overflowed: %d handshakes dropped (ListenOverflows), %d SYNs retransmitted",
		at.Concurrency, at.AcceptQueueLimit, at.ListenOverflows, at.SynRetrans)
	if len(at.SynModes) > 0 {
		kn.Reason += fmt.Sprintf(", and latencies cluster near %v s, the retransmits' signature (max %.2f s)", at.SynModes, at.Max)
	}
	kn.Reason += ": the server accepts too slowly for its backlog; raise listen()'s backlog (and net.core.somaxconn) or accept faster"
	return kn
}

func cpuReason(l Level) string {
	c := l.CPU
	s := fmt.Sprintf("at %d clients the target used %.2f of its %.3g usable cores (%.0f %% user), %.3g ms of CPU per request",
		l.Concurrency, c.Utilization, c.Capacity, 100*c.UserShare, 1000*c.DemandSeconds)
	if h := c.HotThread; h != nil && c.Evidence == verdict.EvidenceThread {
		s += fmt.Sprintf("; its thread %d (%s) was on a CPU %.0f %% of the time", h.TID, h.Name, 100*h.CPU)
	}
	return s + ": it is CPU-bound"
}

// noKnee is the verdict of a ladder that scaled at every step: cpu when
// the target was CPU-bound at the top level all the same (its last step
// up still gained), a throttle per connection when it idled without
// waiting for a core, else no knee.
func noKnee(ls []Level) Knee {
	first, top := ls[0], ls[len(ls)-1]
	perClient := func(l Level) float64 { return l.Throughput / float64(l.Concurrency) }
	if cpuSaturated(top) {
		return Knee{Concurrency: top.Concurrency, Cause: CauseCPU,
			Reason: cpuReason(top) + fmt.Sprintf("; throughput still grew up to %d clients, so the knee is there or just past it", top.Concurrency)}
	}
	if len(ls) >= 2 && first.Throughput > 0 && perClient(top) >= perConnEfficiency*perClient(first) && idle(top) && !starved(top) {
		return Knee{Cause: CausePerConnection, Reason: fmt.Sprintf(
			"throughput grew with the clients (%.3g req/s per client at %d, %.3g at %d; p50 %.3g ms) while the target used %.0f %% of its cores: each connection is throttled (a think time, Nagle and delayed ACKs), not the server",
			perClient(first), first.Concurrency, perClient(top), top.Concurrency, 1000*top.P50, 100*top.CPU.Utilization/capacity(top))}
	}
	kn := Knee{Cause: CauseNone, Reason: fmt.Sprintf("throughput grew at every step up to %d clients (%.4g req/s): no knee within the ladder", top.Concurrency, top.Throughput)}
	if starved(top) {
		kn.Reason += fmt.Sprintf("; yet the target was short of CPU at %d clients (%s): other work on the machine held it back, so the ladder cannot show its own limit", top.Concurrency, top.CPU.Reason)
	}
	return kn
}

// starved tells whether the target waited for a core a quarter of each
// request or more: a busy machine, not the target, set the pace.
func starved(l Level) bool {
	return l.CPU.ResponseSeconds > 0 && l.CPU.RunqueueWaitSeconds >= starvedShare*l.CPU.ResponseSeconds
}

// cpuSaturated tells whether the CPU verdict said cpu and the target
// did use the CPU: half a core, or its busiest thread on a CPU half the
// time. On a machine with a load of 30 the verdict's rule of a thread
// runnable 85 % of the time also catches a sleeper that waits for a
// core to answer; that is the machine's contention, not the target's
// demand.
func cpuSaturated(l Level) bool {
	c := l.CPU
	if c.Bound != verdict.BoundCPU {
		return false
	}
	return c.Utilization >= cpuUsed || (c.HotThread != nil && c.HotThread.CPU >= cpuUsed)
}

// machineFull tells whether the whole machine's cores were busy.
func machineFull(l Level) bool {
	return l.Requests > 0 && l.CPU.HostCPUs > 0 && l.CPU.HostUtilization >= machineBusy*float64(l.CPU.HostCPUs)
}

func capacity(l Level) float64 {
	if l.CPU.Capacity > 0 {
		return l.CPU.Capacity
	}
	return math.Max(float64(l.CPU.HostCPUs), 1)
}

func idle(l Level) bool { return l.CPU.Utilization < idleShare*capacity(l) }

// uslCause names a knee that neither cores nor the client explain: σ
// (contention, a serial share) or κ (coherency, crosstalk that makes
// throughput fall past the peak).
func uslCause(ls []Level, k int, u USL) (string, string) {
	top := ls[len(ls)-1]
	if u.OK && u.Kappa > 0 && u.Peak <= float64(top.Concurrency) && top.Throughput < ls[k].Throughput {
		return CauseCoherency, fmt.Sprintf("throughput peaked near %.0f clients and fell after (USL κ = %.3g, σ = %.3g) while the target was not CPU-bound: its workers wait on one another (crosstalk, cache or lock coherency)", u.Peak, u.Kappa, u.Sigma)
	}
	if !u.OK {
		return CauseContention, fmt.Sprintf("throughput stopped growing in proportion past %d clients while the target was neither CPU-bound nor throttled per connection: a serial section (a lock, one worker) may hold it back (too few levels to fit the USL's σ and κ: add levels to tell)", ls[k].Concurrency)
	}
	return CauseContention, fmt.Sprintf("throughput stopped growing in proportion past %d clients (USL σ = %.3g, κ = %.3g) while the target was neither CPU-bound nor throttled per connection: a serial section (a lock, one worker) holds it back", ls[k].Concurrency, u.Sigma, u.Kappa)
}

// bytesText is a size for a sentence: 48 KiB.
func bytesText(b float64) string {
	if b < 0 {
		return "-" + humanize.IBytes(uint64(-b))
	}
	return humanize.IBytes(uint64(b))
}
