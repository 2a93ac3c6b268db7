// Package study is the seeded simulation study behind soakd's verdicts:
// synthetic runs with a known truth (white noise, autocorrelated wander,
// GC sawtooth, steps and staircases, saturating growth, √-creep,
// throughput drift, restarts, recycled workers, and leaks from 4 to 200
// B/request and fd leaks), each analysed as soakd would, tallied into
// false-alarm rates, detection rates and interval coverage per kind. The
// tests assert the thresholds; cmd/verdict-study prints the whole table.
package study

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/soakd/soakd/soak/verdict"
)

const (
	kib = 1024.0
	mib = 1024 * kib
)

// Shape of a synthetic run.
type Shape struct {
	SoakSec, SampleSec float64
	Rate               float64 // requests per second at the soak's start
	Drift              float64 // the rate ends at Rate·Drift, linearly in time (1: none)
	WarmupSec, CoolSec float64
	BaselineSec        float64
}

// Series is one synthetic run with its truth.
type Series struct {
	Points []verdict.Point
	Lives  [][]verdict.Point
	Opt    verdict.ResourceOptions
	Truth  float64 // true per-request growth
	// NoiseSD is the noise's standard deviation, for "growth ≥ 5× noise".
	NoiseSD float64
	Shape   Shape
	Params  string // the model's drawn parameters, for reading a failure
	// LifeShare, for the busy-machine lives (busylives.go): what the leak
	// adds over a typical life, as a share of the life's size at its
	// start.
	LifeShare float64
}

// SoakRequests is the requests the soak served.
func (s Series) SoakRequests() float64 {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, p := range s.Points {
		if p.Phase == verdict.Soak {
			lo, hi = math.Min(lo, p.Requests), math.Max(hi, p.Requests)
		}
	}
	return hi - lo
}

// randomShape picks a realistic soak: 30 min at 1 s, 1 h at 2 s, 2 h at
// 5 s or 8 h at 10 s (a paced sampler keeps a few hundred to a few
// thousand samples), or a fast run of 10–40 s at 50 ms; 300–5000 req/s
// (20 000–50 000 for the fast runs).
func randomShape(rng *rand.Rand) Shape {
	soaks := []struct{ sec, sample float64 }{{1800, 1}, {3600, 2}, {7200, 5}, {28800, 10}, {0, 0.05}}
	s := soaks[rng.IntN(len(soaks))]
	sh := Shape{SoakSec: s.sec, SampleSec: s.sample, Rate: logUniform(rng, 300, 5000), Drift: 1,
		WarmupSec: 60, CoolSec: 60}
	if s.sec == 0 {
		sh.SoakSec, sh.Rate, sh.WarmupSec, sh.CoolSec = uniform(rng, 10, 40), logUniform(rng, 20000, 50000), 2, 3
	}
	return sh
}

func logUniform(rng *rand.Rand, lo, hi float64) float64 {
	return lo * math.Exp(rng.Float64()*math.Log(hi/lo))
}

func uniform(rng *rand.Rand, lo, hi float64) float64 { return lo + rng.Float64()*(hi-lo) }

// model gives a resource's value at soak requests q (0 at the soak's
// start, negative in the warm-up), soak seconds t and phase, and the
// target's incarnation.
type model func(q, t float64, ph verdict.Phase) (value float64, inc int)

// generate samples a run of model m on shape sh. In the cool-down no
// requests complete.
func generate(sh Shape, m model) []verdict.Point {
	total := sh.BaselineSec + sh.WarmupSec + sh.SoakSec + sh.CoolSec
	pts := make([]verdict.Point, 0, int(total/sh.SampleSec)+1)
	var req float64
	loadStart := sh.BaselineSec
	soakStart := loadStart + sh.WarmupSec
	var soakReq0 float64
	for t := 0.0; t <= total; t += sh.SampleSec {
		ph := verdict.Soak
		switch {
		case t < loadStart:
			ph = verdict.Baseline
		case t < soakStart:
			ph = verdict.Warmup
		case t > soakStart+sh.SoakSec:
			ph = verdict.Cooldown
		}
		if ph == verdict.Warmup || ph == verdict.Soak {
			frac := math.Max(0, t-soakStart) / sh.SoakSec
			req += sh.Rate * (1 + (sh.Drift-1)*frac) * sh.SampleSec
		}
		if ph == verdict.Warmup {
			soakReq0 = req
		}
		v, inc := m(req-soakReq0, t-soakStart, ph)
		pts = append(pts, verdict.Point{Requests: req, Seconds: t, Value: v, Incarnation: inc, Phase: ph})
	}
	return pts
}

// pages rounds to whole 4 KiB pages, as RSS is.
func pages(v float64) float64 { return math.Round(v/4096) * 4096 }

// noise is white noise of a random spread from a page to 2 MiB around a
// base of 10–200 MiB; it returns the base, the spread and a sampler.
func noise(rng *rand.Rand) (float64, float64, func() float64) {
	base, sd := logUniform(rng, 10*mib, 200*mib), logUniform(rng, 4*kib, 2*mib)
	return base, sd, func() float64 { return sd * rng.NormFloat64() }
}

// ar1 is autocorrelated wander with time constant tau seconds and spread
// sd, advanced once per sample of sampleSec.
func ar1(rng *rand.Rand, tau, sd, sampleSec float64) func() float64 {
	phi := math.Exp(-sampleSec / tau)
	level := sd * rng.NormFloat64()
	return func() float64 {
		level = phi*level + math.Sqrt(1-phi*phi)*sd*rng.NormFloat64()
		return level
	}
}

// memory builds a memory series: base + white noise + extra(q, t) (+ an
// AR(1) wander when tau > 0), rounded to pages.
func memory(rng *rand.Rand, sh Shape, tau float64, extra func(q, t float64) float64) Series {
	base, sd, w := noise(rng)
	wander := func() float64 { return 0 }
	if tau > 0 {
		wsd := logUniform(rng, 0.5*mib, 4*mib)
		wander = ar1(rng, tau, wsd, sh.SampleSec)
		sd = math.Hypot(sd, wsd)
	}
	pts := generate(sh, func(q, t float64, ph verdict.Phase) (float64, int) {
		v := base + w() + wander()
		switch ph {
		case verdict.Baseline:
		case verdict.Warmup:
			v += 0.5 * extra(0, 0)
		default:
			v += extra(math.Max(q, 0), math.Max(t, 0))
		}
		return pages(v), 0
	})
	return Series{Points: pts, Opt: verdict.ResourceOptions{Name: "rss", Unit: "bytes"}, NoiseSD: sd, Shape: sh}
}

// sawtooth is a Go heap: live bytes plus what was allocated since the last
// GC, which runs every cycle seconds (1–15 min; 0.5–5 s in a fast run,
// where the allocation rate drives the cycle); the troughs are the live
// heap. leak bytes per request stay live.
func sawtooth(rng *rand.Rand, sh Shape, leak float64) Series {
	other, live := logUniform(rng, 5*mib, 50*mib), logUniform(rng, 5*mib, 150*mib)
	cycle := uniform(rng, 60, 900)
	if sh.SoakSec < 60 { // a fast run allocates fast: a GC every 0.5–5 s
		cycle = uniform(rng, 0.5, 5)
	}
	_, sd, w := noise(rng)
	sd = math.Min(sd, 256*kib)
	pts := generate(sh, func(q, t float64, ph verdict.Phase) (float64, int) {
		since := math.Mod(t+1e4*cycle, cycle) / cycle
		return pages(other + live + leak*math.Max(q, 0) + live*since + math.Min(sd/(2*mib), 1)*w()), 0
	})
	// The troughs are sampled up to one sample interval after each GC, so
	// each sits above the live heap by up to live·sample/cycle: that is
	// the envelope's noise. With fewer than a dozen troughs the sawtooth
	// itself is: no trend test on so few points reaches p < 0.001 (12
	// points in perfect order give Mann–Kendall's z = 4.1 before any
	// correction for their correlation).
	sd = math.Hypot(sd, live*math.Min(sh.SampleSec/cycle, 1)/math.Sqrt(12))
	if sh.SoakSec/cycle < 12 {
		sd = math.Hypot(sd, live/math.Sqrt(12))
	}
	return Series{Points: pts, Opt: verdict.ResourceOptions{Name: "rss", Unit: "bytes"}, Truth: leak, NoiseSD: sd, Shape: sh}
}

// fds is an integer count: a base of 10–40, 0–5 fds in flight, plus one
// fd leaked every `every` requests (0: none).
func fds(rng *rand.Rand, sh Shape, every float64) Series {
	base, spread := float64(10+rng.IntN(31)), 1+rng.IntN(6)
	pts := generate(sh, func(q, t float64, ph verdict.Phase) (float64, int) {
		v := base + float64(rng.IntN(spread))
		if every > 0 && ph != verdict.Baseline && ph != verdict.Warmup {
			v += math.Floor(math.Max(q, 0) / every)
		}
		return v, 0
	})
	truth := 0.0
	if every > 0 {
		truth = 1 / every
	}
	return Series{Points: pts, Opt: verdict.ResourceOptions{Name: "fds", Unit: "fds"}, Truth: truth,
		NoiseSD: float64(spread) / math.Sqrt(12), Shape: sh}
}

// restart: the target restarts once at 30–70 % of the soak and comes back
// at its base level; each incarnation warms a cache of 2–16 MiB over its
// first 10 % of the soak's requests (no leak), or leaks from its base.
func restart(rng *rand.Rand, sh Shape, leak float64) Series {
	base, sd, w := noise(rng)
	soakReq := sh.Rate * sh.SoakSec
	at, g := uniform(rng, 0.3, 0.7)*soakReq, logUniform(rng, 2*mib, 16*mib)
	if leak > 0 {
		g = 0
	}
	pts := generate(sh, func(q, t float64, ph verdict.Phase) (float64, int) {
		q = math.Max(q, 0)
		since, inc := q, 0
		if q >= at {
			since, inc = q-at, 1
		}
		return pages(base + w() + g*math.Min(1, since/(0.1*soakReq)) + leak*since), inc
	})
	return Series{Points: pts, Opt: verdict.ResourceOptions{Name: "rss", Unit: "bytes"}, Truth: leak, NoiseSD: sd, Shape: sh}
}

// recycled is a prefork server: a master of 5–20 MiB and 4 workers that
// share the load and are each replaced after serving maxReq requests
// (staggered). A worker starts at 8–20 MiB, warms a cache of 1–4 MiB over
// its first 10 % of requests, and leaks leak bytes per request it serves.
// The tree's total stays bounded; the lives hold each process's own
// series.
func recycled(rng *rand.Rand, sh Shape, leak float64) Series {
	return recycledWarm(rng, sh, leak, 0.1, 0)
}

// recycledWarm is recycled with each worker's cache filling linearly over
// warm of its life's requests (0.1: front-loaded; 1–2: a runtime whose
// first collection spans the whole life, as a short-lived Go worker's
// does, so that every life grows to its end). lifeSec > 0 sets how long a
// life lasts instead (workers replaced after so many requests at the
// soak's rate).
func recycledWarm(rng *rand.Rand, sh Shape, leak, warm, lifeSec float64) Series {
	const workers = 4
	soakReq := sh.Rate * sh.SoakSec
	maxReq := soakReq / uniform(rng, 3, 8) // each worker lives for 3–8 of its lifetimes per soak… staggered
	if lifeSec > 0 {
		maxReq = sh.Rate * lifeSec / workers
	}
	master := logUniform(rng, 5*mib, 20*mib)
	start, cache := logUniform(rng, 8*mib, 20*mib), logUniform(rng, 1*mib, 4*mib)
	_, sd, w := noise(rng)
	sd = math.Min(sd, 512*kib)
	type life struct {
		born float64 // tree requests at its birth
		idx  int
	}
	cur := make([]life, workers)
	next := 1
	lives := [][]verdict.Point{nil}
	for i := range cur {
		cur[i] = life{born: -float64(i) * maxReq / workers, idx: next}
		lives = append(lives, nil)
		next++
	}
	pts := generate(sh, func(q, t float64, ph verdict.Phase) (float64, int) { return 0, 0 })
	for k := range pts {
		p := &pts[k]
		q := p.Requests - (pts[0].Requests)
		total := master + w()
		lives[0] = append(lives[0], verdict.Point{Requests: p.Requests, Seconds: p.Seconds, Value: pages(master), Phase: p.Phase})
		for i := range cur {
			served := (q - cur[i].born) / workers
			if served >= maxReq {
				cur[i] = life{born: q, idx: next}
				lives = append(lives, nil)
				next++
				served = 0
			}
			v := pages(start + cache*math.Min(1, math.Max(served, 0)/(warm*maxReq)) + leak*math.Max(served, 0) + sd*rng.NormFloat64())
			total += v
			lives[cur[i].idx] = append(lives[cur[i].idx], verdict.Point{Requests: p.Requests, Seconds: p.Seconds, Value: v, Phase: p.Phase})
		}
		p.Value = pages(total)
	}
	opt := verdict.ResourceOptions{Name: "rss", Unit: "bytes", Lives: lives}
	return Series{Points: pts, Lives: lives, Opt: opt, Truth: leak, NoiseSD: sd, Shape: sh}
}

// poolJumps: a pool that grows and shrinks in chunks (an allocator
// mapping and unmapping arenas, a connection pool): a level of k chunks
// of 1–16 MiB, k between 0 and 4, moving one chunk up or down at random
// about 20 times over the soak. It jumps without growing.
func poolJumps(rng *rand.Rand) Series {
	sh := randomShape(rng)
	chunk, soakReq := logUniform(rng, 1*mib, 16*mib), sh.Rate*sh.SoakSec
	k, next := 2, 0.0
	s := memory(rng, sh, 0, func(q, t float64) float64 {
		for q >= next {
			switch {
			case k == 0:
				k++
			case k == 4:
				k--
			case rng.IntN(2) == 0:
				k++
			default:
				k--
			}
			next += soakReq / 20 * rng.ExpFloat64()
		}
		return float64(k) * chunk
	})
	s.Params = fmt.Sprintf("chunk %.1f MiB", chunk/mib)
	return s
}

// heapSteps: a leak of leak bytes per request that RSS shows only as the
// heap is expanded (a JVM committing heap): when the live bytes pass 90 %
// of the committed heap, it grows to 1.1–1.6× the live bytes, so RSS
// climbs in steps that get larger, with flat stretches between; the leak
// multiplies the heap 3–30× over the soak.
func heapSteps(leak float64) func(*rand.Rand) Series {
	return func(rng *rand.Rand) Series {
		sh := randomShape(rng)
		live0 := leak * sh.Rate * sh.SoakSec / uniform(rng, 3, 30)
		committed, steps := live0*uniform(rng, 1.1, 1.6), 0
		s := memory(rng, sh, 0, func(q, t float64) float64 {
			if live := live0 + leak*q; live > 0.9*committed {
				committed = live * uniform(rng, 1.1, 1.6)
				steps++
			}
			return committed
		})
		s.Truth = leak
		s.Params = fmt.Sprintf("heap %.1f MiB at the start", live0/mib)
		return s
	}
}
