package study

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/soakd/soakd/soak/verdict"
)

// CountDesign is a short soak of an integer count (fds, threads,
// sockets) as `soakd run -d` paces it: about 300 samples over the soak,
// a warm-up of a ninth of the soak before it (10 % of the load) and 3 s
// of baseline.
type CountDesign struct {
	Rate    float64 // requests per second
	SoakSec float64
	// Leak is the true growth in multiples of the lowest floor in force
	// (see Floor); 0 = flat.
	Leak float64
	// Poisson: the leaked units strike at random requests (each request
	// leaks with probability Leak·floor), else steadily (one unit every
	// 1/(Leak·floor) requests, the first a random share of that in).
	Poisson bool
	// Churn is what comes and goes on top: "conns" (0–4 connections in
	// flight at a sample, none at a random third of them), "pool" (a
	// pool of 0–4 that grows and shrinks by one at random moments, 100
	// moves a soak on average, back at 0 now and then), "drop" (one
	// more at the start, closed at 20–80 % of the soak: a stale fd the
	// C server closed) or "" (none).
	Churn string
}

// Name is the design's row label.
func (d CountDesign) Name() string {
	kind := "steady"
	if d.Poisson {
		kind = "poisson"
	}
	if d.Leak == 0 {
		kind = "flat"
	}
	return fmt.Sprintf("%s-%gx/%s/%g req/s/%g s", kind, d.Leak, d.Churn, d.Rate, d.SoakSec)
}

// Floor is the lowest default floor in force for a count at the
// design's rate, per request: the horizon floor (1000 per 24 h), or the
// per-request floor (0.001) under 11.6 req/s.
func (d CountDesign) Floor() float64 { return math.Min(1000/(d.Rate*86400), 0.001) }

// Make draws one run of the design.
func (d CountDesign) Make(rng *rand.Rand) Series {
	sh := Shape{SoakSec: d.SoakSec, SampleSec: d.SoakSec / 300, Rate: d.Rate, Drift: 1,
		WarmupSec: d.SoakSec / 9, BaselineSec: 3}
	base := float64(8 + rng.IntN(40))
	rate := d.Leak * d.Floor()
	leaked, last, phase := 0.0, 0.0, rng.Float64()
	pool, next := 0.0, 0.0
	drop := uniform(rng, 0.2, 0.8) * d.SoakSec
	pts := generate(sh, func(q, t float64, ph verdict.Phase) (float64, int) {
		v := base
		if ph == verdict.Soak && rate > 0 {
			q = math.Max(q, 0)
			if d.Poisson {
				leaked += poisson(rng, rate*(q-last))
			} else {
				leaked = math.Floor(q*rate + phase)
			}
			last = q
		}
		switch d.Churn {
		case "conns":
			if rng.IntN(3) > 0 {
				v += float64(rng.IntN(5))
			}
		case "pool":
			for t >= next {
				switch {
				case pool == 0:
					pool++
				case pool == 4 || rng.IntN(2) == 0:
					pool--
				default:
					pool++
				}
				next += d.SoakSec / 100 * rng.ExpFloat64()
			}
			v += pool
		case "drop":
			if t < drop {
				v++
			}
		}
		return v + leaked, 0
	})
	return Series{Points: pts, Opt: verdict.ResourceOptions{Name: "fds", Unit: "fds"}, Truth: rate, Shape: sh}
}

// poisson draws a Poisson count of mean m (small: Knuth's product of
// uniforms, by pieces of mean at most 30).
func poisson(rng *rand.Rand, m float64) float64 {
	n := 0.0
	for m > 0 {
		step := math.Min(m, 30)
		m -= step
		l, p := math.Exp(-step), rng.Float64()
		for p > l {
			n++
			p *= rng.Float64()
		}
	}
	return n
}

// CountResult counts a design's verdicts over N runs.
type CountResult struct {
	Design                               CountDesign
	N, Stable, Leak, Inconclusive, Exact int
}

// StableShare is the share of runs read stable.
func (r CountResult) StableShare() float64 { return float64(r.Stable) / float64(r.N) }

// RunCounts judges n runs of d (seed, then the run's index).
func RunCounts(d CountDesign, n int, seed uint64) CountResult {
	r := CountResult{Design: d, N: n}
	for i := range n {
		rng := rand.New(rand.NewPCG(seed, uint64(i)*7919+uint64(d.Rate)+uint64(10*d.Leak)+uint64(d.SoakSec)))
		s := d.Make(rng)
		res := verdict.AnalyzeResource(s.Points, s.Opt)
		switch res.Verdict {
		case verdict.Stable:
			r.Stable++
			if res.Exact != nil {
				r.Exact++
			}
		case verdict.Leak:
			r.Leak++
		default:
			r.Inconclusive++
		}
	}
	return r
}
