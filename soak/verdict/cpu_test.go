package verdict

import (
	"math"
	"strings"
	"testing"
)

func TestAnalyzeCPU(t *testing.T) {
	tests := []struct {
		name   string
		in     CPUInput
		bound  string
		kernel bool
		busy   float64
		reason string
	}{
		{
			// The seed: 5 clients × 5 ms = 25 ms per request with the
			// CPU at 90 %: X = 200/s, D = 4.5 ms, D·N/R = 0.9.
			name:  "seed ladder: cpu-bound",
			in:    CPUInput{WallSeconds: 100, TargetUser: 60, TargetSystem: 30, Requests: 20000, MeanResponse: 0.025, Concurrency: 5, CPUs: 1, TargetThreads: 1},
			bound: BoundCPU, busy: 0.9, reason: "CPU-bound: busy 90 % of each request (D·N/R = 0.90)",
		},
		{
			// The classic test: user 25.6 %, system 74.4 %.
			name:  "kernel-heavy cpu-bound",
			in:    CPUInput{WallSeconds: 100, TargetUser: 25.6, TargetSystem: 74.4, Requests: 10000, MeanResponse: 0.0106, Concurrency: 1, CPUs: 2, TargetThreads: 1},
			bound: BoundCPU, kernel: true, busy: 100.0 / 10000 / 0.0106,
			reason: "user 26 % / system 74 % (kernel-heavy)",
		},
		{
			// 10 ms per request of which 0.5 ms on a CPU.
			name:  "io-bound",
			in:    CPUInput{WallSeconds: 100, TargetUser: 3, TargetSystem: 2, Requests: 10000, MeanResponse: 0.1, Concurrency: 10, CPUs: 2, TargetThreads: 8},
			bound: BoundIO, busy: 0.05, reason: "waits (I/O",
		},
		{
			// soakd burns both cores while the target idles at 40 %.
			name: "client-bound",
			// Requests queue inside soakd, so R (4 ms) is mostly client time.
			in:    CPUInput{WallSeconds: 100, TargetUser: 30, TargetSystem: 10, Requests: 100000, MeanResponse: 0.004, Concurrency: 4, CPUs: 2, TargetThreads: 8, ClientUser: 150, ClientSystem: 40},
			bound: BoundClient, busy: 0.4 / 1000 * 4 / 0.004, reason: "client-bound: soakd used 1.90 cores of 2",
		},
		{
			name: "inconclusive: half busy",
			// One of two usable cores busy.
			in:    CPUInput{WallSeconds: 100, TargetUser: 50, TargetSystem: 50, Requests: 10000, MeanResponse: 0.02, Concurrency: 2, CPUs: 4, TargetThreads: 8},
			bound: BoundInconclusive, busy: 1.0, reason: "between waiting and CPU-bound",
		},
		{
			// 8 cores, 64 connections, 0.8 cores used: waiting, not CPU.
			name:  "multi-core io-bound",
			in:    CPUInput{WallSeconds: 100, TargetUser: 80, Requests: 64000, MeanResponse: 0.1, Concurrency: 64, CPUs: 8, TargetThreads: 16},
			bound: BoundIO, busy: 0.8, reason: "per usable core",
		},
		{
			// The target restarted inside the window: no CPU delta.
			name:  "inconclusive: no target CPU",
			in:    CPUInput{WallSeconds: 100, Requests: 10000, MeanResponse: 0.01, Concurrency: 1, CPUs: 2},
			bound: BoundInconclusive, reason: "no target CPU time",
		},
		{
			name:  "inconclusive: no data",
			in:    CPUInput{},
			bound: BoundInconclusive, reason: "no soak window",
		},
		{
			// A CPU burner on a shared machine: 2 ms of CPU per request,
			// 3.1 ms response at c=1, and 1 ms of it runnable but waiting
			// for a core. Without the wait it looks half idle.
			name:  "cpu-bound on a busy machine",
			in:    CPUInput{WallSeconds: 10, TargetUser: 6.4, Requests: 3200, MeanResponse: 0.003125, Concurrency: 1, CPUs: 2, TargetThreads: 6, RunqueueWaitRate: 0.32},
			bound: BoundCPU, busy: 0.64, reason: "and waiting for a CPU 32 % (the machine is busy)",
		},
		{
			// The same figures without schedstat stay undecided.
			name:  "the same without the run-queue wait",
			in:    CPUInput{WallSeconds: 10, TargetUser: 6.4, Requests: 3200, MeanResponse: 0.003125, Concurrency: 1, CPUs: 2, TargetThreads: 6},
			bound: BoundInconclusive, busy: 0.64, reason: "between waiting and CPU-bound",
		},
		{
			// One thread at 95 % of a core: 8 requests queue for it.
			name:  "single thread saturated",
			in:    CPUInput{WallSeconds: 100, TargetUser: 95, Requests: 10000, MeanResponse: 0.08, Concurrency: 8, CPUs: 4, TargetThreads: 1},
			bound: BoundCPU, busy: 0.95 / 100 * 8 / 0.08,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := AnalyzeCPU(tc.in)
			if c.Bound != tc.bound || c.KernelHeavy != tc.kernel || math.Abs(c.BusyFraction-tc.busy) > 1e-9 {
				t.Errorf("got %s kernel=%v busy=%.4f; want %s kernel=%v busy=%.4f (%s)", c.Bound, c.KernelHeavy, c.BusyFraction, tc.bound, tc.kernel, tc.busy, c.Reason)
			}
			if !strings.Contains(c.Reason, tc.reason) {
				t.Errorf("got reason %q; want it to contain %q", c.Reason, tc.reason)
			}
			t.Logf("%s", c.Reason)
		})
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
