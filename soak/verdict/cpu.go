package verdict

import (
	"fmt"
	"math"

	"github.com/soakd/soakd/soak/trend"
)

// CPU verdict thresholds, from operational analysis (utilisation law
// U = X·D, Little's law N = X·R).
const (
	cpuBusy         = 0.8 // D·N/R at or above: the target computes nearly the whole request
	ioBusy          = 0.3 // D·N/R at or below: the target mostly waits
	nearParallelism = 0.9 // U at this fraction of usable cores counts as saturated
	clientSaturated = 0.9 // soakd's own CPU at this fraction of its usable cores
	kernelHeavy     = 0.5 // system share above which the work is in the kernel
)

// Bounds of the CPU verdict.
const (
	BoundCPU          = "cpu"
	BoundIO           = "io"
	BoundClient       = "client"
	BoundInconclusive = "inconclusive"
)

// AnalyzeCPU says whether the target was CPU-bound, waited on I/O, or was
// held back by the client, from the utilisation law.
//
// U = Δ(user+system)/Δwall in cores, X = requests/wall, D = U/X, and with
// N requests in flight and mean response R the busy fraction D·N/R says
// how much of each request's time the target keeps a CPU busy. By Little's
// law (N = X·R) it equals U in cores, so it is judged per usable core:
// P = min(CPUs, the target's threads or processes, N), and on one usable
// core this is exactly the D·N/R ≥ 0.8 rule of the field notes (a target
// with 8 cores using 0.8 of one is not CPU-bound). Rules, in order:
//   - cpu: D·N/R ≥ 0.8·P, or U ≥ 0.9·P, or (D+W)·N/R ≥ 0.8·P where W is
//     the time per request the target was runnable but waiting for a CPU
//     (schedstat): on a busy machine a CPU-bound target waits for a core,
//     which without W would look like waiting on I/O;
//   - client: soakd's own CPU ≥ 0.9 × min(CPUs, N) cores, or ≥ 0.9 × CPUs
//     (each closed-loop worker is about one busy goroutine, so soakd can
//     use at most min(CPUs, N) cores); ClientSaturation, when set,
//     replaces the computed fraction;
//   - io: (D+W)·N/R ≤ 0.3·P while soakd is not saturated;
//   - inconclusive otherwise, or when the window, requests, target CPU time
//     or R are missing.
//
// When N is unknown it is taken from Little's law (N = X·R).
func AnalyzeCPU(in CPUInput) CPU {
	c := CPU{Bound: BoundInconclusive, ResponseSeconds: in.MeanResponse, Concurrency: in.Concurrency}
	c.P99SlopePerHour = p99Slope(in)
	c.ThroughputDecay = decay(in.RateAtSeconds, in.RateSeries)
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
	if busy > 0 {
		c.UserShare, c.SystemShare = in.TargetUser/busy, in.TargetSystem/busy
	}
	c.KernelHeavy = c.SystemShare > kernelHeavy
	if c.Concurrency <= 0 {
		c.Concurrency = c.Throughput * in.MeanResponse
	}
	if busy <= 0 {
		c.Reason = "inconclusive: no target CPU time was measured in the soak window (a restart, or too short a window for 10 ms clock ticks)"
		return c
	}
	if in.MeanResponse <= 0 || c.Concurrency <= 0 {
		c.Reason = "inconclusive: no mean response time to compare the CPU demand with"
		return c
	}
	c.BusyFraction = c.DemandSeconds * c.Concurrency / in.MeanResponse
	if in.RunqueueWaitRate > 0 {
		c.RunqueueWaitSeconds = in.RunqueueWaitRate / c.Throughput
		c.CPUWaitFraction = c.RunqueueWaitSeconds * c.Concurrency / in.MeanResponse
	}
	c.Bound = bound(c, in)
	c.Reason = cpuReason(c, in)
	return c
}

func bound(c CPU, in CPUInput) string {
	p := parallelism(c, in)
	switch {
	case c.BusyFraction >= cpuBusy*p || c.Utilization >= nearParallelism*p ||
		c.BusyFraction+c.CPUWaitFraction >= cpuBusy*p:
		return BoundCPU
	case clientSaturation(c, in) >= clientSaturated:
		return BoundClient
	case c.BusyFraction+c.CPUWaitFraction <= ioBusy*p:
		return BoundIO
	}
	return BoundInconclusive
}

// parallelism is the cores the target can keep busy: min(CPUs, its
// threads or processes when known, N).
func parallelism(c CPU, in CPUInput) float64 {
	p := math.Max(c.Concurrency, 1)
	if in.CPUs > 0 {
		p = math.Min(p, float64(in.CPUs))
	}
	if w := math.Max(in.TargetThreads, in.TargetProcs); w > 0 {
		p = math.Min(p, w)
	}
	return p
}

// clientSaturation is soakd's CPU as a fraction of what it can use.
func clientSaturation(c CPU, in CPUInput) float64 {
	if in.ClientSaturation > 0 {
		return in.ClientSaturation
	}
	usable := c.Concurrency
	if in.CPUs > 0 {
		usable = math.Min(usable, float64(in.CPUs))
		if f := c.ClientUtilization / float64(in.CPUs); f >= clientSaturated {
			return f
		}
	}
	return c.ClientUtilization / math.Max(usable, 1)
}

func cpuReason(c CPU, in CPUInput) string {
	p := parallelism(c, in)
	busy := fmt.Sprintf("busy %.0f %% of each request (D·N/R = %.2f)", 100*c.BusyFraction/p, c.BusyFraction)
	if p != 1 {
		busy = fmt.Sprintf("busy %.0f %% of each request per usable core (D·N/R = %.2f over %g cores)", 100*c.BusyFraction/p, c.BusyFraction, p)
	}
	if c.CPUWaitFraction >= 0.05*p && c.BusyFraction < cpuBusy*p {
		busy += fmt.Sprintf(" and waiting for a CPU %.0f %% (the machine is busy)", 100*c.CPUWaitFraction/p)
	}
	shares := fmt.Sprintf("user %.0f %% / system %.0f %%", 100*c.UserShare, 100*c.SystemShare)
	if c.KernelHeavy {
		shares += " (kernel-heavy)"
	}
	switch c.Bound {
	case BoundCPU:
		return fmt.Sprintf("CPU-bound: %s, %.2f cores used, %s", busy, c.Utilization, shares)
	case BoundClient:
		return fmt.Sprintf("client-bound: soakd used %.2f cores of %d, the target was %s", c.ClientUtilization, in.CPUs, busy)
	case BoundIO:
		return fmt.Sprintf("waits (I/O, a downstream, a lock or a timer): %s, %s", busy, shares)
	}
	return fmt.Sprintf("inconclusive: %s, between waiting and CPU-bound, %s", busy, shares)
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
