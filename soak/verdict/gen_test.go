package verdict

import (
	"math"
	"math/rand/v2"
)

const (
	kib = 1024.0
	mib = 1024 * kib
)

// model is a synthetic resource: value at cumulative soak requests q (0 at
// the soak's start) and time t; it may keep state and may restart the
// target by returning a new incarnation.
type model func(q, t float64) (value float64, inc int)

// run describes a synthetic run's shape.
type run struct {
	soakSec, sampleSec, rate float64
	warmupSec, coolSec       float64
	release                  bool    // cool-down falls back to releaseTo
	releaseTo                float64 // level after a release
}

// randomRun picks a realistic soak: 30 min to 8 h, 100–5000 req/s,
// samples every 1 s (2 s beyond 1 h, 10 s at 8 h, as a long-run sampler
// would thin them).
func randomRun(rng *rand.Rand) run {
	soaks := []struct{ sec, sample float64 }{{1800, 1}, {3600, 1}, {7200, 2}, {28800, 10}}
	s := soaks[rng.IntN(len(soaks))]
	return run{soakSec: s.sec, sampleSec: s.sample, rate: logUniform(rng, 100, 5000), warmupSec: 60, coolSec: 60}
}

func logUniform(rng *rand.Rand, lo, hi float64) float64 {
	return lo * math.Exp(rng.Float64()*math.Log(hi/lo))
}

func uniform(rng *rand.Rand, lo, hi float64) float64 { return lo + rng.Float64()*(hi-lo) }

// generate samples a run of model m. The warm-up ramps up to the model's
// level from 60 % of it, which the fit must ignore; in the cool-down no
// requests complete, so the model holds its level (glibc keeps memory), or
// with release the value falls to releaseTo (a Go runtime gives it back).
func generate(rng *rand.Rand, r run, m model) []Point {
	var req float64
	inc := 0
	total := r.warmupSec + r.soakSec + r.coolSec
	pts := make([]Point, 0, int(total/r.sampleSec)+1)
	for t := 0.0; t <= total; t += r.sampleSec {
		p := Point{Seconds: t, Phase: Soak}
		switch {
		case t < r.warmupSec:
			p.Phase = Warmup
		case t > r.warmupSec+r.soakSec:
			p.Phase = Cooldown
		}
		if p.Phase != Cooldown {
			req += r.rate * r.sampleSec * uniform(rng, 0.9, 1.1)
		}
		q := math.Max(0, req-r.rate*r.warmupSec)
		v, i := m(q, t)
		switch p.Phase {
		case Warmup:
			v *= 0.6 + 0.4*t/r.warmupSec
		case Cooldown:
			if r.release {
				v = r.releaseTo
			}
		}
		if i != inc {
			inc = i
		}
		p.Requests, p.Value, p.Incarnation = req, v, inc
		pts = append(pts, p)
	}
	return pts
}

// pages rounds to whole 4 KiB pages, as RSS is.
func pages(v float64) float64 { return math.Round(v/4096) * 4096 }

// white: base + leak·q + Gaussian noise from page level to a few MiB.
func white(rng *rand.Rand, leak float64) model {
	base, sd := logUniform(rng, 10*mib, 200*mib), logUniform(rng, 4*kib, 4*mib)
	return func(q, _ float64) (float64, int) {
		return pages(base + leak*q + sd*rng.NormFloat64()), 0
	}
}

// sawtooth: a Go heap. Each request allocates alloc bytes, of which leak
// stay live; a GC runs when the heap reaches twice the live heap (GOGC=100),
// a cycle of 2–60 s worth of requests at the start, and a forced GC every
// 2 min. Between GCs the heap is live + alloc·(requests since the GC), so
// the troughs, the lower envelope, follow the live heap.
func sawtooth(rng *rand.Rand, leak, rate float64) model {
	other, live := logUniform(rng, 5*mib, 50*mib), logUniform(rng, 5*mib, 150*mib)
	alloc := live / (rate * uniform(rng, 2, 60))
	sd := logUniform(rng, 4*kib, 256*kib)
	var lastGC, lastGCAt float64
	return func(q, t float64) (float64, int) {
		l := live + leak*q
		if alloc*(q-lastGC) >= l || t-lastGCAt >= 120 {
			lastGC, lastGCAt = q, t
		}
		return pages(other + l + alloc*(q-lastGC) + sd*rng.NormFloat64()), 0
	}
}

// steps: allocator retention, one to three permanent steps of 1–8 MiB in
// the first half of the soak, on white noise.
func steps(rng *rand.Rand, soakReq float64) model {
	w := white(rng, 0)
	n := 1 + rng.IntN(3)
	at, size := make([]float64, n), make([]float64, n)
	for i := range at {
		at[i], size[i] = rng.Float64()*soakReq/2, uniform(rng, 1*mib, 8*mib)
	}
	return func(q, t float64) (float64, int) {
		v, _ := w(q, t)
		for i := range at {
			if q >= at[i] {
				v += size[i]
			}
		}
		return v, 0
	}
}

// plateau: a cache that fills over the first 20–40 % of the soak, by
// 4–64 MiB, then stays, on noise m.
func plateau(rng *rand.Rand, soakReq float64, m model) model {
	fill, g := uniform(rng, 0.2, 0.4)*soakReq, logUniform(rng, 4*mib, 64*mib)
	return func(q, t float64) (float64, int) {
		v, i := m(q, t)
		return v + g*math.Min(1, q/fill), i
	}
}

// restart: the target restarts once at 30–70 % of the soak and comes back
// at its base level; each incarnation warms a cache of 2–16 MiB over its
// first 10 % of the soak's requests and then stays flat (leak = 0), or
// leaks from its base without the cache (leak > 0).
func restart(rng *rand.Rand, soakReq, leak float64) model {
	w := white(rng, 0)
	at, g := uniform(rng, 0.3, 0.7)*soakReq, logUniform(rng, 2*mib, 16*mib)
	if leak > 0 {
		g = 0 // keep the truth a straight line for the coverage test
	}
	return func(q, t float64) (float64, int) {
		v, _ := w(q, t)
		since, inc := q, 0
		if q >= at {
			since, inc = q-at, 1
		}
		return v + g*math.Min(1, since/(0.1*soakReq)) + leak*since, inc
	}
}

// fds: an integer count with heavy ties: a base of 10–40, 0–5 fds in
// flight, plus floor(leak·q).
func fds(rng *rand.Rand, leak float64) model {
	base, spread := float64(10+rng.IntN(31)), 1+rng.IntN(6)
	return func(q, _ float64) (float64, int) {
		return base + float64(rng.IntN(spread)) + math.Floor(leak*q), 0
	}
}

// wander: autocorrelated drift with no trend, like page cache or arena
// churn: an AR(1) process with a 10 min time constant and 0.5–4 MiB spread,
// on page-level noise. Mann–Kendall alone flags such series often.
func wander(rng *rand.Rand, sampleSec float64) model {
	w := white(rng, 0)
	spread := logUniform(rng, 0.5*mib, 4*mib)
	phi := math.Exp(-sampleSec / 600)
	var level float64
	return func(q, t float64) (float64, int) {
		v, _ := w(q, t)
		level = phi*level + math.Sqrt(1-phi*phi)*spread*rng.NormFloat64()
		return pages(v + level), 0
	}
}

// creep: glibc retention, growth that slows like a logarithm, 0.3–3 MiB
// over the soak; not a leak.
func creep(rng *rand.Rand, soakReq float64) model {
	w := white(rng, 0)
	total := logUniform(rng, 0.3*mib, 3*mib)
	q0 := soakReq / 50
	return func(q, t float64) (float64, int) {
		v, _ := w(q, t)
		return pages(v + total*math.Log1p(q/q0)/math.Log1p(50)), 0
	}
}
