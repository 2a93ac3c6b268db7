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

// The slow-leak designs of issue 22: leaks near the horizon floor, where
// "stable" must mean proven under every floor and "leak" must be found
// once the leak clears the floor by a margin.

// SlowDesign is one slow leak: Leak bytes per request at Rate requests a
// second over a soak of SoakSec, on the noise (0.5 MiB white plus
// 1 MiB AR(1) with τ = 5 min), or inside a Go-heap sawtooth of CycleSec
// when that is set.
type SlowDesign struct {
	Leak, Rate, SoakSec float64
	CycleSec            float64 // 0: no sawtooth
	// Start is the share of the soak's requests after which the leak
	// begins (0: from the start): a leak that starts when a cache has
	// filled, a pool warmed up or a code path first runs. Truth is the
	// leak's rate once it runs.
	Start float64
	// Sampling thins or breaks the series after it is drawn, so that a
	// design with the same seed differs only in the samples kept (the
	// zero value keeps them all).
	Sampling Sampling
	// SlowTo, when SlowAt > 0, is the leak's rate from SlowAt (a share
	// of the soak's requests) on: a leak that slows and goes on (a Go
	// heap whose collector paces its growth, a leak on a path the load
	// takes less). Truth is then SlowTo, the rate that goes on.
	SlowTo, SlowAt float64
	// Cache bytes fill over the soak as a cache does, 1 − e^(−q/τ),
	// with τ CacheTau soaks (0: no cache); on top of the leak, if any.
	Cache, CacheTau float64
}

// Sampling is how a design's soak samples are kept: the series is drawn
// at the design's interval and then thinned, so that an evenly sampled
// design and a thinned one with the same seed share every sample kept.
type Sampling struct {
	// Thin keeps one soak sample in Thin from the soak's half-time on:
	// a daemon that slows its sampling, or a host that stalls (0 or 1:
	// none).
	Thin int
	// Gaps drops the soak samples of Gaps stretches of a tenth of the
	// soak each, spread over it (at 25 % and 60 % for two; a sampler
	// stalled or the host suspended).
	Gaps int
	// Keep keeps this share of the soak's samples, evenly spread (0 or
	// 1: all): the even series of as many samples as a thinned or gappy
	// one, its power the bar theirs is held to.
	Keep float64
}

// Share is the share of the soak's samples a sampling keeps.
func (s Sampling) Share() float64 {
	switch {
	case s.Thin > 1:
		return 0.5 + 0.5/float64(s.Thin)
	case s.Gaps > 0:
		return 1 - 0.1*float64(s.Gaps)
	case s.Keep > 0 && s.Keep < 1:
		return s.Keep
	}
	return 1
}

// gapStarts are where a sampling's gaps begin, as shares of the soak.
func (s Sampling) gapStarts() []float64 {
	switch s.Gaps {
	case 0:
		return nil
	case 1:
		return []float64{0.3}
	case 2:
		return []float64{0.25, 0.6}
	}
	out := make([]float64, s.Gaps)
	for i := range out {
		out[i] = (float64(i) + 0.5) / float64(s.Gaps)
	}
	return out
}

// apply drops the soak samples the sampling does not keep; the other
// phases keep theirs.
func (s Sampling) apply(pts []verdict.Point, soakSec float64) []verdict.Point {
	if s.Share() >= 1 {
		return pts
	}
	var t0 float64
	for _, p := range pts {
		if p.Phase == verdict.Soak {
			t0 = p.Seconds
			break
		}
	}
	out := pts[:0:0]
	k := 0 // soak samples seen
	for _, p := range pts {
		if p.Phase != verdict.Soak {
			out = append(out, p)
			continue
		}
		at := (p.Seconds - t0) / soakSec
		keep := true
		switch {
		case s.Thin > 1:
			keep = at < 0.5 || k%s.Thin == 0
		case s.Gaps > 0:
			for _, g := range s.gapStarts() {
				if at >= g && at < g+0.1 {
					keep = false
				}
			}
		default:
			keep = math.Floor(float64(k+1)*s.Keep) > math.Floor(float64(k)*s.Keep)
		}
		k++
		if keep {
			out = append(out, p)
		}
	}
	return out
}

// String names a sampling, e.g. "thin×4 from mid-run"; "" for all.
func (s Sampling) String() string {
	switch {
	case s.Thin > 1:
		return fmt.Sprintf("thin×%d from mid-run", s.Thin)
	case s.Gaps > 0:
		return fmt.Sprintf("%d gaps of 10 %%", s.Gaps)
	case s.Keep > 0 && s.Keep < 1:
		return fmt.Sprintf("even %.3g %%", 100*s.Keep)
	}
	return ""
}

// Name labels a design, e.g. "leak-20 100/s 2 h".
func (d SlowDesign) Name() string {
	s := fmt.Sprintf("leak-%g %g/s %s", d.Leak, d.Rate, runLength(d.SoakSec))
	if d.CycleSec > 0 {
		s += fmt.Sprintf(" saw %g min", d.CycleSec/60)
	}
	if d.Start > 0 {
		s += fmt.Sprintf(" from %g %%", 100*d.Start)
	}
	if d.SlowAt > 0 {
		s += fmt.Sprintf(" → %g at %g %%", d.SlowTo, 100*d.SlowAt)
	}
	if d.Cache > 0 {
		s += fmt.Sprintf(" cache %g MiB τ %g", d.Cache/mib, d.CacheTau)
	}
	if v := d.Sampling.String(); v != "" {
		s += " " + v
	}
	return s
}

// Truth is the per-request growth that goes on: SlowTo for a leak that
// slows, else Leak.
func (d SlowDesign) Truth() float64 {
	if d.SlowAt > 0 {
		return d.SlowTo
	}
	return d.Leak
}

// grown is what the design's leak and cache add by soak request q.
func (d SlowDesign) grown(q float64) float64 {
	total := d.Rate * d.SoakSec
	var v float64
	if at := d.SlowAt * total; d.SlowAt > 0 && q > at {
		v = d.Leak*at + d.SlowTo*(q-at)
	} else {
		v = d.Leak * math.Max(q-d.Start*d.Rate*d.SoakSec, 0) // as before SlowAt, to the last bit
	}
	if d.Cache > 0 {
		v += d.Cache * -math.Expm1(-math.Max(q, 0)/(d.CacheTau*total))
	}
	return v
}

// runLength names a soak length, e.g. "30 min" or "2 h".
func runLength(sec float64) string {
	if sec < 3600 {
		return fmt.Sprintf("%g min", sec/60)
	}
	return fmt.Sprintf("%g h", sec/3600)
}

// HorizonFloor is the default horizon floor at the design's rate, in
// bytes per request: 64 MiB over 24 h.
func (d SlowDesign) HorizonFloor() float64 {
	th := verdict.MemoryThresholds
	return th.HorizonGrowth / (d.Rate * th.Horizon)
}

// slowShape samples 30 min at 1 s, 2 h at 5 s and 8 h at 10 s, as a paced
// sampler does, with a minute of warm-up and none of cool-down.
func slowShape(d SlowDesign) Shape {
	sample := 1.0
	switch {
	case d.SoakSec > 4*3600:
		sample = 10
	case d.SoakSec > 3600:
		sample = 5
	}
	return Shape{SoakSec: d.SoakSec, SampleSec: sample, Rate: d.Rate, Drift: 1, WarmupSec: 60}
}

// Make draws one series of the design.
func (d SlowDesign) Make(rng *rand.Rand) Series {
	sh := slowShape(d)
	base := logUniform(rng, 20*mib, 200*mib)
	wander := ar1(rng, 300, 1*mib, sh.SampleSec)
	live := logUniform(rng, 2*mib, 8*mib)
	phase := rng.Float64()
	pts := generate(sh, func(q, t float64, ph verdict.Phase) (float64, int) {
		v := base + 0.5*mib*rng.NormFloat64() + wander() + d.grown(q)
		if d.CycleSec > 0 {
			v += live * math.Mod(t/d.CycleSec+phase+1e4, 1)
		}
		return pages(v), 0
	})
	pts = d.Sampling.apply(pts, sh.SoakSec)
	return Series{Points: pts, Opt: verdict.ResourceOptions{Name: "rss", Unit: "bytes"}, Truth: d.Truth(),
		NoiseSD: math.Hypot(0.5*mib, 1*mib), Shape: sh}
}

// SlowTally is one design's verdicts.
type SlowTally struct {
	Design                   SlowDesign
	N, Leak, Stable, Plateau int
	Inconclusive, Covered    int
	// Steps counts the runs whose reason describes steps ("in N
	// steps"), Began those that name where growth began.
	Steps, Began int
	// Misses counts the runs not called leak while the leak is above
	// the floor, by why (see missWhy).
	Misses map[string]int
}

// Found is the share called leak.
func (t SlowTally) Found() float64 { return float64(t.Leak) / float64(t.N) }

// FalseStable is the share called stable (or plateau) while the truth is
// above the lowest floor in force; 0 when it is not.
func (t SlowTally) FalseStable() float64 {
	if t.Design.Truth() <= t.Design.HorizonFloor() {
		return 0
	}
	return float64(t.Stable+t.Plateau) / float64(t.N)
}

// FalseLeak is the share called leak while the truth is under the horizon
// floor (and so under every floor: the per-request floor is 16 B); 0 when
// it is above.
func (t SlowTally) FalseLeak() float64 {
	if t.Design.Truth() > t.Design.HorizonFloor() {
		return 0
	}
	return float64(t.Leak) / float64(t.N)
}

// RunSlow analyses n series of design d, seeded by seed.
func RunSlow(d SlowDesign, n int, seed uint64) SlowTally {
	t := SlowTally{Design: d, N: n, Misses: map[string]int{}}
	for i := range n {
		rng := rand.New(rand.NewPCG(seed, uint64(i)*104729+uint64(d.Leak*1000+d.Rate+d.SoakSec+d.CycleSec)))
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
			t.Inconclusive++
		}
		if strings.Contains(res.Reason, " steps: ") {
			t.Steps++
		}
		if res.Change == verdict.ChangeBegan {
			t.Began++
		}
		if res.CI95[0] <= d.Truth() && d.Truth() <= res.CI95[1] {
			t.Covered++
		}
		if res.Verdict != verdict.Leak && d.Truth() > d.HorizonFloor() {
			t.Misses[missWhy(res)]++
		}
	}
	return t
}

// missWhy names why a leak above the floor was not called one, from its
// verdict and reason.
func missWhy(res verdict.Resource) string {
	if res.Verdict != verdict.Inconclusive {
		return res.Verdict
	}
	for _, w := range []struct{ text, why string }{
		{"it may have stopped", "last cycle under the floor"},
		{"slowing at that pace it would add less", "halves slowed, levelling"},
		{"the second half's growth", "halves slowed, levelling"},
		{"the halves' growth", "halves under their bar"},
		{"does not yet show that it goes on", "last third under its bar"},
		{"neither clears nor lies under", "interval does not clear"},
		{"proves neither flat nor falling", "interval under the floor, as far under minus it"},
		{"has slowed to under half", "last third flattened"},
		{"the growth is slowing", "slowing after a knot"},
		{"cannot call it stable", "recent stretch grows"},
	} {
		if strings.Contains(res.Reason, w.text) {
			return w.why
		}
	}
	return "other"
}

// WriteMisses prints why each tally's runs above the floor were not
// called leaks.
func WriteMisses(w io.Writer, ts []SlowTally) {
	for _, t := range ts {
		if len(t.Misses) == 0 {
			continue
		}
		keys := make([]string, 0, len(t.Misses))
		for k := range t.Misses {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		fmt.Fprintf(w, "%-28s", t.Design.Name())
		for _, k := range keys {
			fmt.Fprintf(w, " %s %d;", k, t.Misses[k])
		}
		fmt.Fprintln(w)
	}
}

// SlowLeaks are the slow-leak sizes of the power table, in B/request.
var SlowLeaks = []float64{1, 2, 5, 10, 20, 50}

// SlowRates and SlowSoaks are its columns and rows.
var (
	SlowRates = []float64{100, 1000}
	SlowSoaks = []float64{1800, 7200, 28800}
)

// PowerCell is the smallest leak of SlowLeaks found in at least 90 % of
// runs of one run length and rate (0: none), with the worst false-stable
// and false-leak rates over the cell's designs.
type PowerCell struct {
	Smallest, Floor        float64
	FalseStable, FalseLeak float64
	Tallies                []SlowTally
}

// PowerTable runs every slow design with n series each: rows SlowSoaks,
// columns SlowRates.
func PowerTable(n int, seed uint64) [][]PowerCell {
	out := make([][]PowerCell, len(SlowSoaks))
	for i, sec := range SlowSoaks {
		for _, rate := range SlowRates {
			out[i] = append(out[i], powerCell(sec, rate, n, seed))
		}
	}
	return out
}

func powerCell(sec, rate float64, n int, seed uint64) PowerCell {
	c := PowerCell{Floor: SlowDesign{Rate: rate}.HorizonFloor()}
	for _, l := range SlowLeaks {
		t := RunSlow(SlowDesign{Leak: l, Rate: rate, SoakSec: sec}, n, seed)
		c.Tallies = append(c.Tallies, t)
		if c.Smallest == 0 && t.Found() >= 0.9 {
			c.Smallest = l
		}
		c.FalseStable, c.FalseLeak = math.Max(c.FalseStable, t.FalseStable()), math.Max(c.FalseLeak, t.FalseLeak())
	}
	return c
}

// WritePowerTable prints the power table and each design's verdicts.
func WritePowerTable(w io.Writer, tab [][]PowerCell) {
	fmt.Fprintf(w, "smallest leak found in ≥ 90 %% (B/request; floor in brackets; worst false stable / false leak)\n")
	fmt.Fprintf(w, "%-8s", "run")
	for _, r := range SlowRates {
		fmt.Fprintf(w, " %-34s", fmt.Sprintf("%g req/s", r))
	}
	fmt.Fprintln(w)
	for i, row := range tab {
		fmt.Fprintf(w, "%-8s", runLength(SlowSoaks[i]))
		for _, c := range row {
			s := "none"
			if c.Smallest > 0 {
				s = fmt.Sprintf("%g", c.Smallest)
			}
			fmt.Fprintf(w, " %-34s", fmt.Sprintf("%s (%.2f) fs %.1f %% fl %.1f %%", s, c.Floor, 100*c.FalseStable, 100*c.FalseLeak))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "\n%-28s %5s %6s %6s %7s %7s %8s\n", "design", "n", "leak", "stable", "plateau", "inconcl", "coverage")
	for _, row := range tab {
		for _, c := range row {
			for _, t := range c.Tallies {
				writeSlowTally(w, t)
			}
		}
	}
}

func writeSlowTally(w io.Writer, t SlowTally) {
	fmt.Fprintf(w, "%-28s %5d %6d %6d %7d %7d %7.0f%%\n", t.Design.Name(), t.N, t.Leak, t.Stable, t.Plateau, t.Inconclusive, 100*float64(t.Covered)/float64(t.N))
}

// SawtoothDesigns are leaks of 10–50 B/request inside Go-heap sawtooths
// of 10–40 min at 100 req/s over 2 h, the issue's "leak-20 inside a
// 37-min sawtooth" among them.
func SawtoothDesigns() []SlowDesign {
	var ds []SlowDesign
	for _, l := range []float64{10, 20, 50} {
		for _, c := range []float64{10, 20, 37, 40} {
			ds = append(ds, SlowDesign{Leak: l, Rate: 100, SoakSec: 7200, CycleSec: c * 60})
		}
	}
	return ds
}

// WriteSawtooths prints the sawtooth designs' verdicts.
func WriteSawtooths(w io.Writer, n int, seed uint64) []SlowTally {
	var out []SlowTally
	fmt.Fprintf(w, "%-28s %5s %6s %6s %7s %7s %8s\n", "design", "n", "leak", "stable", "plateau", "inconcl", "coverage")
	for _, d := range SawtoothDesigns() {
		t := RunSlow(d, n, seed)
		out = append(out, t)
		writeSlowTally(w, t)
	}
	return out
}

// Item8Designs are the designs of issue 22's item 8 at its edges: leaks
// 1.54× the horizon floor over 2 h (12 and 1.2 B/request: power), and
// trendless runs and leaks of 0.5× and 0.9× the floor over 30 min and
// 2 h (false leaks), at 100 and 1 000 req/s.
func Item8Designs() []SlowDesign {
	var ds []SlowDesign
	for _, rate := range SlowRates {
		fl := SlowDesign{Rate: rate}.HorizonFloor()
		ds = append(ds, SlowDesign{Leak: 1200 / rate, Rate: rate, SoakSec: 7200})
		for _, sec := range []float64{1800, 7200} {
			for _, share := range []float64{0, 0.5, 0.9} {
				ds = append(ds, SlowDesign{Leak: share * fl, Rate: rate, SoakSec: sec})
			}
		}
	}
	return ds
}

// Item8Row is one design's leak and stable verdicts over a range of seeds.
type Item8Row struct {
	Design             SlowDesign
	N, Leak, Stable    int
	PerSeed            []int // leaks per seed
	LeakLo, LeakHi     float64
	StableLo, StableHi float64
}

// Item8Table runs each of Item8Designs n times for every seed from
// seedLo to seedHi (the seeds of RunSlow, so seeds 1–6 repeat the
// sixth round's figures), spread over the machine's cores, and writes
// each design's leaks and stable verdicts (stable and plateau) with
// their Wilson 95 % ranges.
func Item8Table(w io.Writer, n int, seedLo, seedHi uint64) []Item8Row {
	ds := Item8Designs()
	seeds := int(seedHi - seedLo + 1)
	tallies := make([]SlowTally, len(ds)*seeds)
	each(len(tallies), func(i int) { tallies[i] = RunSlow(ds[i/seeds], n, seedLo+uint64(i%seeds)) })
	rows := make([]Item8Row, len(ds))
	fmt.Fprintf(w, "%-32s %6s %22s %22s  %s\n", "design", "runs", "leak (95 % range)", "stable or plateau", "leaks per seed")
	for k, d := range ds {
		r := Item8Row{Design: d}
		for _, t := range tallies[k*seeds : (k+1)*seeds] {
			r.N, r.Leak, r.Stable = r.N+t.N, r.Leak+t.Leak, r.Stable+t.Stable+t.Plateau
			r.PerSeed = append(r.PerSeed, t.Leak)
		}
		r.LeakLo, r.LeakHi = Wilson(r.Leak, r.N)
		r.StableLo, r.StableHi = Wilson(r.Stable, r.N)
		rows[k] = r
		name := fmt.Sprintf("%.3g B/req %g/s %s (%.2f×)", d.Leak, d.Rate, runLength(d.SoakSec), d.Leak/d.HorizonFloor())
		fmt.Fprintf(w, "%-32s %6d %22s %22s  %v\n", name, r.N,
			fmt.Sprintf("%d %.2f%% (%.2f–%.2f)", r.Leak, 100*float64(r.Leak)/float64(r.N), 100*r.LeakLo, 100*r.LeakHi),
			fmt.Sprintf("%d %.2f%% (%.2f–%.2f)", r.Stable, 100*float64(r.Stable)/float64(r.N), 100*r.StableLo, 100*r.StableHi),
			r.PerSeed)
	}
	return rows
}

// Wilson is the Wilson score 95 % interval of a share k of n.
func Wilson(k, n int) (float64, float64) {
	if n == 0 {
		return 0, 1
	}
	const z = 1.959963984540054
	p, nf := float64(k)/float64(n), float64(n)
	c := (p + z*z/(2*nf)) / (1 + z*z/nf)
	h := z / (1 + z*z/nf) * math.Sqrt(p*(1-p)/nf+z*z/(4*nf*nf))
	return math.Max(0, c-h), math.Min(1, c+h)
}

// SlowingDesigns are issue 41 item 3's designs over 2 h: leaks that slow
// at mid-run by a quarter, a third and a half to 3× the horizon floor
// (at 100 and 1 000 req/s), the 40 → 20 B/request at 500 req/s
// (13× the floor after the knot), and a cache of 8 MiB that fills with
// τ of 0.3 and 1 soak, with no leak and on top of a 5 B/request leak.
func SlowingDesigns() []SlowDesign {
	var ds []SlowDesign
	for _, rate := range SlowRates {
		post := 3 * SlowDesign{Rate: rate}.HorizonFloor()
		for _, by := range []float64{0.25, 1.0 / 3, 0.5} {
			ds = append(ds, SlowDesign{Leak: post / (1 - by), SlowTo: post, SlowAt: 0.5, Rate: rate, SoakSec: 7200})
		}
	}
	ds = append(ds, SlowDesign{Leak: 40, SlowTo: 20, SlowAt: 0.5, Rate: 500, SoakSec: 7200})
	for _, rate := range SlowRates {
		for _, tau := range []float64{0.3, 1} {
			for _, leak := range []float64{0, 5} {
				ds = append(ds, SlowDesign{Leak: leak, Rate: rate, SoakSec: 7200, Cache: 8 * mib, CacheTau: tau})
			}
		}
	}
	return ds
}
