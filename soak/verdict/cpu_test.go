package verdict

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestAnalyzeCPU(t *testing.T) {
	loop := &HotThread{PID: 4711, TID: 4711, Name: "nginx: worker", CPU: 0.97, Wait: 0.01, Readings: 20}
	tests := []struct {
		name     string
		in       CPUInput
		bound    string
		evidence string
		kernel   bool
		reason   string
	}{
		// The rows of issue 11's table, each with the truth.
		{
			// 1 ms per request on one event-loop thread; 11 idle helpers.
			name: "event loop, 11 idle helpers, 8 CPUs, c=64",
			in: CPUInput{WallSeconds: 100, TargetUser: 97, TargetSystem: 3, Requests: 97000, MeanResponse: 0.066, Concurrency: 64,
				CPUs: 8, TargetThreads: 12, HotThread: loop},
			bound: BoundCPU, evidence: EvidenceThread,
			reason: "cpu: thread 4711 (nginx: worker) on CPU 97 % of the time; user 97 % / system 3 %",
		},
		{
			name: "the same on 2 CPUs",
			in: CPUInput{WallSeconds: 100, TargetUser: 97, TargetSystem: 3, Requests: 97000, MeanResponse: 0.066, Concurrency: 64,
				CPUs: 2, TargetThreads: 12, HotThread: loop},
			bound: BoundCPU, evidence: EvidenceThread, reason: "on CPU 97 % of the time",
		},
		{
			name: "kernel-heavy write(2) loop, one thread saturated, 3 threads",
			in: CPUInput{WallSeconds: 100, TargetUser: 24, TargetSystem: 76, Requests: 50000, MeanResponse: 0.004, Concurrency: 2,
				CPUs: 2, TargetThreads: 3, HotThread: &HotThread{PID: 900, TID: 902, Name: "writer", CPU: 0.96, Wait: 0.02}},
			bound: BoundCPU, evidence: EvidenceThread, kernel: true,
			reason: "cpu: thread 902 (writer) of pid 900 on CPU 96 % of the time; kernel-heavy (system 76 %)",
		},
		{
			// soakd 1.4 + target 0.5 + others: 1.92 of 2 cores busy.
			name: "fast server, soakd using 1.4 of 2 cores, target 0.5",
			in: CPUInput{WallSeconds: 100, TargetUser: 40, TargetSystem: 10, ClientUser: 100, ClientSystem: 40, Requests: 200000,
				MeanResponse: 0.002, Concurrency: 4, CPUs: 2, TargetThreads: 6, Capacity: 2, CapacitySource: "affinity 2 CPUs",
				HostBusy: 1.92, HostCPUs: 2, HotThread: &HotThread{PID: 7, TID: 8, Name: "srv", CPU: 0.3, Wait: 0.1}},
			bound: BoundClient, evidence: EvidenceMachine,
			reason: "client: the machine was 96 % busy (1.92 of 2 cores: soakd 1.40, the target 0.50, others 0.02) while the target used 0.50 of the 2 cores it may use; lower the load (its rate) or run soakd on another machine",
		},
		{
			name: "prefork, 4 busy workers and a master, 8 CPUs",
			in: CPUInput{WallSeconds: 100, TargetUser: 330, TargetSystem: 50, Requests: 380000, MeanResponse: 0.016, Concurrency: 16,
				CPUs: 8, TargetThreads: 5, TargetProcs: 5,
				HotThread:  &HotThread{PID: 102, TID: 102, Name: "worker", CPU: 0.95, Wait: 0.01},
				HotProcess: &HotProcess{PID: 102, Name: "worker", Cores: 0.95}},
			bound: BoundCPU, evidence: EvidenceThread,
			reason: "cpu: thread 102 (worker) on CPU 95 % of the time; busiest process 102 (worker) at 0.95 cores; user 87 % / system 13 %",
		},
		{
			// 20 req/s of a 30 ms pure-CPU handler: N = X·R = 0.63.
			name: "open loop at 20 req/s, pure-CPU handler",
			in: CPUInput{WallSeconds: 100, TargetUser: 60, Requests: 2000, MeanResponse: 0.0316, OpenLoop: true,
				CPUs: 2, TargetThreads: 6, HotThread: &HotThread{PID: 7, TID: 9, Name: "srv", CPU: 0.58, Wait: 0.01}},
			bound: BoundCPU, evidence: EvidenceRequestShare,
			reason: "cpu: each request is 95 % CPU (D/R = 30 ms / 31.6 ms); the target used 60 % of a core at 20 req/s (open loop)",
		},
		// The waiting shapes.
		{
			// 8 connection threads each sleeping 5 ms per request.
			name: "thread per connection sleeping 5 ms, c=8",
			in: CPUInput{WallSeconds: 100, TargetUser: 10, TargetSystem: 5.1, Requests: 150900, MeanResponse: 0.0053, Concurrency: 8,
				CPUs: 2, Capacity: 2, CapacitySource: "affinity 2 CPUs", TargetThreads: 12,
				HotThread: &HotThread{PID: 7, TID: 11, Name: "conn", CPU: 0.02, Wait: 0.001}},
			bound: BoundIO, evidence: EvidenceBusyFraction,
			reason: "io: busy 8 % of each request per usable core (D·N/R = 0.15 over 2 cores), so it waits",
		},
		{
			// 50 ms per request waiting on a slow downstream, 0.2 ms of CPU.
			name: "waiting on a slow downstream, c=16",
			in: CPUInput{WallSeconds: 100, TargetUser: 4.4, TargetSystem: 2, Requests: 32000, MeanResponse: 0.05, Concurrency: 16,
				CPUs: 2, TargetThreads: 8, HotThread: &HotThread{PID: 7, TID: 7, Name: "srv", CPU: 0.03}},
			bound: BoundIO, evidence: EvidenceBusyFraction, reason: "so it waits (I/O, a downstream, a lock or a timer)",
		},
		{
			name: "open loop, sleeping server",
			in: CPUInput{WallSeconds: 100, TargetUser: 0.4, Requests: 2000, MeanResponse: 0.0053, OpenLoop: true,
				CPUs: 2, TargetThreads: 6, HotThread: &HotThread{PID: 7, TID: 9, Name: "srv", CPU: 0.004}},
			bound: BoundIO, evidence: EvidenceRequestShare, reason: "io: each request is 4 % CPU (D/R = 200 µs / 5.3 ms)",
		},
		{
			// Other jobs fill the machine; soakd and the sleeper use little.
			name: "sleeper on a machine others fill is not the client's doing",
			in: CPUInput{WallSeconds: 100, TargetUser: 10, TargetSystem: 5.1, ClientUser: 4, ClientSystem: 4, Requests: 150900,
				MeanResponse: 0.0053, Concurrency: 8, CPUs: 2, TargetThreads: 12, HostBusy: 1.97, HostCPUs: 2,
				HotThread: &HotThread{PID: 7, TID: 11, Name: "conn", CPU: 0.02, Wait: 0.01}},
			bound: BoundIO, evidence: EvidenceBusyFraction,
		},
		{
			// Requests queue behind a thread that is busy 70 % of the time.
			name: "open loop, mostly waiting, behind a busy thread",
			in: CPUInput{WallSeconds: 100, TargetUser: 45, Requests: 10000, MeanResponse: 0.08, OpenLoop: true,
				CPUs: 2, TargetThreads: 6, RunqueueWaitRate: 0.25, HotThread: &HotThread{PID: 7, TID: 9, Name: "srv", CPU: 0.45, Wait: 0.25}},
			bound: BoundInconclusive, evidence: EvidenceRequestShare, reason: "inconclusive: each request is 6 % CPU",
		},
		{
			// Measured: 3 ms of CPU a request at an open 100 req/s, and
			// 3 s of other work at nice -5 in the middle of a 30 s soak.
			// Requests piled up behind the loop thread while it waited
			// for a core, so D/R read 9 %: not io.
			name:  "open loop, a burst of other work queues requests behind a thread",
			in:    burstQueue(true),
			bound: BoundInconclusive, evidence: EvidenceRequestShare,
			reason: "inconclusive: each request is 9 % CPU (D/R = 3.7 ms / 40 ms), but the target's busiest thread was runnable 97 % of the time the requests were in flight (they queued behind it)",
		},
		{
			name:  "the same without the thread passes reads io",
			in:    burstQueue(false),
			bound: BoundIO, evidence: EvidenceRequestShare, reason: "io: each request is 9 % CPU",
		},
		{
			// A sleeper's threads stay far from runnable, burst or not.
			name: "open loop, sleeper through a burst of other work",
			in: CPUInput{WallSeconds: 30, TargetUser: 1.2, Requests: 3000, MeanResponse: 0.0062, OpenLoop: true,
				CPUs: 2, TargetThreads: 6, HotThread: &HotThread{PID: 7, TID: 9, Name: "srv", CPU: 0.01, Wait: 0.02},
				LaneRunnable: []float64{0.02, 0.03, 0.4, 0.5, 0.03}, LaneInFlight: []float64{0.6, 0.6, 2, 1, 0.6}},
			bound: BoundIO, evidence: EvidenceRequestShare, reason: "io: each request is 6 % CPU",
		},
		// Capacity, the client, and the busy machine.
		{
			name: "cpu.max quota reached",
			in: CPUInput{WallSeconds: 100, TargetUser: 48, Requests: 10000, MeanResponse: 0.08, Concurrency: 8,
				CPUs: 2, TargetThreads: 10, Capacity: 0.5, CapacitySource: "cpu.max 0.5 cores (/system.slice/x.service); affinity 2 CPUs",
				HotThread: &HotThread{PID: 7, TID: 9, Name: "srv", CPU: 0.2, Wait: 0.01}},
			bound: BoundCPU, evidence: EvidenceCapacity,
			reason: "cpu: the target used 0.48 of the 0.5 cores it may use (cpu.max 0.5 cores (/system.slice/x.service); affinity 2 CPUs)",
		},
		{
			// soakd burns both cores while the target idles at 40 %.
			name: "soakd's own CPU saturated",
			in: CPUInput{WallSeconds: 100, TargetUser: 30, TargetSystem: 10, Requests: 100000, MeanResponse: 0.004, Concurrency: 4,
				CPUs: 2, TargetThreads: 8, ClientUser: 150, ClientSystem: 40},
			bound: BoundClient, evidence: EvidenceClient,
			reason: "client: soakd used 1.90 cores of 2 while the target used 0.40; lower the load (its rate)",
		},
		{
			// An event loop on a machine others fill: on a CPU 60 %, and
			// waiting for one 35 %.
			name: "event loop waiting for a core on a busy machine",
			in: CPUInput{WallSeconds: 100, TargetUser: 62, Requests: 31000, MeanResponse: 0.0258, Concurrency: 8,
				CPUs: 2, TargetThreads: 6, RunqueueWaitRate: 0.36,
				HotThread: &HotThread{PID: 7, TID: 7, Name: "loop", CPU: 0.6, Wait: 0.35}},
			bound: BoundCPU, evidence: EvidenceThreadWait,
			reason: "cpu: thread 7 (loop) runnable 95 % of the time: on CPU 60 %, waiting for a core 35 % (the machine is busy)",
		},
		// Without per-thread readings (schedstat unreadable, old samples).
		{
			// The seed: 5 clients × 5 ms = 25 ms per request with the
			// CPU at 90 %: X = 200/s, D = 4.5 ms, D·N/R = 0.9.
			name: "seed ladder, no thread readings",
			in: CPUInput{WallSeconds: 100, TargetUser: 60, TargetSystem: 30, Requests: 20000, MeanResponse: 0.025, Concurrency: 5,
				CPUs: 1, TargetThreads: 4},
			bound: BoundCPU, evidence: EvidenceCapacity, reason: "cpu: the target used 0.90 of the 1 cores it may use (soakd's CPU count",
		},
		{
			name: "half of two usable cores busy, no thread readings",
			in: CPUInput{WallSeconds: 100, TargetUser: 50, TargetSystem: 50, Requests: 10000, MeanResponse: 0.02, Concurrency: 2,
				CPUs: 4, TargetThreads: 8},
			bound: BoundInconclusive, evidence: EvidenceBusyFraction, reason: "inconclusive: busy 50 % of each request per usable core",
		},
		{
			// A CPU burner on a shared machine: 2 ms of CPU per request,
			// 3.1 ms response at c=1, and 1 ms of it runnable but waiting
			// for a core. Without the wait it looks half idle.
			name: "cpu-bound on a busy machine, no thread readings",
			in: CPUInput{WallSeconds: 10, TargetUser: 6.4, Requests: 3200, MeanResponse: 0.003125, Concurrency: 1, CPUs: 2,
				TargetThreads: 6, RunqueueWaitRate: 0.32},
			bound: BoundCPU, evidence: EvidenceBusyFraction, reason: "and waiting for a CPU 32 % (the machine is busy)",
		},
		{
			// The same on a machine nothing else uses: the wait is the
			// target's own threads', and the reason says so in figures.
			name: "cpu-bound, the wait its own",
			in: CPUInput{WallSeconds: 10, TargetUser: 6.4, Requests: 3200, MeanResponse: 0.003125, Concurrency: 1, CPUs: 2,
				TargetThreads: 6, RunqueueWaitRate: 0.32, HostBusy: 0.75, HostCPUs: 2, ClientUser: 0.8},
			bound: BoundCPU, evidence: EvidenceBusyFraction,
			reason: "and waiting for a CPU 32 % (the machine's 2 cores were 38 % busy: the target 0.64, soakd 0.08, others 0.03)",
		},
		{
			name: "the same without the run-queue wait",
			in: CPUInput{WallSeconds: 10, TargetUser: 6.4, Requests: 3200, MeanResponse: 0.003125, Concurrency: 1, CPUs: 2,
				TargetThreads: 6},
			bound: BoundInconclusive, evidence: EvidenceBusyFraction, reason: "between",
		},
		// Missing figures.
		{
			name:  "no target CPU (a restart in the window)",
			in:    CPUInput{WallSeconds: 100, Requests: 10000, MeanResponse: 0.01, Concurrency: 1, CPUs: 2},
			bound: BoundInconclusive, evidence: EvidenceMissing, reason: "no target CPU time",
		},
		{
			name:  "no data",
			in:    CPUInput{},
			bound: BoundInconclusive, evidence: EvidenceMissing, reason: "no soak window",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := AnalyzeCPU(tc.in)
			if c.Bound != tc.bound || c.Evidence != tc.evidence || c.KernelHeavy != tc.kernel {
				t.Errorf("got %s by %s, kernel-heavy %v; want %s by %s, kernel-heavy %v (%s)",
					c.Bound, c.Evidence, c.KernelHeavy, tc.bound, tc.evidence, tc.kernel, c.Reason)
			}
			if !strings.Contains(c.Reason, tc.reason) {
				t.Errorf("got reason %q; want it to contain %q", c.Reason, tc.reason)
			}
			t.Logf("%s", c.Reason)
		})
	}
}

// burstQueue is a 30 s open-loop soak of a 3 ms CPU loop at 100 req/s
// with a 3 s burst of other work, close to one measured: 27 thread passes
// at 32 % runnable with 0.4 requests in flight, and 3 at 100 % while the
// queue grew to 9, 22 and 174 (the last as it drained). Without passes,
// the thread's averages alone.
func burstQueue(passes bool) CPUInput {
	in := CPUInput{WallSeconds: 30, TargetUser: 7.4, TargetSystem: 3.7, Requests: 3000, MeanResponse: 0.040, OpenLoop: true,
		CPUs: 2, TargetThreads: 5, HotThread: &HotThread{PID: 7, TID: 9, Name: "loop", CPU: 0.30, Wait: 0.10}}
	if passes {
		for i := range 30 {
			r, n := 0.32, 0.4
			if i >= 10 && i < 13 {
				r, n = 1, []float64{9, 22, 174}[i-10]
			}
			in.LaneRunnable, in.LaneInFlight = append(in.LaneRunnable, r), append(in.LaneInFlight, n)
		}
	}
	return in
}

func TestInFlightRunnable(t *testing.T) {
	tests := []struct {
		name               string
		runnable, inFlight []float64
		want               float64
	}{
		{"none", nil, nil, 0},
		{"a steady queue: the plain mean", []float64{0.3, 0.5}, []float64{1, 1}, 0.4},
		{"weighted by the queue", []float64{1, 0.1, 0.1}, []float64{8, 1, 1}, 0.82},
		{"over 1 read as 1", []float64{1.02, 0}, []float64{1, 1}, 0.5},
		{"idle passes and NaN skipped", []float64{0.9, 0.1, 0.1, math.NaN()}, []float64{1, 0, math.NaN(), 1}, 0.9},
		{"a shorter runnable series", []float64{0.7}, []float64{1, 3}, 0.7},
	}
	for _, tc := range tests {
		got := inFlightRunnable(CPUInput{LaneRunnable: tc.runnable, LaneInFlight: tc.inFlight})
		if math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: in-flight runnable share %v; want %v", tc.name, got, tc.want)
		}
	}
}

// TestCPUInputsReachTheReport checks that the verdict carries its inputs.
func TestCPUInputsReachTheReport(t *testing.T) {
	h := &HotThread{PID: 1, TID: 2, Name: "x", CPU: 0.5}
	p := &HotProcess{PID: 1, Name: "x", Cores: 0.6}
	c := AnalyzeCPU(CPUInput{WallSeconds: 10, TargetUser: 6, Requests: 1000, MeanResponse: 0.01, Concurrency: 1, CPUs: 2,
		Capacity: 1.5, CapacitySource: "cpu.max 1.5 cores (/a)", HotThread: h, HotProcess: p, HostBusy: 1.2, HostCPUs: 2,
		RunqueueWaitRate: 0.1, ClientUser: 1})
	if c.Capacity != 1.5 || c.CapacitySource != "cpu.max 1.5 cores (/a)" || c.HotThread != h || c.HotProcess != p ||
		c.HostUtilization != 1.2 || c.HostCPUs != 2 || math.Abs(c.RunqueueWaitSeconds-0.001) > 1e-12 ||
		c.ClientUtilization != 0.1 || c.Utilization != 0.6 || c.Throughput != 100 || c.Concurrency != 1 {
		t.Errorf("got %+v; want every input carried", c)
	}
}

func TestCPUDrift(t *testing.T) {
	at := []float64{0, 600, 1200, 1800, 2400, 3000, 3600}
	p99 := []float64{0.010, 0.011, 0.012, 0.013, 0.014, 0.015, 0.016} // +6 ms/h
	rate := []float64{1000, 1000, 950, 900, 850, 800, 800}
	c := AnalyzeCPU(CPUInput{WallSeconds: 3600, TargetUser: 100, Requests: 3e6, MeanResponse: 0.001, Concurrency: 1,
		P99Seconds: p99, P99AtSeconds: at, RateSeries: rate, RateAtSeconds: at})
	if math.Abs(c.P99SlopePerHour-0.006) > 1e-9 {
		t.Errorf("got p99 slope %v s/h; want 0.006", c.P99SlopePerHour)
	}
	// First third (t ≤ 1200): 1000, 1000, 950; last third (t ≥ 2400): 850, 800, 800.
	if want := (2450.0/3)/(2950.0/3) - 1; math.Abs(c.ThroughputDecay-want) > 1e-9 {
		t.Errorf("got throughput decay %v; want %v", c.ThroughputDecay, want)
	}
	if c.CPUSecondsPerRequest != 100/3e6 {
		t.Errorf("got %v CPU s/request; want %v", c.CPUSecondsPerRequest, 100/3e6)
	}
}

func TestCPUCostDrift(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 1))
	series := func(start, perHour float64) ([]float64, []float64) {
		var at, cost []float64
		for i := range 60 { // one window a minute for an hour
			x := float64(i) * 60
			at = append(at, x)
			cost = append(cost, (start+perHour*x/3600)*(1+0.1*(rng.Float64()-0.5)))
		}
		return at, cost
	}
	tests := []struct {
		name    string
		start   float64
		perHour float64
		rising  bool
		reason  string
	}{
		{name: "a list scanned per request grows: 50 µs to 400 µs", start: 50e-6, perHour: 350e-6, rising: true,
			reason: "CPU per request rising: 49.5 µs to 397 µs (+703 %) over the soak, +353 µs/request per hour"},
		{name: "flat cost", start: 50e-6},
		{name: "a slow rise under the 25 % floor", start: 50e-6, perHour: 5e-6},
		{name: "falling cost (a cache warming)", start: 80e-6, perHour: -30e-6},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			at, cost := series(tc.start, tc.perHour)
			d := costDrift(at, cost, Contention{})
			if d.Rising != tc.rising || !strings.Contains(d.Reason, tc.reason) {
				t.Errorf("got rising %v (%q); want %v containing %q", d.Rising, d.Reason, tc.rising, tc.reason)
			}
			if want := tc.perHour; math.Abs(d.SlopePerHour-want) > 0.1*math.Abs(want)+2e-6 {
				t.Errorf("got slope %v s/request per hour; want %v", d.SlopePerHour, want)
			}
			t.Logf("%+v", d)
		})
	}
	if d := costDrift([]float64{0, 1, 2}, []float64{1, 2, 3}, Contention{}); d.Rising || d.Windows != 3 {
		t.Errorf("three windows: got %+v; want too few to judge", d)
	}
}

// starvedGo is a Go server, 2 ms of CPU a request at c=4 on 2 cores,
// that got a tenth of a core while other work held the rest: each request
// waited for a CPU 84 % of its time (W·N/R per usable core) and ran 5 %.
// Before the starved rule it read "cpu" by D·N/R + W·N/R ("waiting for a
// CPU 84 %"), issue 42's finding.
func starvedGo() CPUInput {
	return CPUInput{WallSeconds: 30, TargetUser: 3, Requests: 1500, MeanResponse: 0.08, Concurrency: 4,
		CPUs: 2, TargetThreads: 8, RunqueueWaitRate: 1.68, HostBusy: 1.98, HostCPUs: 2, ClientUser: 6,
		HotThread: &HotThread{PID: 7, TID: 9, Name: "srv", CPU: 0.05, Wait: 0.6}}
}

// TestStarvedIsInconclusive: a target that waited for a CPU most of the
// time, and longer than it ran, while other work held the cores, is
// inconclusive with the contention, never cpu; a target whose wait is
// its own (the machine otherwise idle) or that waited less than it ran
// keeps its bound.
func TestStarvedIsInconclusive(t *testing.T) {
	noHost := starvedGo()
	noHost.HostBusy, noHost.HostCPUs = 0, 0
	ownWait := starvedGo()
	ownWait.HostBusy = 0.35 // the target 0.10, soakd 0.20, others 0.05
	tests := []struct {
		name            string
		in              CPUInput
		bound, evidence string
		reason          string
	}{
		{"a starved Go server, closed loop", starvedGo(), BoundInconclusive, EvidenceStarved,
			"inconclusive: starved: each request waited for a CPU 84 % of the time per usable core and ran 5 % (W·N/R = 1.68, D·N/R = 0.10 over 2 cores), while other work held 1.88 of the 2 cores (soakd 0.20, others 1.68); whether it is CPU-bound or waits cannot be told until it gets its cores (the target used 0.10 cores at 50 req/s); user 100 % / system 0 %"},
		{"the same, the machine's CPU time not read", noHost, BoundInconclusive, EvidenceStarved,
			"while other work held the cores (the machine's CPU time was not read)"},
		{"the same, the wait its own on an idle machine", ownWait, BoundCPU, EvidenceBusyFraction, "and waiting for a CPU 84 %"},
		{"an event loop's thread starved",
			CPUInput{WallSeconds: 30, TargetUser: 9, Requests: 3000, MeanResponse: 0.02, Concurrency: 2, CPUs: 2, TargetThreads: 4,
				HostBusy: 1.95, HostCPUs: 2, ClientUser: 3, HotThread: &HotThread{PID: 7, TID: 7, Name: "loop", CPU: 0.3, Wait: 0.6}},
			BoundInconclusive, EvidenceStarved,
			"inconclusive: starved: thread 7 (loop) waited for a CPU 60 % of the time and ran 30 %, while other work held 1.65 of the 2 cores (soakd 0.10, others 1.55)"},
		{"open loop, each request mostly waiting for a CPU",
			CPUInput{WallSeconds: 30, TargetUser: 1.5, Requests: 1500, MeanResponse: 0.02, OpenLoop: true, CPUs: 2, TargetThreads: 6,
				RunqueueWaitRate: 0.6, HostBusy: 2, HostCPUs: 2, ClientUser: 1.5},
			BoundInconclusive, EvidenceStarved, "each request waited for a CPU 60 % of the time and ran 5 % (W/R = 12 ms / 20 ms), while other work held 1.95 of the 2 cores (soakd 0.05, others 1.90)"},
		{"a thread that waited for a core half the time, longer than it ran",
			CPUInput{WallSeconds: 100, TargetUser: 62, Requests: 31000, MeanResponse: 0.0258, Concurrency: 8, CPUs: 2, TargetThreads: 6,
				RunqueueWaitRate: 0.36, HostBusy: 1.9, HostCPUs: 2, HotThread: &HotThread{PID: 7, TID: 7, Name: "loop", CPU: 0.45, Wait: 0.5}},
			BoundInconclusive, EvidenceStarved, "thread 7 (loop) waited for a CPU 50 % of the time and ran 45 %"},
		{"a thread that waited for a core less than it ran stays cpu",
			CPUInput{WallSeconds: 100, TargetUser: 62, Requests: 31000, MeanResponse: 0.0258, Concurrency: 8, CPUs: 2, TargetThreads: 6,
				RunqueueWaitRate: 0.36, HostBusy: 1.9, HostCPUs: 2, HotThread: &HotThread{PID: 7, TID: 7, Name: "loop", CPU: 0.55, Wait: 0.4}},
			BoundCPU, EvidenceThreadWait, "runnable 95 % of the time: on CPU 55 %, waiting for a core 40 %"},
		{"a thread on a CPU 90 % is cpu however busy the machine",
			CPUInput{WallSeconds: 100, TargetUser: 92, Requests: 31000, MeanResponse: 0.0258, Concurrency: 8, CPUs: 2, TargetThreads: 6,
				RunqueueWaitRate: 0.9, HostBusy: 2, HostCPUs: 2, HotThread: &HotThread{PID: 7, TID: 7, Name: "loop", CPU: 0.91, Wait: 0.08}},
			BoundCPU, EvidenceThread, "on CPU 91 % of the time"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := AnalyzeCPU(tc.in)
			if c.Bound != tc.bound || c.Evidence != tc.evidence {
				t.Errorf("got %s by %s; want %s by %s (%s)", c.Bound, c.Evidence, tc.bound, tc.evidence, c.Reason)
			}
			if !strings.Contains(c.Reason, tc.reason) {
				t.Errorf("got reason %q; want it to contain %q", c.Reason, tc.reason)
			}
		})
	}
}
