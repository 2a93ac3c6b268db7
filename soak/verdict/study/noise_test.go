package study

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestHosking checks the fractional Gaussian noise generator against its
// autocovariance: the sample autocovariance at lags 0, 1, 2 and 10,
// averaged over seeded series, is within 0.05 of the model's, and the
// variance of the mean of m points grows as m^(2H) (not m, as white
// noise's would).
func TestHosking(t *testing.T) {
	for _, h := range []float64{0.5, 0.75, 0.9} {
		const n, reps = 256, 200
		lags := []int{0, 1, 2, 10}
		got := make([]float64, len(lags))
		var sum64 []float64
		for r := range reps {
			x := Hosking(rand.New(rand.NewPCG(7, uint64(r))), n, h)
			for i, k := range lags {
				var s float64
				for j := k; j < n; j++ {
					s += x[j] * x[j-k]
				}
				got[i] += s / float64(n-k) / reps
			}
			var s float64
			for _, v := range x[:64] {
				s += v
			}
			sum64 = append(sum64, s)
		}
		for i, k := range lags {
			if want := FGNCov(k, h); math.Abs(got[i]-want) > 0.05 {
				t.Errorf("H %g: autocovariance at lag %d = %.3f; want %.3f ± 0.05", h, k, got[i], want)
			}
		}
		var v float64
		for _, s := range sum64 {
			v += s * s / reps
		}
		if want := math.Pow(64, 2*h); math.Abs(v/want-1) > 0.25 {
			t.Errorf("H %g: variance of a sum of 64 = %.1f; want %.1f (64^2H) ± 25 %%", h, v, want)
		}
	}
}

// intervalBars are TestStudyIntervals' bars per noise, on 40 seeded runs
// a cell (seed 1, no trend, 1 000 req/s): the least coverage of the true
// slope and the range of the width (the intervals' median half-width
// over 1.96 × the estimates' SD) over the 30 min, 2 h and 8 h runs. Each
// is what the method reaches today (docs/verdict-study.md, "Intervals",
// third round), less one run of the 40 for coverage and plus about 0.1
// for width, so that a regression fails (fgn-H0.9 keeps the 85 % bar it
// had, which it meets with no run to spare). Where the correlation is as long
// as the run or longer (ar1-30min, -2h, -8h) no interval read from the
// run alone reaches the bars (90–97 %, ≤ 1.3); they are held
// to what they reach, coverage and width from below. Under t noise the
// width read 0.19–0.81 while the drop test took t3's spikes for a
// sawtooth's drops (5–32 % of the runs enveloped per GC cycle); a
// spike's edge is no longer a drop ("Spikes are not cycles"), and t3
// is held from below too.
var intervalBars = map[string]struct{ minCover, minWidth, maxWidth float64 }{
	"ar1-30s":       {0.925, 0.9, 1.35}, // today 95 %, 0.97–1.26
	"ar1-5min":      {0.875, 0.8, 1.45}, // 90–100 %, 0.89–1.38
	"ar1-30min":     {0.8, 0.7, 1.3},    // 82.5–92.5 %, 0.75–0.86
	"ar1-2h":        {0.675, 0.5, 1.3},  // 70–85 %, 0.56–0.74
	"ar1-8h":        {0.65, 0.45, 1.3},  // 67.5–90 %, 0.51–0.88
	"fgn-H0.75":     {0.925, 0.9, 1.45}, // 95–100 %, 0.96–1.38
	"fgn-H0.9":      {0.85, 0.9, 1.1},   // 85–92.5 %, 0.96–1.01
	"t3":            {0.9, 0.75, 1.45},  // 92.5–100 %, 0.88–1.37
	"sd-fall-4-0.5": {0.925, 1.0, 1.4},  // 95–97.5 %, 1.08–1.34
	"sd-rise-0.5-4": {0.9, 1.0, 1.55},   // 92.5–95 %, 1.12–1.47
}

// TestStudyIntervals: on every noise of the interval study, on 30 min,
// 2 h and 8 h runs with no trend, the 95 % interval's coverage of the
// true slope and its width against the estimates' real spread stay
// within intervalBars (before issue 22: widths up to 2.2 and coverage
// down to 38 %; with the flat prior on the wander's correlation time,
// widths up to 2.0, which fails), and noise whose spread drifts is
// never called a leak.
func TestStudyIntervals(t *testing.T) {
	t.Parallel() // pure arithmetic on one goroutine: two run at once on two cores
	n := 40
	if raceBuild {
		t.Log("race build: a small sample; the study's bars are checked without -race")
		n = 3
	}
	for _, nz := range Noises() {
		bar, ok := intervalBars[nz.Name]
		if !ok {
			t.Fatalf("noise %s has no bars in intervalBars; add its measured coverage and width", nz.Name)
		}
		t.Run(nz.Name, func(t *testing.T) {
			t.Parallel()
			for _, d := range Designs() {
				if d.Rate != 1000 {
					continue // the rate scales the slope, not its interval
				}
				c := RunCell(nz, d, 0, n, 1)
				t.Logf("%s %s: coverage %.1f %%, width %.2f, leaks %d", nz.Name, d, 100*c.Coverage(), c.WidthRatio(), c.Leaks)
				if raceBuild {
					continue
				}
				if c.Coverage() < bar.minCover {
					t.Errorf("%s: got coverage %.1f %%; want ≥ %.1f %%", d, 100*c.Coverage(), 100*bar.minCover)
				}
				if w := c.WidthRatio(); w > bar.maxWidth || w < bar.minWidth {
					t.Errorf("%s: got a width %.2f× the estimates' spread; want %.2f–%.2f", d, w, bar.minWidth, bar.maxWidth)
				}
				if c.Leaks > 0 {
					t.Errorf("%s: got %d leak verdicts on noise with no trend; want 0", d, c.Leaks)
				}
			}
		})
	}
}

// TestCellRanges: the bootstrap ranges of a cell's coverage and width
// hold the figures and are as wide as their sampling error: 1 000 runs
// covering 95 % read 93.6–96.4 %, and an SD from 1 000 draws is known to
// about ±4.4 %.
func TestCellRanges(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	c := Cell{N: 1000}
	for i := range c.N {
		c.est = append(c.est, rng.NormFloat64())
		c.half = append(c.half, 1.959963984540054)
		in := i%20 != 0
		c.covered = append(c.covered, in)
		if in {
			c.Covered++
		}
	}
	c.SD, c.HalfWidth = sd(c.est), 1.959963984540054
	cr, wr := c.Ranges(400, 1)
	t.Logf("coverage %.3f (%.3f–%.3f), width %.3f (%.3f–%.3f)", c.Coverage(), cr[0], cr[1], c.WidthRatio(), wr[0], wr[1])
	if cr[0] > 0.95 || cr[1] < 0.95 || cr[1]-cr[0] < 0.015 || cr[1]-cr[0] > 0.045 {
		t.Errorf("got a coverage range %.3f–%.3f; want about 0.936–0.964", cr[0], cr[1])
	}
	if w := c.WidthRatio(); wr[0] > w || wr[1] < w || wr[1]-wr[0] < 0.04 || wr[1]-wr[0] > 0.16 {
		t.Errorf("got a width range %.3f–%.3f about %.3f; want it to hold the width and span about 0.09", wr[0], wr[1], w)
	}
	if !c.Item2() {
		t.Errorf("a cell covering 95 %% at width %.2f does not meet item 2", c.WidthRatio())
	}
	c.HalfWidth *= 1.4
	if c.Item2() {
		t.Errorf("a cell 1.4× as wide as its spread meets item 2")
	}
	one := Cell{N: 1, Covered: 1, SD: 1, HalfWidth: 1.959963984540054, est: []float64{0}, half: []float64{1}, covered: []bool{true}}
	if cr, wr := one.Ranges(100, 1); cr != [2]float64{1, 1} || wr != [2]float64{1, 1} {
		t.Errorf("one run: got ranges %v, %v; want the figures themselves", cr, wr)
	}
}
