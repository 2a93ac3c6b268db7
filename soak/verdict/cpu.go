package verdict

import (
	"fmt"
	"math"

	"github.com/soakd/soakd/soak/trend"
)

// CPU verdict thresholds, from operational analysis (utilisation law
// U = X·D, Little's law N = X·R).
const (
	cpuBusy          = 0.8  // D·N/R (or D/R) at or above: the target computes nearly the whole request
	ioBusy           = 0.3  // at or below: the target mostly waits
	nearParallelism  = 0.9  // U at this fraction of the usable cores counts as saturated
	threadSaturated  = 0.9  // a thread on a CPU this share of the time is saturated
	threadRunnable   = 0.85 // a thread runnable (on a CPU or waiting for one) this share is saturated
	laneIdle         = 0.5  // an open loop is io only while no thread is runnable this share
	clientSaturated  = 0.9  // soakd's own CPU at this fraction of its usable cores
	machineSaturated = 0.9  // the machine's busy share at which it is full
	clientShare      = 0.25 // soakd must use this share of the machine's cores to be blamed for filling it
	kernelHeavy      = 0.5  // system share above which the work is in the kernel
	costRise         = 0.25 // a rise of the CPU per request over the soak that is a CPU leak
	costAlpha        = 0.005
	costMinWindows   = 6
	// costFloorCores and costHorizon are the CPU cost's absolute floor: a
	// rise of the cost per request that, at the soak's throughput, adds
	// less than costFloorCores of one core over costHorizon seconds is
	// negligible, as memory's limit-share floor (Thresholds.
	// HorizonLimitShare, 10 % of the limit over the 24 h Horizon) is with
	// the smallest CPU limit a server has, one core (a single thread
	// saturates there). See docs/cpu-leak.md, "The absolute floor".
	costFloorCores = 0.1
	costHorizon    = 86400
	// starvedWait: a target waiting for a CPU this share of the time, and
	// longer than it ran, while other work held starvedOthers cores or
	// more (when the machine's CPU time was read), is starved: whether it
	// is CPU-bound or waits cannot be told.
	starvedWait   = 0.5
	starvedOthers = 0.5
)

// Bounds of the CPU verdict.
const (
	BoundCPU          = "cpu"
	BoundIO           = "io"
	BoundClient       = "client"
	BoundInconclusive = "inconclusive"
)

// Evidence names the rule that decided a CPU verdict.
const (
	EvidenceThread       = "thread"          // a thread on a CPU ≥ 90 % of the time
	EvidenceCapacity     = "capacity"        // the tree used ≥ 90 % of the cores it may use
	EvidenceClient       = "client_cpu"      // soakd's own CPU was saturated
	EvidenceMachine      = "machine_cpu"     // soakd filled the machine while the target had room
	EvidenceStarved      = "starved"         // waiting for a CPU most of the time while other work held the cores
	EvidenceThreadWait   = "thread_runnable" // a thread runnable ≥ 85 %: on a CPU or waiting for one
	EvidenceRequestShare = "request_share"   // open loop: D/R, the share of a request spent on a CPU
	EvidenceBusyFraction = "busy_fraction"   // closed loop: D·N/R per usable core
	EvidenceMissing      = "missing"         // figures were missing
)

// CPUInput holds the measured figures for the CPU verdict, over the soak
// phase.
type CPUInput struct {
	WallSeconds  float64 // length of the soak window
	TargetUser   float64 // target CPU user seconds within the window
	TargetSystem float64
	// SplitUnknown says the source gives user+system time only, held in
	// TargetUser (a remote process_cpu_seconds_total); NoTargetCPU that it
	// gives no CPU time at all.
	SplitUnknown bool
	NoTargetCPU  bool
	ClientUser   float64 // soakd's own CPU seconds within the window
	ClientSystem float64
	Requests     float64 // completed requests within the window
	MeanResponse float64 // R, seconds
	// Concurrency is N, the requests in flight: the workers of a closed
	// loop. In an open loop (OpenLoop) it is X·R by Little's law, and may
	// be below 1.
	Concurrency   float64
	OpenLoop      bool
	TargetThreads float64 // mean threads of the target
	TargetProcs   float64 // mean processes of the target
	CPUs          int     // the machine's cores as soakd counts them
	// Capacity is the cores the target may use (its affinity, cgroup
	// cpuset and cpu.max quota) and CapacitySource what limits it; 0 when
	// unknown, and then CPUs stands in.
	Capacity       float64
	CapacitySource string
	// HotThread and HotProcess are the busiest thread and process over
	// the soak; nil when the thread pass gave no reading.
	HotThread  *HotThread
	HotProcess *HotProcess
	// HostBusy is the whole machine's busy cores over the soak (/proc/stat)
	// and HostCPUs its CPU count; 0 when unknown.
	HostBusy         float64
	HostCPUs         int
	P99Seconds       []float64
	P99AtSeconds     []float64 // time of each P99 figure, for the drift slope
	RateSeries       []float64 // throughput per interval
	RateAtSeconds    []float64
	ClientSaturation float64 // optional override; 0 = computed
	// RunqueueWaitRate is the target's time runnable but waiting for a
	// CPU, per second of wall time (schedstat); 0 when unknown.
	RunqueueWaitRate float64
	// CostSeconds is the target's CPU seconds per request over successive
	// windows of the soak, at CostAtSeconds (each window's middle).
	CostSeconds   []float64
	CostAtSeconds []float64
	// CostRequests is the requests completed by each window's middle.
	CostRequests []float64
	// CostContention is the machine's contention over each cost window.
	CostContention Contention
	// LaneRunnable is the busiest thread's runnable share (on a CPU or
	// waiting for one) at each thread pass of the soak, and LaneInFlight
	// the requests in flight over the same pass (throughput × median
	// latency): together they show requests piling up behind a thread
	// that a burst of other work kept from its core (InFlightRunnable).
	LaneRunnable []float64
	LaneInFlight []float64
}

// HotThread is the busiest thread of the target over the soak: the one
// runnable the longest at each thread reading, averaged over the
// readings.
type HotThread struct {
	PID  int32  `json:"pid"`
	TID  int32  `json:"tid"`
	Name string `json:"name"` // the thread's name (comm)
	// CPU is its mean share of one core on a CPU; Wait its mean share
	// runnable but waiting for a CPU.
	CPU      float64 `json:"cpu"`
	Wait     float64 `json:"wait"`
	Readings int     `json:"readings"`
}

// HotProcess is the busiest process of the target over the soak.
type HotProcess struct {
	PID   int32   `json:"pid"`
	Name  string  `json:"name"`
	Cores float64 `json:"cores"` // mean user+system, in cores
}

// CPU is the report's "cpu" object. It carries every input of the
// verdict, and Evidence names the rule that decided it.
type CPU struct {
	Bound           string  `json:"bound"` // "cpu", "io", "client", "inconclusive"
	Evidence        string  `json:"evidence"`
	Utilization     float64 `json:"utilization"`      // U, cores
	Throughput      float64 `json:"throughput"`       // X, req/s
	DemandSeconds   float64 `json:"demand_seconds"`   // D = U/X
	ResponseSeconds float64 `json:"response_seconds"` // R
	Concurrency     float64 `json:"concurrency"`      // N
	OpenLoop        bool    `json:"open_loop"`
	BusyFraction    float64 `json:"busy_fraction"` // D·N/R; equals U by Little's law, judged per usable core
	// RequestCPUShare is D/R, the share of each request's time the target
	// spent on a CPU: the open loop's evidence.
	RequestCPUShare float64 `json:"request_cpu_share"`
	// RunqueueWaitSeconds is the time per request the target was runnable
	// but waiting for a CPU (W), and CPUWaitFraction W·N/R: a CPU-bound
	// target on a busy machine waits for a CPU, not on I/O.
	RunqueueWaitSeconds float64 `json:"runqueue_wait_seconds"`
	CPUWaitFraction     float64 `json:"cpu_wait_fraction"`
	// InFlightRunnable is the busiest thread's runnable share (on a CPU
	// or waiting for one) as the requests in flight saw it: its share at
	// each thread pass, weighted by the requests in flight over the pass.
	// Requests queued behind a runnable thread wait for its CPU, a time
	// neither D nor W counts, and a burst of other work piles them up
	// behind it: an open loop reads io only while this share, like the
	// thread's plain mean, is under a half. 0 without thread passes.
	InFlightRunnable float64 `json:"in_flight_runnable,omitempty"`
	// Capacity is the cores the target may use, from CapacitySource.
	Capacity       float64     `json:"capacity_cores"`
	CapacitySource string      `json:"capacity_source"`
	HotThread      *HotThread  `json:"hot_thread"`
	HotProcess     *HotProcess `json:"hot_process"`
	UserShare      float64     `json:"user_share"`
	SystemShare    float64     `json:"system_share"`
	KernelHeavy    bool        `json:"kernel_heavy"`
	// SplitUnknown says the source gave user+system time only: UserShare
	// and SystemShare are then 0, not measured.
	SplitUnknown bool `json:"split_unknown,omitempty"`
	// CPUSecondsPerRequest is D over the whole soak; Cost is its drift.
	CPUSecondsPerRequest float64   `json:"cpu_seconds_per_request"`
	Cost                 CostDrift `json:"cost_per_request"`
	ClientUtilization    float64   `json:"client_utilization"` // soakd's own CPU, cores
	// HostUtilization is the whole machine's busy cores (soakd, the
	// target and everything else) of HostCPUs; 0 when unknown.
	HostUtilization float64 `json:"host_utilization"`
	HostCPUs        int     `json:"host_cpus"`
	P99SlopePerHour float64 `json:"p99_slope_seconds_per_hour"`
	ThroughputDecay float64 `json:"throughput_decay"` // fractional change first→last third
	Reason          string  `json:"reason"`
}

// CostDrift is the trend of the target's CPU seconds per request over the
// soak. A cost that keeps rising is a CPU leak: a structure that each
// request scans and that grows.
type CostDrift struct {
	Windows      int     `json:"windows"`
	Start        float64 `json:"start_seconds"` // fitted CPU seconds per request at the soak's start
	End          float64 `json:"end_seconds"`   // and at its end
	SlopePerHour float64 `json:"slope_seconds_per_hour"`
	// CI95 is the slope's 95 % interval, seconds per request per hour.
	CI95   [2]float64 `json:"ci95_seconds_per_hour"`
	Change float64    `json:"change"` // End/Start − 1
	// Axis is what the decision fitted the cost against: "requests" (the
	// requests served by each window's middle) or "time". Start, End and
	// Change are of that fit; the slope and its interval are of time.
	Axis string `json:"axis,omitempty"`
	// PValue is the one-sided Mann–Kendall p (increasing) with the
	// windows' wander allowed for: Var(S) multiplied by WanderInflation;
	// NaivePValue is the same test taking the windows as independent.
	PValue          float64 `json:"p_value"`
	NaivePValue     float64 `json:"naive_p_value"`
	WanderInflation float64 `json:"wander_inflation"`
	Rising          bool    `json:"rising"`
	// Inconclusive says the cost rose over time but the machine's
	// contention explains the rise or cannot be told from it (Reason).
	Inconclusive bool `json:"inconclusive,omitempty"`
	// ContentionStart and ContentionEnd are the machine's cores busy with
	// other work than the target's and soakd's over the first and last
	// third of the windows; AdjustedChange is the rise over the soak left
	// to time once the contention is fitted out.
	ContentionStart float64 `json:"contention_start_cores"`
	ContentionEnd   float64 `json:"contention_end_cores"`
	// WaitStart and WaitEnd are the target's run-queue wait per CPU
	// second it got, over the first and last third of the windows.
	WaitStart float64 `json:"runqueue_wait_start"`
	WaitEnd   float64 `json:"runqueue_wait_end"`
	// ClientStart and ClientEnd are soakd's own cores over the first and
	// last third of the windows, in an open loop only (0 otherwise).
	ClientStart    float64 `json:"client_start_cores,omitempty"`
	ClientEnd      float64 `json:"client_end_cores,omitempty"`
	AdjustedChange float64 `json:"adjusted_change"`
	// FloorPerHour is the absolute floor in force, as a slope of the cost
	// (seconds per request per hour): the slope that adds costFloorCores
	// (10 %) of one core over costHorizon (24 h) at the soak's throughput;
	// 0 when the throughput is unknown, and then no floor is in force.
	// HorizonCores is what the slope's 95 % interval's upper end (CI95[1])
	// adds over those 24 h at that throughput, in cores.
	FloorPerHour float64 `json:"floor_seconds_per_hour,omitempty"`
	HorizonCores float64 `json:"horizon_cores,omitempty"`
	Reason       string  `json:"reason,omitempty"`
}

// UnderFloor tells whether the cost's rise is proven negligible by the
// absolute floor: the upper end of its slope's 95 % interval, at the
// soak's throughput, adds less than 10 % of one core over 24 h.
func (d CostDrift) UnderFloor() bool {
	return d.FloorPerHour > 0 && d.CI95[1] < d.FloorPerHour
}

// AnalyzeCPU says whether the target was CPU-bound, waited on I/O, or was
// held back by the client. Rules, in order; the first that holds decides:
//   - cpu (thread): a thread was on a CPU ≥ 90 % of the time. The server
//     cannot go faster without more parallelism, however many idle
//     threads it has.
//   - cpu (capacity): the tree used ≥ 90 % of the cores it may use: its
//     affinity, cpuset and cpu.max quota (soakd's CPU count when none was
//     read).
//   - client (client_cpu): soakd's own CPU ≥ 90 % × min(CPUs, N) cores,
//     or ≥ 90 % of the machine (each closed-loop worker is about one busy
//     goroutine); ClientSaturation, when set, replaces the computed
//     fraction.
//   - client (machine_cpu): the machine as a whole (soakd, the target and
//     everything else) was ≥ 90 % busy while the target was under its own
//     limit, and soakd used at least as much CPU as the target and at
//     least a quarter of the machine's cores (a machine filled by others
//     is not the client's doing).
//   - inconclusive (starved): the target waited for a CPU at least half
//     of the time and longer than it ran (its busiest thread, or each
//     request: (W·N/R) per usable core, W/R in an open loop), while other
//     work (soakd and the rest of the machine) held at least half a core
//     (when /proc/stat was read): it got too little CPU to tell whether
//     it is CPU-bound or waits.
//   - cpu (thread_runnable): a thread was runnable ≥ 85 % of the time, on
//     a CPU or waiting for one: saturated on a busy machine, where requests
//     queue for it (a queue that at this load is several times the
//     thread's own time per request).
//   - open loop (request_share): (D+W)/R, the share of each request spent
//     on a CPU or waiting for one, ≥ 0.8 is cpu, ≤ 0.3 is io. N is not
//     raised to 1: the utilisation is reported apart. A request that
//     queues behind a busy thread is not on a CPU either, so io also needs
//     the busiest thread runnable under 50 % of the time (else
//     inconclusive).
//   - closed loop (busy_fraction): D·N/R (= U) per usable core
//     P = min(capacity, threads or processes, N), with W·N/R added: cpu at
//     ≥ 0.8·P (or U ≥ 0.9·P), io at ≤ 0.3·P.
//   - inconclusive otherwise, or when the window, requests or target CPU
//     time are missing (R too, for the last two rules).
//
// U = Δ(user+system)/Δwall in cores, X = requests/wall, D = U/X; when N is
// unknown it is taken from Little's law (N = X·R).
func AnalyzeCPU(in CPUInput) CPU {
	c := CPU{Bound: BoundInconclusive, Evidence: EvidenceMissing, ResponseSeconds: in.MeanResponse,
		Concurrency: in.Concurrency, OpenLoop: in.OpenLoop, HotThread: in.HotThread, HotProcess: in.HotProcess,
		HostUtilization: in.HostBusy, HostCPUs: in.HostCPUs}
	c.Capacity, c.CapacitySource = capacity(in)
	c.P99SlopePerHour = p99Slope(in)
	c.ThroughputDecay = decay(in.RateAtSeconds, in.RateSeries)
	c.Cost = costDriftOn(in.CostAtSeconds, in.CostRequests, in.CostSeconds, in.CostContention, soakRate(in))
	if in.WallSeconds <= 0 || in.Requests <= 0 {
		c.Reason = "inconclusive: no soak window or no completed requests"
		return c
	}
	busy := in.TargetUser + in.TargetSystem
	c.Utilization = busy / in.WallSeconds
	c.Throughput = in.Requests / in.WallSeconds
	c.DemandSeconds = c.Utilization / c.Throughput
	c.CPUSecondsPerRequest = busy / in.Requests
	c.ClientUtilization = (in.ClientUser + in.ClientSystem) / in.WallSeconds
	if busy > 0 && !in.SplitUnknown {
		c.UserShare, c.SystemShare = in.TargetUser/busy, in.TargetSystem/busy
	}
	c.SplitUnknown = in.SplitUnknown
	c.KernelHeavy = c.SystemShare > kernelHeavy
	if in.NoTargetCPU {
		c.Reason = "inconclusive: the probe source has no CPU counter for the target"
		return c
	}
	if c.Concurrency <= 0 {
		c.Concurrency = c.Throughput * in.MeanResponse
	}
	if busy <= 0 {
		c.Reason = "inconclusive: no target CPU time was measured in the soak window (a restart, or too short a window for 10 ms clock ticks)"
		return c
	}
	if in.RunqueueWaitRate > 0 {
		c.RunqueueWaitSeconds = in.RunqueueWaitRate / c.Throughput
	}
	if in.MeanResponse > 0 {
		c.BusyFraction = c.DemandSeconds * c.Concurrency / in.MeanResponse
		c.RequestCPUShare = c.DemandSeconds / in.MeanResponse
		c.CPUWaitFraction = c.RunqueueWaitSeconds * c.Concurrency / in.MeanResponse
	}
	c.InFlightRunnable = inFlightRunnable(in)
	c.Bound, c.Evidence = decideCPU(c, in)
	c.Reason = cpuReason(c, in)
	return c
}

// capacity is the cores the target may use and where the figure comes
// from.
func capacity(in CPUInput) (float64, string) {
	if in.Capacity > 0 && !math.IsInf(in.Capacity, 0) {
		return in.Capacity, in.CapacitySource
	}
	if in.CPUs > 0 {
		return float64(in.CPUs), "soakd's CPU count (no affinity or cgroup limit was read)"
	}
	return 0, ""
}

func decideCPU(c CPU, in CPUInput) (bound, evidence string) {
	h := c.HotThread
	switch {
	case h != nil && h.CPU >= threadSaturated:
		return BoundCPU, EvidenceThread
	case c.Capacity > 0 && c.Utilization >= nearParallelism*c.Capacity:
		return BoundCPU, EvidenceCapacity
	case clientSaturation(c, in) >= clientSaturated:
		return BoundClient, EvidenceClient
	case clientFillsMachine(c, in):
		return BoundClient, EvidenceMachine
	case starvation(c, in).starved:
		return BoundInconclusive, EvidenceStarved
	case h != nil && h.CPU+h.Wait >= threadRunnable:
		return BoundCPU, EvidenceThreadWait
	case in.MeanResponse <= 0 || c.Concurrency <= 0:
		return BoundInconclusive, EvidenceMissing
	case in.OpenLoop:
		b := byShare(c.RequestCPUShare+c.RunqueueWaitSeconds/in.MeanResponse, 1)
		if b == BoundIO && (h != nil && h.CPU+h.Wait >= laneIdle || c.InFlightRunnable >= laneIdle) {
			b = BoundInconclusive
		}
		return b, EvidenceRequestShare
	}
	p := parallelism(c, in)
	if c.Utilization >= nearParallelism*p {
		return BoundCPU, EvidenceBusyFraction
	}
	return byShare(c.BusyFraction+c.CPUWaitFraction, p), EvidenceBusyFraction
}

// starve is how long the target waited for a CPU and ran, as a share of
// the time, by the measure that waited the most: its busiest thread
// (thread) or each request (W·N/R and D·N/R per usable core; W/R and D/R
// in an open loop); starved says it is starved.
type starve struct {
	wait, run float64
	thread    bool
	starved   bool
}

func starvation(c CPU, in CPUInput) starve {
	var s starve
	if in.MeanResponse > 0 && c.Concurrency > 0 {
		if in.OpenLoop {
			s.wait, s.run = c.RunqueueWaitSeconds/in.MeanResponse, c.RequestCPUShare
		} else {
			p := parallelism(c, in)
			s.wait, s.run = c.CPUWaitFraction/p, c.BusyFraction/p
		}
	}
	if h := c.HotThread; h != nil && h.Wait > s.wait {
		s = starve{wait: h.Wait, run: h.CPU, thread: true}
	}
	s.starved = s.wait >= starvedWait && s.wait > s.run &&
		(c.HostUtilization <= 0 || otherWork(c) >= starvedOthers)
	return s
}

// otherWork is the machine's busy cores that were not the target's:
// soakd's and the others'.
func otherWork(c CPU) float64 {
	return math.Max(machineBusy(c)-c.Utilization, 0)
}

// starvedText says how long the target waited for a CPU and who held
// the cores.
func starvedText(c CPU, in CPUInput) string {
	s := starvation(c, in)
	by := "each request"
	ran := fmt.Sprintf("waited for a CPU %s of the time and ran %s", pct(s.wait), pct(s.run))
	switch p := parallelism(c, in); {
	case s.thread:
		by = threadText(c.HotThread)
	case in.OpenLoop:
		ran += fmt.Sprintf(" (W/R = %s / %s)", dur(c.RunqueueWaitSeconds), dur(c.ResponseSeconds))
	case p != 1:
		ran = fmt.Sprintf("waited for a CPU %s of the time per usable core and ran %s (W·N/R = %.2f, D·N/R = %.2f over %s cores)",
			pct(s.wait), pct(s.run), c.CPUWaitFraction, c.BusyFraction, num(p))
	default:
		ran += fmt.Sprintf(" (W·N/R = %.2f, D·N/R = %.2f)", c.CPUWaitFraction, c.BusyFraction)
	}
	held := "while other work held the cores (the machine's CPU time was not read)"
	if n := machineCPUs(c, in); c.HostUtilization > 0 && n > 0 {
		held = fmt.Sprintf("while other work held %.2f of the %s cores (soakd %.2f, others %.2f)",
			otherWork(c), num(n), c.ClientUtilization, othersBusy(c, machineBusy(c)))
	}
	return fmt.Sprintf("inconclusive: starved: %s %s, %s; "+
		"whether it is CPU-bound or waits cannot be told until it gets its cores (the target used %.2f cores at %s req/s)",
		by, ran, held, c.Utilization, num(c.Throughput))
}

// inFlightRunnable is the busiest thread's runnable share at each thread
// pass, weighted by the requests in flight over the pass; 0 without such
// readings.
func inFlightRunnable(in CPUInput) float64 {
	var all, runnable float64
	for i, n := range in.LaneInFlight {
		if i >= len(in.LaneRunnable) || n <= 0 || math.IsNaN(n) || math.IsNaN(in.LaneRunnable[i]) {
			continue
		}
		all += n
		runnable += n * min(in.LaneRunnable[i], 1)
	}
	if all <= 0 {
		return 0
	}
	return runnable / all
}

// byShare judges a busy share against p usable cores.
func byShare(share, p float64) string {
	switch {
	case share >= cpuBusy*p:
		return BoundCPU
	case share <= ioBusy*p:
		return BoundIO
	}
	return BoundInconclusive
}

// parallelism is the cores a closed-loop target can keep busy:
// min(capacity, its threads or processes when known, N), at least 1.
func parallelism(c CPU, in CPUInput) float64 {
	p := math.Max(c.Concurrency, 1)
	if c.Capacity > 0 {
		p = math.Min(p, c.Capacity)
	}
	if w := math.Max(in.TargetThreads, in.TargetProcs); w > 0 {
		p = math.Min(p, w)
	}
	return math.Max(p, 1)
}

// clientSaturation is soakd's CPU as a fraction of what it can use.
func clientSaturation(c CPU, in CPUInput) float64 {
	if in.ClientSaturation > 0 {
		return in.ClientSaturation
	}
	usable := math.Max(c.Concurrency, 1)
	if n := machineCPUs(c, in); n > 0 {
		usable = math.Min(usable, n)
		if f := c.ClientUtilization / n; f >= clientSaturated {
			return f
		}
	}
	return c.ClientUtilization / math.Max(usable, 1)
}

// machineCPUs is the machine's CPU count: from /proc/stat, else soakd's.
func machineCPUs(c CPU, in CPUInput) float64 {
	if c.HostCPUs > 0 {
		return float64(c.HostCPUs)
	}
	return float64(in.CPUs)
}

// machineBusy is the machine's busy cores: measured, or at least soakd's
// and the target's.
func machineBusy(c CPU) float64 {
	return math.Max(c.HostUtilization, c.Utilization+c.ClientUtilization)
}

// clientFillsMachine says whether soakd filled the machine: it is ≥ 90 %
// busy, and soakd used at least as much CPU as the target and a quarter
// of the machine.
func clientFillsMachine(c CPU, in CPUInput) bool {
	n := machineCPUs(c, in)
	return n > 0 && machineBusy(c) >= machineSaturated*n &&
		c.ClientUtilization >= c.Utilization && c.ClientUtilization >= clientShare*n
}

func cpuReason(c CPU, in CPUInput) string {
	if c.Evidence == EvidenceMissing {
		return "inconclusive: no mean response time to compare the CPU demand with"
	}
	var s string
	switch c.Evidence {
	case EvidenceThread:
		s = "cpu: " + threadText(c.HotThread) + fmt.Sprintf(" on CPU %s of the time", pct(c.HotThread.CPU))
	case EvidenceStarved:
		return starvedText(c, in) + "; " + sharesText(c)
	case EvidenceThreadWait:
		h := c.HotThread
		s = "cpu: " + threadText(h) + fmt.Sprintf(" runnable %s of the time: on CPU %s, waiting for a core %s (%s)",
			pct(h.CPU+h.Wait), pct(h.CPU), pct(h.Wait), waitWhy(c, in))
	case EvidenceCapacity:
		s = fmt.Sprintf("cpu: the target used %.2f of the %s cores it may use (%s)", c.Utilization, num(c.Capacity), c.CapacitySource)
	case EvidenceClient:
		return fmt.Sprintf("client: soakd used %.2f cores of %s while the target used %.2f; lower the load (its rate) or run soakd on another machine",
			c.ClientUtilization, num(machineCPUs(c, in)), c.Utilization)
	case EvidenceMachine:
		n := machineCPUs(c, in)
		busy := machineBusy(c)
		return fmt.Sprintf("client: the machine was %s busy (%.2f of %s cores: soakd %.2f, the target %.2f, others %.2f) while the target used %.2f of the %s cores it may use; lower the load (its rate) or run soakd on another machine",
			pct(busy/n), busy, num(n), c.ClientUtilization, c.Utilization, othersBusy(c, busy), c.Utilization, num(c.Capacity))
	case EvidenceRequestShare:
		s = fmt.Sprintf("%s: each request is %s CPU (D/R = %s / %s)", c.Bound, pct(c.RequestCPUShare), dur(c.DemandSeconds), dur(c.ResponseSeconds))
		if w := c.RunqueueWaitSeconds / c.ResponseSeconds; w >= 0.05 {
			s += fmt.Sprintf(" and waiting for a core %s (%s)", pct(w), waitWhy(c, in))
		}
		if h := c.HotThread; c.Bound == BoundInconclusive && c.InFlightRunnable >= laneIdle && (h == nil || h.CPU+h.Wait < laneIdle) {
			s += fmt.Sprintf(", but the target's busiest thread was runnable %s of the time the requests were in flight (they queued behind it)",
				pct(c.InFlightRunnable))
		}
		s += fmt.Sprintf("; the target used %s of a core at %s req/s (open loop)", pct(c.Utilization), num(c.Throughput))
	default:
		s = c.Bound + ": " + busyText(c, in)
	}
	switch c.Bound {
	case BoundIO:
		s += ", so it waits (I/O, a downstream, a lock or a timer)"
	case BoundInconclusive:
		s += ", between waiting and CPU-bound"
	}
	if p := c.HotProcess; p != nil && in.TargetProcs > 1.5 && c.Bound == BoundCPU {
		s += fmt.Sprintf("; busiest process %d (%s) at %.2f cores", p.PID, p.Name, p.Cores)
	}
	return s + "; " + sharesText(c)
}

// busyText is the closed loop's D·N/R figure per usable core.
func busyText(c CPU, in CPUInput) string {
	p := parallelism(c, in)
	s := fmt.Sprintf("busy %s of each request (D·N/R = %.2f)", pct(c.BusyFraction/p), c.BusyFraction)
	if p != 1 {
		s = fmt.Sprintf("busy %s of each request per usable core (D·N/R = %.2f over %s cores)", pct(c.BusyFraction/p), c.BusyFraction, num(p))
	}
	if c.CPUWaitFraction >= 0.05*p && c.BusyFraction < cpuBusy*p {
		s += fmt.Sprintf(" and waiting for a CPU %s (%s)", pct(c.CPUWaitFraction/p), waitWhy(c, in))
	}
	return s
}

// othersBusy is the machine's busy cores that were neither soakd's nor
// the target's.
func othersBusy(c CPU, busy float64) float64 {
	return math.Max(busy-c.ClientUtilization-c.Utilization, 0)
}

// waitWhy says who kept the cores busy while the target waited for one:
// the machine's busy cores (/proc/stat) split into the target's, soakd's
// and the others'. A tree with more runnable threads than cores waits
// for its own, on a machine nothing else uses; without /proc/stat only
// that the machine was busy is known.
func waitWhy(c CPU, in CPUInput) string {
	n := machineCPUs(c, in)
	if c.HostUtilization <= 0 || n <= 0 {
		return "the machine is busy"
	}
	busy := machineBusy(c)
	return fmt.Sprintf("the machine's %s cores were %s busy: the target %.2f, soakd %.2f, others %.2f",
		num(n), pct(math.Min(busy/n, 1)), c.Utilization, c.ClientUtilization, othersBusy(c, busy))
}

func threadText(h *HotThread) string {
	if h.TID == h.PID {
		return fmt.Sprintf("thread %d (%s)", h.TID, h.Name)
	}
	return fmt.Sprintf("thread %d (%s) of pid %d", h.TID, h.Name, h.PID)
}

// SplitUnavailable is what the CPU verdict says of the user/system split
// when the source gives user+system time only.
const SplitUnavailable = "user/system split not available from this source"

func sharesText(c CPU) string {
	if c.SplitUnknown {
		return SplitUnavailable
	}
	if c.KernelHeavy {
		return fmt.Sprintf("kernel-heavy (system %s)", pct(c.SystemShare))
	}
	return fmt.Sprintf("user %s / system %s", pct(c.UserShare), pct(c.SystemShare))
}

// pct formats a share as a whole percentage, or with one decimal under
// 1 % (a request that is 0.4 % CPU is not "0 % CPU"), or as under 0.1 %.
func pct(f float64) string {
	switch p := 100 * f; {
	case p > 0 && p < 0.05:
		return "under 0.1 %"
	case p > 0 && p < 0.95:
		return fmt.Sprintf("%.1f %%", p)
	default:
		return fmt.Sprintf("%.0f %%", p)
	}
}

// dur formats seconds in µs, ms or s with three significant digits.
func dur(s float64) string {
	switch a := math.Abs(s); {
	case a < 1e-3:
		return num(s*1e6) + " µs"
	case a < 1:
		return num(s*1e3) + " ms"
	}
	return num(s) + " s"
}

// costDrift is costDriftOn without the requests' axis and without the
// throughput (no absolute floor).
func costDrift(at, cost []float64, c Contention) CostDrift { return costDriftOn(at, nil, cost, c, 0) }

// soakRate is the soak's throughput, requests per second; 0 when unknown.
func soakRate(in CPUInput) float64 {
	if in.WallSeconds <= 0 || in.Requests <= 0 {
		return 0
	}
	return in.Requests / in.WallSeconds
}

// costDriftOn fits the CPU seconds per request of each window against
// time and, when req (the requests completed by each window's middle)
// is given, against the requests: a structure that each request scans
// makes each request dearer by the same amount, so its cost is a
// straight line in the requests served (in a closed loop, a curve in
// time that flattens as the throughput falls). The cost is rising (a CPU
// leak) only when all of these hold:
//   - the trend is significant with the windows' wander allowed for: a
//     one-sided Mann–Kendall p < 0.005 (costAlpha) with Var(S) inflated by the
//     wander the series shows about its line (trend.WanderPosterior,
//     as the memory fits do), and the slope's interval, inflated alike,
//     above zero. On a shared machine the cost per request wanders for
//     seconds to minutes (the scheduler moves the target and soakd
//     between cores, the caches and the clock follow other work), and a
//     test that takes the windows as independent reads that wander as a
//     trend: a clean C server's cost rose 10.2 to 15.6 µs, p = 4e-4;
//   - the fitted cost rose by ≥ 25 % over the soak;
//   - it kept rising through the soak: each half's own slope is above
//     zero and the thirds' medians climb, first < middle < last; and a
//     line fits it better than one step does (a step is a one-off
//     change, such as the target moving to another core, not growth);
//   - the rise stands apart from every contention figure that moved
//     (adjustForContention);
//   - at rate (the soak's throughput, requests per second; 0 = unknown,
//     no floor) it clears the absolute floor: the lower end of the
//     decision's interval adds at least 10 % of one core over 24 h
//     (costFloorCores, costHorizon). A rise proven but not clear of it is
//     inconclusive, or, when the upper end is under the floor too,
//     negligible: neither rising nor inconclusive.
//
// Otherwise a rise that passed the plain test is inconclusive, with the
// reason that stopped it.
func costDriftOn(at, req, cost []float64, c Contention, rate float64) CostDrift {
	n := min(len(at), len(cost))
	d := CostDrift{Windows: n}
	if n < costMinWindows {
		return d
	}
	x, y := at[:n], cost[:n]
	req = upTo(req, n)
	c.Others, c.Wait, c.Client = upTo(c.Others, n), upTo(c.Wait, n), upTo(c.Client, n)
	if n > 2000 {
		b := trend.Bin(x, y, 500, trend.ByMedian)
		c.Others, c.Wait, c.Client = binLike(x, c.Others), binLike(x, c.Wait), binLike(x, c.Client)
		req = binLike(x, req)
		x, y = b.X, b.Y
	}
	d = contentionEdges(d, len(x), c)
	// The decision's axis: the requests served when known and rising,
	// else time.
	u := x
	d.Axis = "time"
	if increasing(req) {
		u, d.Axis = req, "requests"
	}
	// The decision reads the cost with what the contention explains of
	// its wander taken out (withoutContention); the fits reported are of
	// the cost as measured.
	yd := withoutContention(u, y, c.Others, c.Wait, c.Client)
	vifT := trend.WanderPosterior(x, y).Inflation(x)
	vif := trend.WanderPosterior(u, yd).Inflation(u)
	f := trend.TheilSenInflated(x, y, 0.95, vifT)
	fu := trend.TheilSenInflated(u, yd, 0.95, vif)
	mk := trend.MannKendallInflated(u, yd, vif)
	naive := trend.MannKendall(u, y)
	u0, u1 := minMax(u)
	d.Start, d.End = fu.At(u0), fu.At(u1)
	d.SlopePerHour, d.PValue, d.NaivePValue, d.WanderInflation = f.Slope*3600, mk.PIncrease, naive.PIncrease, vif
	d.CI95 = [2]float64{f.Lo * 3600, f.Hi * 3600}
	if rate > 0 {
		d.FloorPerHour = costFloorCores / (rate * costHorizon) * 3600
		d.HorizonCores = f.Hi * costHorizon * rate
	}
	if d.Start > 0 {
		d.Change = d.End/d.Start - 1
	}
	d.Rising = mk.PIncrease < costAlpha && fu.Lo > 0 && d.Start > 0 && d.Change >= costRise
	if !d.Rising {
		if naive.PIncrease < costAlpha && fu.Slope > 0 && d.Start > 0 && d.Change >= costRise {
			d.Inconclusive = true
			d.Reason = fmt.Sprintf("CPU per request inconclusive: it rose %s to %s (%+.0f %%), but the windows wander (p = %.2g once their wander is allowed for, %.2g if they were independent); %s",
				dur(d.Start), dur(d.End), 100*d.Change, mk.PIncrease, naive.PIncrease, costDecides)
		}
		return d
	}
	d.Reason = fmt.Sprintf("CPU per request rising: %s to %s (%+.0f %%) over the soak, %s/request per hour, %s: a CPU leak, like a structure that each request scans and that keeps growing",
		dur(d.Start), dur(d.End), 100*d.Change, signedDur(d.SlopePerHour), pText(d.PValue))
	d = adjustForContention(d, u, y, c)
	if !d.Rising {
		return d // the contention explains the rise, or cannot be told from it
	}
	if why := notSteady(u, yd); why != "" {
		d.Rising, d.Inconclusive = false, true
		d.Reason = fmt.Sprintf("CPU per request inconclusive: it rose %s to %s (%+.0f %%, %s), but %s; %s",
			dur(d.Start), dur(d.End), 100*d.Change, pText(d.PValue), why, costDecides)
		return d
	}
	return clearFloor(d, fu.Lo, rate)
}

// clearFloor keeps a rising cost a CPU leak only when the lower end of
// the decision's interval (lo, per request served on the requests' axis,
// else per second) adds at least the absolute floor over the horizon at
// rate: a rise proven but not clear of it is inconclusive, or negligible
// (neither) when the upper end is under the floor too. Memory's floors
// do the same: growth proven but under the lowest floor in force is
// never a leak, and the floors project it over 24 h, so a leak that
// keeps growing past the soak still clears them.
func clearFloor(d CostDrift, lo, rate float64) CostDrift {
	if d.FloorPerHour <= 0 {
		return d
	}
	if d.Axis == "requests" {
		lo *= rate
	}
	lo *= 3600
	if lo >= d.FloorPerHour {
		return d
	}
	adds := fmt.Sprintf("at %s req/s its rise adds %s–%s of a core over 24 h, and %s is the floor (a rise under it is negligible)",
		num(rate), corePct(lo/3600*costHorizon*rate), corePct(d.HorizonCores), corePct(costFloorCores))
	d.Rising = false
	if d.UnderFloor() {
		d.Reason = fmt.Sprintf("CPU per request rose %s to %s (%+.0f %%, %s), but %s: not a CPU leak",
			dur(d.Start), dur(d.End), 100*d.Change, pText(d.PValue), adds)
		return d
	}
	d.Inconclusive = true
	d.Reason = fmt.Sprintf("CPU per request inconclusive: it rose %s to %s (%+.0f %%, %s), but %s; a longer soak would tell whether it clears the floor",
		dur(d.Start), dur(d.End), 100*d.Change, pText(d.PValue), adds)
	return d
}

// corePct is a share of one core as a percentage: "0.02 %", "12 %".
func corePct(c float64) string {
	p := 100 * c
	switch a := math.Abs(p); {
	case a >= 10:
		return fmt.Sprintf("%.0f %%", p)
	case a >= 1:
		return fmt.Sprintf("%.1f %%", p)
	case a >= 0.01:
		return fmt.Sprintf("%.2f %%", p)
	}
	return fmt.Sprintf("%.1g %%", p)
}

// costDecides is what would decide a CPU cost that rose but is not
// called a leak.
const costDecides = "a longer soak on a quieter machine would tell a leak from the machine's wander"

// increasing tells whether v holds values that never fall and whose last
// is above its first.
func increasing(v []float64) bool {
	if len(v) < 2 || !(v[len(v)-1] > v[0]) {
		return false
	}
	for i := 1; i < len(v); i++ {
		if !(v[i] >= v[i-1]) {
			return false
		}
	}
	return true
}

// notSteady says why the cost y along u did not keep rising through the
// soak, or "" when it did: each half's Theil–Sen slope above zero, the
// thirds' medians climbing, and a line fitting better than a single step.
func notSteady(u, y []float64) string {
	n := len(y)
	h := n / 2
	s1 := trend.TheilSen(u[:h], y[:h]).Slope
	if !(s1 > 0) {
		return "it did not keep rising: it held or fell over the soak's first half"
	}
	// The second half must rise on its own, its wander allowed for: a
	// leak keeps growing to the end, a wander that climbed once does not.
	uh, yh := u[h:], y[h:]
	if s2 := trend.TheilSenInflated(uh, yh, 0.8, trend.WanderPosterior(uh, yh).Inflation(uh)); !(s2.Lo > 0) {
		return "it did not keep rising: over the soak's second half its rise is not shown (the slope's 80 % interval, its wander allowed for, reaches zero)"
	}
	k := n / 3
	m1, m2, m3 := trend.Median(y[:k]), trend.Median(y[k:n-k]), trend.Median(y[n-k:])
	if !(m1 < m2 && m2 < m3) {
		return fmt.Sprintf("it did not keep rising: the thirds' medians are %s, %s, %s", dur(m1), dur(m2), dur(m3))
	}
	if at, ok := stepBeatsLine(u, y); ok {
		return fmt.Sprintf("it rose in one step (at %.0f %% of the soak) more than along a line: a one-off change, not growth", 100*at)
	}
	return ""
}

// stepBeatsLine tells whether one step (two levels, split between any
// two windows with at least two on each side) fits y along u with a
// smaller residual sum of squares than the least-squares line does, and
// where the best step falls as a share of the windows.
func stepBeatsLine(u, y []float64) (float64, bool) {
	n := len(y)
	line := trend.OLS(u, y)
	var rssLine float64
	for i := range y {
		e := y[i] - line.At(u[i])
		rssLine += e * e
	}
	var sum, sq float64
	for _, v := range y {
		sum, sq = sum+v, sq+v*v
	}
	best, at := math.Inf(1), 0
	var ls, lq float64
	for i := 0; i < n-2; i++ {
		ls, lq = ls+y[i], lq+y[i]*y[i]
		if i < 1 {
			continue
		}
		nl, nr := float64(i+1), float64(n-i-1)
		rs, rq := sum-ls, sq-lq
		rss := (lq - ls*ls/nl) + (rq - rs*rs/nr)
		if rss < best {
			best, at = rss, i+1
		}
	}
	return float64(at) / float64(n), best < rssLine
}

// upTo is v's first n values, or nil when it holds fewer.
func upTo(v []float64, n int) []float64 {
	if len(v) < n {
		return nil
	}
	return v[:n]
}

// binLike bins v at x as the cost series is binned; nil stays nil.
func binLike(x, v []float64) []float64 {
	if v == nil {
		return nil
	}
	return trend.Bin(x, v, 500, trend.ByMedian).Y
}

func signedDur(s float64) string {
	if s < 0 {
		return "−" + dur(-s)
	}
	return "+" + dur(s)
}

// p99Slope is the Theil–Sen slope of P99 against time, in seconds per hour.
func p99Slope(in CPUInput) float64 {
	n := min(len(in.P99Seconds), len(in.P99AtSeconds))
	if n < 3 {
		return 0
	}
	x, y := in.P99AtSeconds[:n], in.P99Seconds[:n]
	if n > 2000 {
		b := trend.Bin(x, y, 500, trend.ByMedian)
		x, y = b.X, b.Y
	}
	return trend.TheilSen(x, y).Slope * 3600
}

// decay is the fractional change in mean throughput from the first third
// of the series (by time) to the last; negative when throughput fell.
func decay(at, rate []float64) float64 {
	n := min(len(at), len(rate))
	if n < 3 {
		return 0
	}
	t0, t1 := minMax(at[:n])
	var first, last, nf, nl float64
	for i := 0; i < n; i++ {
		switch {
		case at[i] <= t0+(t1-t0)/3:
			first, nf = first+rate[i], nf+1
		case at[i] >= t0+2*(t1-t0)/3:
			last, nl = last+rate[i], nl+1
		}
	}
	if nf == 0 || nl == 0 || first == 0 {
		return 0
	}
	return (last/nl)/(first/nf) - 1
}

// WithCPU is the run's verdict once the CPU cost per request is judged: a
// cost that keeps rising is a CPU leak, so a run otherwise clean or
// inconclusive is "leak"; a failing run stays failing.
func WithCPU(overall string, c CPU) string {
	if c.Cost.Rising && (overall == OverallClean || overall == OverallInconclusive) {
		return OverallLeak
	}
	return overall
}
