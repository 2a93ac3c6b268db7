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

// intervalGap names the noises whose correlation is as long as a run or
// longer: no interval read from the run alone can reach the bars there
// (docs/verdict-study.md, "Intervals"), so they are held to what the
// method does today.
var intervalGap = map[string]bool{"ar1-30min": true, "ar1-2h": true, "ar1-8h": true}

// TestStudyIntervals: on every noise of the interval study, on 30 min,
// 2 h and 8 h runs with no trend, the 95 % interval covers the true
// slope in at least 85 % of 40 seeded runs (65 % where the correlation is
// as long as the run: 67–92 % today, 38–80 % before issue 22) and is no
// more than 1.6× wider than the estimates' real spread (0.2–1.5 today;
// up to 2.0 with the flat prior on the wander's correlation time, which
// fails it; 2.2 before issue 22); where it cannot cover, it is at least
// 0.4 times as wide (0.5–0.9 today, 0.2–0.6 before); and noise whose
// spread drifts is never called a leak.
func TestStudyIntervals(t *testing.T) {
	n := 40
	if raceBuild {
		t.Log("race build: a small sample; the study's bars are checked without -race")
		n = 3
	}
	for _, nz := range Noises() {
		t.Run(nz.Name, func(t *testing.T) {
			t.Parallel()
			for _, d := range Designs() {
				if d.Rate != 1000 {
					continue // the rate scales the slope, not its interval
				}
				c := RunCell(nz, d, 0, n, 1)
				t.Logf("%s: coverage %.1f %%, width %.2f, leaks %d", d, 100*c.Coverage(), c.WidthRatio(), c.Leaks)
				if raceBuild {
					continue
				}
				minCover, minWidth, maxWidth := 0.85, 0.0, 1.6
				if intervalGap[nz.Name] {
					minCover, minWidth, maxWidth = 0.65, 0.4, 2.5
				}
				if c.Coverage() < minCover {
					t.Errorf("%s: got coverage %.1f %%; want ≥ %.0f %%", d, 100*c.Coverage(), 100*minCover)
				}
				if w := c.WidthRatio(); w > maxWidth || w < minWidth {
					t.Errorf("%s: got a width %.2f× the estimates' spread; want %.1f–%.1f", d, w, minWidth, maxWidth)
				}
				if c.Leaks > 0 {
					t.Errorf("%s: got %d leak verdicts on noise with no trend; want 0", d, c.Leaks)
				}
			}
		})
	}
}
