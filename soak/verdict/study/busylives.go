package study

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/soakd/soakd/soak/verdict"
)

// The busy-machine lives of issue 41 (item 4): a leak of about 120
// B/request that recycling hides, soaked for 90 s in a closed loop on a
// machine whose every core is busy. What contention does to such a run,
// as measured on testdata/recycle under bench/busy.sh
// (bench/recycle-busy.sh): the throughput falls 4–9× and lurches (the
// sampler's requests between samples vary several-fold), samples come
// late (the sampler is starved), a sample may catch a worker mid-exec (a
// few MiB short of its size) and a worker's start-up spreads over more of
// its life.

// busyLives is a recycled or restarted worker pool on a busy machine:
// supervised (one child restarted every 10–30 s, as systemd's Restart=)
// or prefork (3–4 workers replaced after a fixed number of requests, as
// gunicorn's --max-requests). Each worker starts at 1–8 MiB (a C worker
// to a Go one), grows by a start-up of 0.5–4 MiB over its first 5–25 %
// of its life's requests, and leaks leak bytes per request it serves; a
// new prefork worker idles for 0–100 % of a life's worth of the others'
// requests before it serves (a closed loop's connections stay with the
// workers that hold them), so its start-up can fall after the first
// third of its samples, as on testdata/recycle. The
// load runs at 1 000–15 000 req/s with a lognormal lurch of σ 0.3–0.8
// per sample and stalls (no request) in 0–10 % of the samples; samples
// are 0.27 s apart on average, each late by an exponential share of up
// to 1.5 intervals; 0–15 % of lives have their first sample mid-exec.
func busyLives(rng *rand.Rand, leak float64, prefork bool) Series {
	const (
		soakSec   = 81.0
		warmupSec = 9.0
		sample    = 0.27
	)
	workers, life := 1, uniform(rng, 10, 30) // supervised: a life in seconds
	rate := logUniform(rng, 1000, 15000)
	maxReq := 0.0
	if prefork {
		workers = 3 + rng.IntN(2)
		// Each worker serves maxReq requests: lives of 5–40 s at the
		// run's mean rate.
		maxReq = rate * uniform(rng, 5, 40) / float64(workers)
	}
	lurch, stalls, late := uniform(rng, 0.3, 0.8), uniform(rng, 0, 0.1), uniform(rng, 0, 1.5)
	midExec, idleShare := uniform(rng, 0, 0.15), uniform(rng, 0, 1)
	size, startup := logUniform(rng, 1*mib, 8*mib), logUniform(rng, 0.5*mib, 4*mib)
	startShare := uniform(rng, 0.05, 0.25)
	sd := logUniform(rng, 4*kib, 64*kib)
	master := logUniform(rng, 2*mib, 8*mib)

	type proc struct {
		born, bornReq float64 // seconds and tree requests at its birth
		served        float64 // requests it served
		idle          float64 // tree requests left before it serves
		idx           int     // its index in lives
		first         bool    // no sample taken yet
	}
	lives := [][]verdict.Point{nil}
	newProc := func(t, q float64) proc {
		lives = append(lives, nil)
		return proc{born: t, bornReq: q, idx: len(lives) - 1, first: true}
	}
	procs := make([]proc, workers)
	for i := range procs {
		procs[i] = newProc(0, 0)
		if prefork { // staggered, as a pool that has run a while
			procs[i].served = maxReq * float64(i) / float64(workers)
		}
	}
	// A life's start-up: the requests over which it grows by startup.
	startReq := func() float64 {
		if prefork {
			return startShare * maxReq
		}
		return startShare * life * rate / float64(workers)
	}()
	var pts []verdict.Point
	var q float64
	for t := 0.0; t <= warmupSec+soakSec; {
		dt := sample * (1 + late*rng.ExpFloat64())
		t += dt
		ph := verdict.Soak
		if t < warmupSec {
			ph = verdict.Warmup
		}
		served := 0.0
		if rng.Float64() >= stalls {
			served = rate * dt * math.Exp(lurch*rng.NormFloat64()-lurch*lurch/2)
		}
		q += served
		total := master
		lives[0] = append(lives[0], verdict.Point{Requests: q, Seconds: t, Value: pages(master), Incarnation: 1, Phase: ph})
		active := 0
		for i := range procs {
			if procs[i].idle <= 0 {
				active++
			}
		}
		for i := range procs {
			p := &procs[i]
			if p.idle > 0 {
				p.idle -= served
			} else {
				p.served += served / float64(active)
			}
			if (prefork && p.served >= maxReq) || (!prefork && t-p.born >= life) {
				*p = newProc(t, q)
				if prefork {
					// A closed loop's connections stay with the
					// workers that hold them: a new worker idles until
					// one is closed.
					p.idle = uniform(rng, 0, idleShare) * maxReq * float64(workers)
				}
			}
			v := size + startup*math.Min(1, p.served/startReq) + leak*p.served
			if p.served > 0 { // an idle worker allocates nothing: its RSS is flat to the page
				v += sd * rng.NormFloat64()
			}
			if p.first && rng.Float64() < midExec {
				v = uniform(rng, 0.2, 0.8) * size // read while it execs
			}
			p.first = false
			v = pages(math.Max(v, 4096))
			total += v
			lives[p.idx] = append(lives[p.idx], verdict.Point{Requests: q, Seconds: t, Value: v, Incarnation: 1, Phase: ph})
		}
		pts = append(pts, verdict.Point{Requests: q, Seconds: t, Value: pages(total), Incarnation: 1, Phase: ph})
	}
	opt := verdict.ResourceOptions{Name: "rss", Unit: "bytes", Lives: lives}
	sh := Shape{SoakSec: soakSec, SampleSec: sample, Rate: rate, Drift: 1, WarmupSec: warmupSec}
	lifeReq := maxReq
	if !prefork {
		lifeReq = life * rate / float64(workers)
	}
	return Series{Points: pts, Lives: lives, Opt: opt, Truth: leak, NoiseSD: sd, Shape: sh,
		LifeShare: leak * lifeReq / (size + startup),
		Params:    fmt.Sprintf("life %.0f req (%.0f s), workers %d, size %.1f MiB, start-up %.1f MiB, %.0f req/s, lurch %.2f, late %.2f", lifeReq, lifeReq*float64(workers)/rate, workers, size/mib, startup/mib, rate, lurch, late)}
}

// busyKinds are the busy-machine lives' designs: a leak of 120 B/request
// and its no-leak twin, supervised and prefork.
func busyKinds() []Kind {
	mk := func(leak float64, prefork bool) func(*rand.Rand) Series {
		return func(rng *rand.Rand) Series { return busyLives(rng, leak, prefork) }
	}
	return []Kind{
		{Name: "busy-supervised", Make: mk(0, false)},
		{Name: "busy-prefork", Make: mk(0, true)},
		{Name: "leak-120-busy-supervised", Leak: true, Make: mk(120, false)},
		{Name: "leak-120-busy-prefork", Leak: true, Make: mk(120, true)},
	}
}
