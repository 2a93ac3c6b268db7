package study

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"

	"github.com/soakd/soakd/soak/verdict"
)

// The cool-down designs of issue 41, item 1: a leak at a multiple of the
// horizon floor with an idle baseline before the load and a cool-down
// after it, where "released after cool-down" (which turns a leak into
// stable) must be proven, not read off the cool-down's lowest sample; and
// the same growth really given back, which must still read released.

// ReleaseDesign is one cool-down design: a leak of Times the horizon
// floor at Rate requests a second over SoakSec, sampled every second,
// with a minute of idle baseline, a minute of warm-up and a cool-down of
// CoolSec, on Noise: "white" (1 MiB, the issue's) or "ar1" (0.5 MiB white
// plus 1 MiB of AR(1) wander with τ = 5 min, the slow designs'). Given:
// the growth is handed back when the load stops (a pool trimmed when
// idle), so the truth is released.
type ReleaseDesign struct {
	Times, Rate, SoakSec, CoolSec float64
	Noise                         string
	Given                         bool
}

// Leak is the design's leak in bytes per request.
func (d ReleaseDesign) Leak() float64 {
	th := verdict.MemoryThresholds
	return d.Times * th.HorizonGrowth / (d.Rate * th.Horizon)
}

// Name labels a design, e.g. "2.6× floor white cool 60 s".
func (d ReleaseDesign) Name() string {
	s := fmt.Sprintf("%g× floor %s cool %s", d.Times, d.Noise, coolText(d.CoolSec))
	if d.Given {
		s += " given back"
	}
	return s
}

func coolText(sec float64) string {
	if sec < 120 {
		return fmt.Sprintf("%g s", sec)
	}
	return fmt.Sprintf("%g min", sec/60)
}

// Make draws one series of the design.
func (d ReleaseDesign) Make(rng *rand.Rand) Series {
	sh := Shape{SoakSec: d.SoakSec, SampleSec: 1, Rate: d.Rate, Drift: 1, WarmupSec: 60, CoolSec: d.CoolSec, BaselineSec: 60}
	base := logUniform(rng, 20*mib, 200*mib)
	white, wander := 1*mib, func() float64 { return 0 }
	if d.Noise == "ar1" {
		white, wander = 0.5*mib, ar1(rng, 300, 1*mib, sh.SampleSec)
	}
	leak := d.Leak()
	pts := generate(sh, func(q, t float64, ph verdict.Phase) (float64, int) {
		v := base + white*rng.NormFloat64() + wander()
		if !(d.Given && ph == verdict.Cooldown) {
			v += leak * math.Max(q, 0)
		}
		return pages(v), 0
	})
	return Series{Points: pts, Opt: verdict.ResourceOptions{Name: "rss", Unit: "bytes"}, Truth: leak,
		NoiseSD: math.Hypot(white, 1*mib), Shape: sh}
}

// ReleaseTally is one design's verdicts and releases.
type ReleaseTally struct {
	Design                           ReleaseDesign
	N, Leak, Stable, Plateau, Others int
	Released                         int // released_after_cooldown true
	// Covered counts the runs whose cool-down interval (cooldown_ci95)
	// holds the true difference between the cool-down's level and the
	// baseline's: 0 when given back, else the leak's whole growth.
	Covered int
	// ReleasedClean counts the runs of a leak that was not given back
	// read stable because released (the path issue 41 found).
	ReleasedClean int
	// FalseClean counts the runs of a leak that was not given back read
	// stable or plateau (a run with nothing else growing reads CLEAN).
	FalseClean int
}

// RunRelease analyses n series of design d, seeded by seed.
func RunRelease(d ReleaseDesign, n int, seed uint64) ReleaseTally {
	t := ReleaseTally{Design: d, N: n}
	for i := range n {
		rng := rand.New(rand.NewPCG(seed, uint64(i)*15485863+uint64(d.Times*1000+d.CoolSec)))
		s := d.Make(rng)
		res := verdict.AnalyzeResource(s.Points, s.Opt)
		switch res.Verdict {
		case verdict.Leak:
			t.Leak++
		case verdict.Stable:
			t.Stable++
		case verdict.Plateau:
			t.Plateau++
		default:
			t.Others++
		}
		rel := res.ReleasedAfterCooldown != nil && *res.ReleasedAfterCooldown
		if rel {
			t.Released++
		}
		if !d.Given && (res.Verdict == verdict.Stable || res.Verdict == verdict.Plateau) {
			t.FalseClean++
			if rel {
				t.ReleasedClean++
			}
		}
		if ci := res.CooldownCI95; ci != nil && ci[0] <= d.kept(s) && d.kept(s) <= ci[1] {
			t.Covered++
		}
	}
	return t
}

// kept is the growth that the cool-down keeps above the baseline: the
// leak times the requests from the soak's start to the last sample under
// load, or 0 when it is given back.
func (d ReleaseDesign) kept(s Series) float64 {
	if d.Given {
		return 0
	}
	var from, to float64
	for _, p := range s.Points {
		switch p.Phase {
		case verdict.Warmup:
			from = p.Requests
		case verdict.Soak:
			to = p.Requests
		}
	}
	return d.Leak() * (to - from)
}

// ReleaseTimes, ReleaseCools and ReleaseNoises span the cells:
// leaks of 1.5–4× the floor at 100 req/s over 30 min, cool-downs of 60 s
// to 5 min.
var (
	ReleaseTimes  = []float64{1.5, 2, 2.6, 4}
	ReleaseCools  = []float64{60, 120, 300}
	ReleaseNoises = []string{"white", "ar1"}
)

// ReleaseDesigns lists the cells, the leaks kept first, then the same
// growth given back.
func ReleaseDesigns() []ReleaseDesign {
	var out []ReleaseDesign
	for _, given := range []bool{false, true} {
		for _, noise := range ReleaseNoises {
			for _, cool := range ReleaseCools {
				for _, times := range ReleaseTimes {
					out = append(out, ReleaseDesign{Times: times, Rate: 100, SoakSec: 1800, CoolSec: cool, Noise: noise, Given: given})
				}
			}
		}
	}
	return out
}

// WriteRelease prints one line a tally.
func WriteRelease(w io.Writer, ts []ReleaseTally) {
	fmt.Fprintf(w, "%-40s %4s %5s %6s %7s %6s %8s %11s %14s %8s\n", "design", "runs", "leak", "stable", "plateau", "other", "released", "false clean", "by the release", "coverage")
	for _, t := range ts {
		fmt.Fprintf(w, "%-40s %4d %5d %6d %7d %6d %8d %11d %14d %7.1f%%\n", t.Design.Name(), t.N, t.Leak, t.Stable, t.Plateau, t.Others, t.Released, t.FalseClean, t.ReleasedClean, 100*float64(t.Covered)/float64(t.N))
	}
}
