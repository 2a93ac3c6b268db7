package study

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"sort"

	"github.com/soakd/soakd/soak/verdict"
)

// The interval study (issue 22, items 2 and 5): noises whose structure the
// slope's interval must survive, each on fixed designs (a run length, its
// sampling interval and a rate), so that the spread of the estimates
// across seeds can be set against the width the interval claims.

// Noise is a noise model of the interval study: Make returns n samples
// of noise (bytes) taken every sampleSec seconds, the soak covering the
// samples from soakFrom to soakTo.
type Noise struct {
	Name string
	Make func(rng *rand.Rand, n int, sampleSec float64, soakFrom, soakTo int) []float64
}

// Design is one run of the interval study: soak seconds and sampling
// interval, as the paced sampler keeps them, and requests per second.
type Design struct {
	SoakSec, SampleSec, Rate float64
}

func (d Design) String() string {
	return fmt.Sprintf("%s@%gs %g/s", hours(d.SoakSec), d.SampleSec, d.Rate)
}

func hours(sec float64) string {
	if sec < 3600 {
		return fmt.Sprintf("%.0fmin", sec/60)
	}
	return fmt.Sprintf("%.0fh", sec/3600)
}

// Designs are the interval study's runs: 30 min at 1 s, 2 h at 5 s and
// 8 h at 10 s, at 100 and 1 000 req/s.
func Designs() []Design {
	var out []Design
	for _, r := range []float64{100, 1000} {
		for _, s := range [][2]float64{{1800, 1}, {7200, 5}, {28800, 10}} {
			out = append(out, Design{SoakSec: s[0], SampleSec: s[1], Rate: r})
		}
	}
	return out
}

// whiteSD and wanderSD are the noise of the power table: 0.5 MiB
// of white noise and 1 MiB of a correlated part.
const (
	whiteSD  = 0.5 * mib
	wanderSD = 1 * mib
)

// Noises lists the interval study's noise models: white noise plus AR(1)
// wander with correlation times from 30 s to 8 h (longer than every run
// but the 8 h one), fractional Gaussian noise (long memory, H = 0.75 and
// 0.9), heavy tails (Student t, 3 degrees of freedom, both parts), and
// white noise whose SD falls from 4 to 0.5 MiB over the soak or rises
// from 0.5 to 4 MiB.
func Noises() []Noise {
	var out []Noise
	for _, tau := range []float64{30, 300, 1800, 7200, 28800} {
		out = append(out, Noise{Name: "ar1-" + tauName(tau), Make: withWhite(arNoise(tau, normal))})
	}
	for _, h := range []float64{0.75, 0.9} {
		out = append(out, Noise{Name: fmt.Sprintf("fgn-H%g", h), Make: withWhite(fgnNoise(h))})
	}
	out = append(out,
		Noise{Name: "t3", Make: tNoise},
		Noise{Name: "sd-fall-4-0.5", Make: drifting(4*mib, 0.5*mib)},
		Noise{Name: "sd-rise-0.5-4", Make: drifting(0.5*mib, 4*mib)},
	)
	return out
}

func tauName(tau float64) string {
	if tau < 60 {
		return fmt.Sprintf("%.0fs", tau)
	}
	if tau < 3600 {
		return fmt.Sprintf("%.0fmin", tau/60)
	}
	return fmt.Sprintf("%.0fh", tau/3600)
}

type sampler func(rng *rand.Rand) float64

func normal(rng *rand.Rand) float64 { return rng.NormFloat64() }

// studentT3 is a Student t draw with 3 degrees of freedom scaled to unit
// variance (a t3's variance is 3).
func studentT3(rng *rand.Rand) float64 {
	var chi float64
	for range 3 {
		z := rng.NormFloat64()
		chi += z * z
	}
	return rng.NormFloat64() / math.Sqrt(chi/3) / math.Sqrt(3)
}

type noiseFunc = func(rng *rand.Rand, n int, sampleSec float64, soakFrom, soakTo int) []float64

// withWhite adds whiteSD of white noise to a correlated part of
// wanderSD.
func withWhite(part noiseFunc) noiseFunc {
	return func(rng *rand.Rand, n int, sampleSec float64, from, to int) []float64 {
		v := part(rng, n, sampleSec, from, to)
		for i := range v {
			v[i] += whiteSD * rng.NormFloat64()
		}
		return v
	}
}

// arNoise is stationary AR(1) wander of SD wanderSD and correlation time
// tau seconds, with innovations drawn by draw (unit variance).
func arNoise(tau float64, draw sampler) noiseFunc {
	return func(rng *rand.Rand, n int, sampleSec float64, _, _ int) []float64 {
		phi := math.Exp(-sampleSec / tau)
		v := make([]float64, n)
		level := draw(rng)
		for i := range v {
			level = phi*level + math.Sqrt(1-phi*phi)*draw(rng)
			v[i] = wanderSD * level
		}
		return v
	}
}

// tNoise: heavy tails, white t3 noise of SD whiteSD on AR(1) wander of SD
// wanderSD (5 min) driven by t3 innovations.
func tNoise(rng *rand.Rand, n int, sampleSec float64, from, to int) []float64 {
	v := arNoise(300, studentT3)(rng, n, sampleSec, from, to)
	for i := range v {
		v[i] += whiteSD * studentT3(rng)
	}
	return v
}

// drifting is white noise whose SD moves linearly from sd0 at the soak's
// start to sd1 at its end (constant before and after).
func drifting(sd0, sd1 float64) noiseFunc {
	return func(rng *rand.Rand, n int, _ float64, from, to int) []float64 {
		v := make([]float64, n)
		for i := range v {
			f := math.Min(math.Max(float64(i-from)/float64(max(to-from, 1)), 0), 1)
			v[i] = (sd0 + f*(sd1-sd0)) * rng.NormFloat64()
		}
		return v
	}
}

// fgnNoise is fractional Gaussian noise of SD wanderSD and Hurst exponent
// h, one step per sample, generated exactly by Hosking's method (the
// Durbin–Levinson recursion on its autocovariance), O(n²).
func fgnNoise(h float64) noiseFunc {
	return func(rng *rand.Rand, n int, _ float64, _, _ int) []float64 {
		v := Hosking(rng, n, h)
		for i := range v {
			v[i] *= wanderSD
		}
		return v
	}
}

// FGNCov is the autocovariance at lag k of unit-variance fractional
// Gaussian noise with Hurst exponent h.
func FGNCov(k int, h float64) float64 {
	a := math.Abs(float64(k))
	return 0.5 * (math.Pow(a+1, 2*h) - 2*math.Pow(a, 2*h) + math.Pow(math.Abs(a-1), 2*h))
}

// Hosking draws n points of unit-variance fractional Gaussian noise with
// Hurst exponent h: each point is its conditional mean given the ones
// before (Durbin–Levinson) plus an independent normal of the conditional
// variance.
func Hosking(rng *rand.Rand, n int, h float64) []float64 {
	x := make([]float64, n)
	if n == 0 {
		return x
	}
	g := make([]float64, n)
	for k := range g {
		g[k] = FGNCov(k, h)
	}
	phi, prev := make([]float64, n), make([]float64, n)
	v := 1.0
	x[0] = rng.NormFloat64()
	for k := 1; k < n; k++ {
		// phi[k-1] = φ_kk, the partial autocorrelation at lag k.
		num := g[k]
		for j := 0; j < k-1; j++ {
			num -= prev[j] * g[k-1-j]
		}
		pkk := num / v
		for j := 0; j < k-1; j++ {
			phi[j] = prev[j] - pkk*prev[k-2-j]
		}
		phi[k-1] = pkk
		v *= 1 - pkk*pkk
		var m float64
		for j := 0; j < k; j++ {
			m += phi[j] * x[k-1-j]
		}
		x[k] = m + math.Sqrt(v)*rng.NormFloat64()
		phi, prev = prev, phi
	}
	return x
}

// IntervalSeries is one run of noise nz on design d with a linear leak of
// leak bytes per request, as soakd's sampler would record it: a 100 MiB
// base, a 60 s warm-up and a 60 s cool-down, rounded to pages.
func IntervalSeries(rng *rand.Rand, nz Noise, d Design, leak float64) []verdict.Point {
	sh := Shape{SoakSec: d.SoakSec, SampleSec: d.SampleSec, Rate: d.Rate, Drift: 1, WarmupSec: 60, CoolSec: 60}
	total := int((sh.WarmupSec+sh.SoakSec+sh.CoolSec)/sh.SampleSec) + 2
	from := int(sh.WarmupSec / sh.SampleSec)
	v := nz.Make(rng, total, sh.SampleSec, from, from+int(sh.SoakSec/sh.SampleSec))
	k := 0
	return generate(sh, func(q, t float64, ph verdict.Phase) (float64, int) {
		x := 100*mib + v[min(k, len(v)-1)] + leak*math.Max(q, 0)
		k++
		return pages(x), 0
	})
}

// Cell is the interval study's result for one noise, design and leak.
type Cell struct {
	Noise  string
	Design Design
	Leak   float64
	N      int
	// Covered: the true slope inside the reported 95 % interval.
	Covered int
	// Leaks: runs called leak (false leaks when Leak is 0).
	Leaks int
	// SD is the estimates' standard deviation across seeds; HalfWidth
	// the intervals' median half-width.
	SD, HalfWidth float64

	est, half []float64 // each run's estimate and half-width
	covered   []bool    // each run's interval covering the truth
}

// Coverage of the true slope.
func (c Cell) Coverage() float64 { return float64(c.Covered) / float64(c.N) }

// WidthRatio is the intervals' median half-width over 1.96 times the
// estimates' real SD: 1 is an interval as wide as the estimates' spread.
func (c Cell) WidthRatio() float64 { return c.HalfWidth / (1.959963984540054 * c.SD) }

// Item2 says whether the cell meets issue 22's item 2: coverage 90–97 %
// and a width at most 1.3× the estimates' spread.
func (c Cell) Item2() bool {
	cv := c.Coverage()
	return cv >= 0.90 && cv <= 0.97 && c.WidthRatio() <= 1.3
}

// Ranges are the 95 % percentile-bootstrap ranges of a cell's coverage
// and width ratio over its runs (b resamples): how far another set of
// runs of the same size could read them. 100 runs read a true 95 %
// coverage as 91–99 % and a width to about ±10 %.
func (c Cell) Ranges(b int, seed uint64) (cover, width [2]float64) {
	n := len(c.est)
	if n < 2 || b < 2 {
		return [2]float64{c.Coverage(), c.Coverage()}, [2]float64{c.WidthRatio(), c.WidthRatio()}
	}
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	cs, ws := make([]float64, b), make([]float64, b)
	e, h := make([]float64, n), make([]float64, n)
	for k := range b {
		cov := 0
		for j := range n {
			i := rng.IntN(n)
			e[j], h[j] = c.est[i], c.half[i]
			if c.covered[i] {
				cov++
			}
		}
		sort.Float64s(h)
		cs[k], ws[k] = float64(cov)/float64(n), h[n/2]/(1.959963984540054*sd(e))
	}
	sort.Float64s(cs)
	sort.Float64s(ws)
	lo, hi := int(0.025*float64(b)), int(0.975*float64(b)-1)
	return [2]float64{cs[lo], cs[hi]}, [2]float64{ws[lo], ws[hi]}
}

// RunCell analyses n runs of noise nz on design d leaking leak bytes per
// request, seeded by seed.
func RunCell(nz Noise, d Design, leak float64, n int, seed uint64) Cell {
	c := Cell{Noise: nz.Name, Design: d, Leak: leak}
	c.est, c.half, c.covered = make([]float64, 0, n), make([]float64, 0, n), make([]bool, 0, n)
	opt := verdict.ResourceOptions{Name: "rss", Unit: "bytes"}
	for i := range n {
		rng := rand.New(rand.NewPCG(seed, uint64(i)*7919+uint64(len(nz.Name))*31+uint64(d.SoakSec)))
		res := verdict.AnalyzeResource(IntervalSeries(rng, nz, d, leak), opt)
		c.N++
		in := res.CI95[0] <= leak && leak <= res.CI95[1]
		if in {
			c.Covered++
		}
		if res.Verdict == verdict.Leak {
			c.Leaks++
		}
		c.est = append(c.est, res.PerRequest)
		c.half = append(c.half, (res.CI95[1]-res.CI95[0])/2)
		c.covered = append(c.covered, in)
	}
	c.SD = sd(c.est)
	half := slices.Clone(c.half)
	sort.Float64s(half)
	c.HalfWidth = half[len(half)/2]
	return c
}

func sd(v []float64) float64 {
	var m, s float64
	for _, x := range v {
		m += x
	}
	m /= float64(len(v))
	for _, x := range v {
		s += (x - m) * (x - m)
	}
	return math.Sqrt(s / float64(max(len(v)-1, 1)))
}

// IntervalTable runs every noise on every design with each leak (bytes
// per request), n runs a cell, the cells spread over the machine's cores,
// and writes coverage, width ratio and leak verdicts. With boot > 0 each
// coverage and width also gets its 95 % bootstrap range over the cell's
// runs, and each trendless cell says whether it meets item 2 ("met").
func IntervalTable(w io.Writer, n int, seed uint64, leaks []float64, designs []Design, boot int) []Cell {
	type job struct {
		nz   Noise
		d    Design
		leak float64
	}
	var jobs []job
	for _, nz := range Noises() {
		for _, d := range designs {
			for _, l := range leaks {
				jobs = append(jobs, job{nz, d, l})
			}
		}
	}
	out := make([]Cell, len(jobs))
	each(len(jobs), func(i int) { out[i] = RunCell(jobs[i].nz, jobs[i].d, jobs[i].leak, n, seed) })
	if boot > 0 {
		fmt.Fprintf(w, "%-14s %-16s %5s %5s %20s %18s %8s %8s %5s\n", "noise", "design", "leak", "runs", "coverage (95 % range)", "width (95 % range)", "est SD", "leaks", "item2")
	} else {
		fmt.Fprintf(w, "%-14s %-16s %5s %5s %8s %6s %8s %8s\n", "noise", "design", "leak", "runs", "coverage", "width", "est SD", "leaks")
	}
	for _, c := range out {
		leaks := 100 * float64(c.Leaks) / float64(c.N)
		if boot <= 0 {
			fmt.Fprintf(w, "%-14s %-16s %5g %5d %7.1f%% %6.2f %8.3g %7.1f%%\n", c.Noise, c.Design, c.Leak, c.N,
				100*c.Coverage(), c.WidthRatio(), c.SD, leaks)
			continue
		}
		cr, wr := c.Ranges(boot, seed)
		mark := ""
		if c.Leak == 0 && c.Item2() {
			mark = "met"
		}
		fmt.Fprintf(w, "%-14s %-16s %5g %5d %5.1f%% (%4.1f–%4.1f) %5.2f (%4.2f–%4.2f) %8.3g %7.1f%% %5s\n", c.Noise, c.Design, c.Leak, c.N,
			100*c.Coverage(), 100*cr[0], 100*cr[1], c.WidthRatio(), wr[0], wr[1], c.SD, leaks, mark)
	}
	return out
}

// driftKinds are the study's models of noise whose spread drifts (issue
// 22, item 5), on its random runs: white noise whose SD falls from 4 to
// 0.5 MiB over the soak with no trend, and one whose SD rises from 0.5
// to 4 MiB under a leak of 64 B/request.
func driftKinds() []Kind {
	return []Kind{
		{Name: "sd-fall-4-0.5", Make: spreadDrift(4*mib, 0.5*mib, 0)},
		{Name: "leak-64-sd-rise", Leak: true, Make: spreadDrift(0.5*mib, 4*mib, 64)},
	}
}

// spreadDrift is a random run with white noise whose SD moves linearly
// from sd0 to sd1 over the soak, and leak bytes per request.
func spreadDrift(sd0, sd1, leak float64) func(*rand.Rand) Series {
	return func(rng *rand.Rand) Series {
		sh := randomShape(rng)
		base := logUniform(rng, 10*mib, 200*mib)
		pts := generate(sh, func(q, t float64, ph verdict.Phase) (float64, int) {
			f := math.Min(math.Max(t/sh.SoakSec, 0), 1)
			return pages(base + (sd0+f*(sd1-sd0))*rng.NormFloat64() + leak*math.Max(q, 0)), 0
		})
		return Series{Points: pts, Opt: verdict.ResourceOptions{Name: "rss", Unit: "bytes"}, Truth: leak,
			NoiseSD: math.Max(sd0, sd1), Shape: sh}
	}
}
