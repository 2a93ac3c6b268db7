package study

import (
	"math"
	"math/rand/v2"
	"runtime"
	"sort"
	"sync"

	"github.com/soakd/soakd/soak/verdict"
)

// LiveResult is how often a live analysis, repeated every minute with a
// Gate of Need looks, fires a leak alert.
type LiveResult struct {
	Need    int
	MinSoak float64 // seconds
	// StableRuns stable 8 h runs (AR(1) wander with a time constant of
	// 1 min–2 h on white noise), of which EverFired fired at least once.
	StableRuns, EverFired int
	// LeakRuns runs leaking 200 B/request at 100 req/s on the same noise,
	// of which FiredIn30 fired within 30 minutes of the soak's start;
	// MedianMinutes is the median time to fire.
	LeakRuns, FiredIn30 int
	MedianMinutes       float64
}

// liveShape is the daemon's look at a scheduled soak: samples every 30 s,
// a 10-minute warm-up, 100 req/s.
func liveShape(hours float64) Shape {
	return Shape{SoakSec: hours * 3600, SampleSec: 30, Rate: 100, Drift: 1, WarmupSec: 600}
}

// LiveStudy simulates the daemon's repeated looks, each an analysis at
// level alpha, for each gate, on n stable runs and n leaking ones.
//
// The runs are simulated on every core (each from its own seeded
// generator, so the result does not depend on their order): a run is
// hundreds of analyses, and the study's 100 runs took 131 s on one core.
func LiveStudy(n int, alpha float64, gates []GateSpec, seed uint64) []LiveResult {
	needs := gates
	out := make([]LiveResult, len(needs))
	times := make([][]float64, len(needs))
	calms, fireds := make([][]float64, n), make([][]float64, n)
	each(n, func(k int) {
		rng := rand.New(rand.NewPCG(seed, uint64(k)*104729+1))
		tau := logUniform(rng, 60, 7200)
		stable := memory(rng, liveShape(8), tau, func(q, t float64) float64 { return 0 })
		leaky := memory(rng, liveShape(1), tau, func(q, t float64) float64 { return 200 * q })
		calms[k], fireds[k] = looks(stable.Points, 8*60, alpha, needs), looks(leaky.Points, 60, alpha, needs)
	})
	for k := range n {
		calm, fired := calms[k], fireds[k]
		for i, g := range gates {
			r := &out[i]
			r.Need, r.MinSoak = g.Need, g.MinSoak
			r.StableRuns++
			r.LeakRuns++
			if calm[i] >= 0 {
				r.EverFired++
			}
			if fired[i] >= 0 && fired[i] <= 30 {
				r.FiredIn30++
			}
			if fired[i] < 0 {
				fired[i] = math.Inf(1)
			}
			times[i] = append(times[i], fired[i])
		}
	}
	for i := range out {
		out[i].MedianMinutes = median(times[i])
	}
	return out
}

// GateSpec is a gate to simulate.
type GateSpec struct {
	Need    int
	MinSoak float64
}

// looks analyses the growing series every minute of the soak, for up to
// minutes, and returns for each gate the soak minute of its first firing,
// or −1.
func looks(pts []verdict.Point, minutes int, alpha float64, specs []GateSpec) []float64 {
	gates := make([]*verdict.Gate, len(specs))
	first := make([]float64, len(specs))
	for i, g := range specs {
		gates[i], first[i] = verdict.NewGate(g.Need, g.MinSoak), -1
	}
	soakStart := -1.0
	for _, p := range pts {
		if p.Phase == verdict.Soak {
			soakStart = p.Seconds
			break
		}
	}
	opt := verdict.ResourceOptions{Name: "rss", Unit: "bytes", Thresholds: verdict.Thresholds{Alpha: alpha, Look: true}}
	for m := 1; m <= minutes; m++ {
		until := soakStart + float64(m)*60
		end := 0
		for end < len(pts) && pts[end].Seconds <= until && pts[end].Phase != verdict.Cooldown {
			end++
		}
		leak := verdict.AnalyzeResource(pts[:end], opt).Verdict == verdict.Leak
		for i, g := range gates {
			if g.Look("rss", leak, float64(m)*60) && first[i] < 0 {
				first[i] = float64(m)
			}
		}
	}
	return first
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s) == 0 {
		return math.NaN()
	}
	return s[len(s)/2]
}

// each calls f(k) for every k < n, on as many goroutines as there are
// cores.
func each(n int, f func(k int)) {
	var wg sync.WaitGroup
	next := make(chan int)
	for range min(runtime.GOMAXPROCS(0), max(n, 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range next {
				f(k)
			}
		}()
	}
	for k := range n {
		next <- k
	}
	close(next)
	wg.Wait()
}
