package study

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"sort"
	"strings"

	"github.com/soakd/soakd/soak/verdict"
)

// Kind is one model of the study.
type Kind struct {
	Name string
	Leak bool // the truth is a leak
	Make func(rng *rand.Rand) Series
	// Gap names a known limit: the model misses the study's bars, and
	// its own (lower) bars guard against it getting worse. See "Limits"
	// in docs/verdict-study.md.
	Gap string
	// MinCover is a leak model's own bar on its interval's coverage of
	// the true slope, when its verdict's interval cannot meet the
	// study's 90 % (see coverGap); 0 = the study's.
	MinCover float64
}

// coverGap: since issue 41 (item 5) a leak's ci95 is the interval that
// decided it, the whole soak's, no longer widened to span the second
// half's. Where the whole soak's slope is not the leak's, it covers the
// truth less often: a warm-up that spills into the soak tilts it (87 and
// 90.5 %, seed 2), and RSS under a JVM-like heap grows by the heap's
// expansion, 1.1–1.6× the bytes leaked, not by them (19 %; 94 % with
// the union, which reached the truth by its width).
const coverGap = "the whole soak's slope is not the leak's: ci95 covers the truth less often"

// Kinds lists every model of the study, non-leaks first.
func Kinds() []Kind {
	flat := func(tau float64) func(*rand.Rand) Series {
		return func(rng *rand.Rand) Series {
			return memory(rng, randomShape(rng), tau, func(q, t float64) float64 { return 0 })
		}
	}
	leak := func(perReq, tau float64) func(*rand.Rand) Series {
		return func(rng *rand.Rand) Series {
			s := memory(rng, randomShape(rng), tau, func(q, t float64) float64 { return perReq * q })
			s.Truth = perReq
			return s
		}
	}
	ks := []Kind{
		{Name: "white", Make: flat(0)},
		{Name: "ar1-1min", Make: flat(60)},
		{Name: "ar1-10min", Make: flat(600)},
		{Name: "ar1-30min", Make: flat(1800)},
		{Name: "ar1-2h", Make: flat(7200)},
		{Name: "gc-sawtooth", Make: func(rng *rand.Rand) Series { return sawtooth(rng, randomShape(rng), 0) }},
		{Name: "step-late", Make: steps(1, 0.5, 0.9)},
		{Name: "steps-2", Make: steps(2, 0.1, 0.9)},
		{Name: "steps-3", Make: steps(3, 0.1, 0.9)},
		{Name: "saturating-0.3-1", Make: saturating(0.3, 1)},
		{Name: "saturating-1-2", Make: saturating(1, 2)},
		{Name: "warmup-spill", Make: warmupSpill(0)},
		{Name: "sqrt-creep", Make: func(rng *rand.Rand) Series {
			sh := randomShape(rng)
			a, soakReq := logUniform(rng, 1*mib, 16*mib), sh.Rate*sh.SoakSec
			return memory(rng, sh, 0, func(q, t float64) float64 { return a * math.Sqrt(q/soakReq) })
		}},
		{Name: "throughput-drift", Make: func(rng *rand.Rand) Series {
			sh := randomShape(rng)
			sh.Rate, sh.Drift = sh.Rate*0.5, 3 // ×0.5 → ×1.5 of the nominal rate
			return memory(rng, sh, 0, func(q, t float64) float64 { return 0 })
		}},
		{Name: "restart", Make: func(rng *rand.Rand) Series { return restart(rng, randomShape(rng), 0) }},
		{Name: "recycled", Make: func(rng *rand.Rand) Series { return recycled(rng, randomShape(rng), 0) }},
		{Name: "recycled-warm-life", Make: func(rng *rand.Rand) Series {
			sh := randomShape(rng)
			return recycledWarm(rng, sh, 0, uniform(rng, 1, 2), math.Max(uniform(rng, 2, 60), 8*sh.SampleSec))
		}},
		{Name: "fds-flat", Make: func(rng *rand.Rand) Series { return fds(rng, randomShape(rng), 0) }},
		{Name: "pool-jumps", Make: poolJumps},

		{Name: "leak-4", Leak: true, Make: leak(4, 0)},
		{Name: "leak-8", Leak: true, Make: leak(8, 0)},
		{Name: "leak-16", Leak: true, Make: leak(16, 0)},
		{Name: "leak-64", Leak: true, Make: leak(64, 0)},
		{Name: "leak-200", Leak: true, Make: leak(200, 0)},
		{Name: "leak-200-ar1-10min", Leak: true, Make: leak(200, 600)},
		{Name: "leak-64-warmup-spill", Leak: true, Make: warmupSpill(64), Gap: spillGap, MinCover: 0.85},
		{Name: "leak-200-warmup-spill", Leak: true, Make: warmupSpill(200), Gap: spillGap, MinCover: 0.85},
		{Name: "leak-64-sawtooth", Leak: true, Make: func(rng *rand.Rand) Series { return sawtooth(rng, randomShape(rng), 64) }},
		{Name: "leak-200-restart", Leak: true, Make: func(rng *rand.Rand) Series { return restart(rng, randomShape(rng), 200) }},
		{Name: "leak-200-heap-steps", Leak: true, Make: heapSteps(200), Gap: heapGap, MinCover: 0.15},
		{Name: "leak-200-recycled", Leak: true, Make: func(rng *rand.Rand) Series { return recycled(rng, randomShape(rng), 200) }},
		{Name: "fd-1-per-100", Leak: true, Make: func(rng *rand.Rand) Series { return fds(rng, randomShape(rng), 100) }},
		{Name: "fd-1-per-2000", Leak: true, Make: func(rng *rand.Rand) Series { return fds(rng, randomShape(rng), 2000) }},
	}
	return append(ks, driftKinds()...)
}

// steps: n permanent steps of 1–8 MiB placed uniformly in [from, to] of
// the soak's requests, on white noise.
func steps(n int, from, to float64) func(*rand.Rand) Series {
	return func(rng *rand.Rand) Series {
		sh := randomShape(rng)
		soakReq := sh.Rate * sh.SoakSec
		at, size := make([]float64, n), make([]float64, n)
		for i := range at {
			at[i], size[i] = uniform(rng, from, to)*soakReq, uniform(rng, 1*mib, 8*mib)
		}
		return memory(rng, sh, 0, func(q, t float64) float64 {
			var v float64
			for i := range at {
				if q >= at[i] {
					v += size[i]
				}
			}
			return v
		})
	}
}

// saturating: growth that approaches A = 4–64 MiB with a time constant of
// lo–hi times the soak (a cache that fills ever more slowly).
func saturating(lo, hi float64) func(*rand.Rand) Series {
	return func(rng *rand.Rand) Series {
		sh := randomShape(rng)
		a, tau := logUniform(rng, 4*mib, 64*mib), uniform(rng, lo, hi)*sh.Rate*sh.SoakSec
		s := memory(rng, sh, 0, func(q, t float64) float64 { return a * (1 - math.Exp(-q/tau)) })
		s.Params = fmt.Sprintf("A %.1f MiB, τ %.2f soaks", a/mib, tau/(sh.Rate*sh.SoakSec))
		return s
	}
}

// heapGap: a leak that RSS shows in ever larger steps as the heap is
// expanded. When the last step's flat stretch covers the last third, the
// run is inconclusive ("the last third has slowed"): the window cannot
// tell the last step from the end of the growth.
const heapGap = "a flat stretch after the last heap step leaves the run inconclusive"

// spillGap: a leak under a warm-up that outlasts the warm-up phase. When
// the stretch after the knot is straight the leak is measured there, but
// a tail that still bends (a time constant near a sixth of the soak)
// leaves the run inconclusive ("slowing"): 79 % and 92 % are called leaks.
const spillGap = "a warm-up that still bends after the knot leaves the run inconclusive"

// warmupSpill: a warm-up that outlasts the warm-up phase (pools, caches
// and allocator arenas filling: 4–64 MiB approached with a time constant
// of 3–15 % of the soak), with leak bytes per request under it.
func warmupSpill(leak float64) func(*rand.Rand) Series {
	return func(rng *rand.Rand) Series {
		sh := randomShape(rng)
		a, tau := logUniform(rng, 4*mib, 64*mib), uniform(rng, 0.03, 0.15)*sh.Rate*sh.SoakSec
		s := memory(rng, sh, 0, func(q, t float64) float64 { return a*(1-math.Exp(-q/tau)) + leak*q })
		s.Truth = leak
		s.Params = fmt.Sprintf("A %.1f MiB, τ %.2f soaks", a/mib, tau/(sh.Rate*sh.SoakSec))
		return s
	}
}

// Tally is one kind's results.
type Tally struct {
	Kind     string
	Leak     bool
	N        int
	Verdicts map[string]int
	Covered  int // the true slope inside the 95 % interval
	Eligible int // leaks with growth ≥ 5× noise SD that clear a floor
	Detected int // of Eligible, called leak
	Masked   int // leaks reported as masked by recycling
	// MaskedEligible: of Eligible, those reported as masked.
	MaskedEligible int
	// MaskedCovered: of Masked, those whose interval (the lives') holds
	// the true slope.
	MaskedCovered int
}

// Rate of verdict v.
func (t Tally) Rate(v string) float64 { return float64(t.Verdicts[v]) / float64(t.N) }

// Coverage of the true slope.
func (t Tally) Coverage() float64 { return float64(t.Covered) / float64(t.N) }

// Detection among eligible leaks; 1 when there are none.
func (t Tally) Detection() float64 {
	if t.Eligible == 0 {
		return 1
	}
	return float64(t.Detected) / float64(t.Eligible)
}

// Run analyses n series of kind k, seeded by seed.
func Run(k Kind, n int, seed uint64) Tally {
	t := Tally{Kind: k.Name, Leak: k.Leak, Verdicts: map[string]int{}}
	for i := range n {
		rng := rand.New(rand.NewPCG(seed, uint64(i)*7919+uint64(len(k.Name))))
		s := k.Make(rng)
		res := verdict.AnalyzeResource(s.Points, s.Opt)
		t.add(s, res)
	}
	return t
}

func (t *Tally) add(s Series, res verdict.Resource) {
	t.N++
	t.Verdicts[res.Verdict]++
	if res.CI95[0] <= s.Truth && s.Truth <= res.CI95[1] {
		t.Covered++
	}
	if !t.Leak {
		return
	}
	if res.MaskedBy != "" {
		t.Masked++
	}
	growth := s.Truth * s.SoakRequests()
	if growth >= 5*s.NoiseSD && meaningful(s) && settled(s, growth) {
		t.Eligible++
		if res.Verdict == verdict.Leak {
			t.Detected++
		}
		if res.MaskedBy != "" {
			t.MaskedEligible++
		}
	}
}

// settled: the soak outlasts a runtime's first cycles (the default
// Transient), or the leak grows past the level the resource had at the
// load's start; and, when processes were replaced, the typical life
// lasted the transient or grew past its own size (see verdict's
// checkLives). A shorter soak or life with less growth cannot tell a leak
// from a runtime sizing itself to the load, and soakd says so
// (inconclusive).
func settled(s Series, growth float64) bool {
	th := s.Opt.Thresholds.WithDefaults(s.Opt.Unit)
	if s.Shape.SoakSec < th.Transient {
		var start []float64
		for _, p := range s.Points {
			if p.Phase == verdict.Soak && len(start) < 5 {
				start = append(start, p.Value)
			}
		}
		sort.Float64s(start)
		if len(start) == 0 || growth < start[len(start)/2] {
			return false
		}
	}
	var ok, n int
	for _, l := range s.Lives {
		var first, last verdict.Point
		k := 0
		for _, p := range l {
			if p.Phase == verdict.Soak {
				if k == 0 {
					first = p
				}
				last, k = p, k+1
			}
		}
		if k >= 4 && first.Value > 0 {
			n++
			if last.Seconds-first.Seconds >= th.Transient || last.Value-first.Value >= first.Value {
				ok++
			}
		}
	}
	return n == 0 || 2*ok > n
}

// meaningful: the true growth clears a default floor (the per-request
// floor, or 64 MiB / 1000 fds per 24 h at the run's throughput).
func meaningful(s Series) bool {
	th := s.Opt.Thresholds.WithDefaults(s.Opt.Unit)
	rph := s.Shape.Rate * 3600
	return s.Truth > th.MinPerRequest || s.Truth*rph*th.Horizon/3600 > th.HorizonGrowth
}

// Table runs every kind with n series each (leak kinds too) and writes the
// table.
func Table(w io.Writer, n int, seed uint64) []Tally {
	var out []Tally
	fmt.Fprintf(w, "%-20s %5s %6s %6s %8s %7s %9s %8s  %s\n", "model", "truth", "series", "leak", "coverage", "eligib", "detected", "masked", "verdicts")
	for _, k := range Kinds() {
		t := Run(k, n, seed)
		out = append(out, t)
		truth := "none"
		if k.Leak {
			truth = "leak"
		}
		det, cov := "", ""
		if k.Leak {
			det = fmt.Sprintf("%.1f %%", 100*t.Detection())
			cov = fmt.Sprintf("%.1f %%", 100*t.Coverage())
		}
		fmt.Fprintf(w, "%-20s %5s %6d %5.1f%% %8s %7d %9s %8d  %s\n", t.Kind, truth, t.N, 100*t.Rate(verdict.Leak), cov, t.Eligible, det, t.Masked, verdicts(t.Verdicts))
	}
	return out
}

func verdicts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s %d ", k, m[k])
	}
	return strings.TrimSpace(b.String())
}
