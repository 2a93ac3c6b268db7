package study

import (
	"testing"
)

// TestSamplingThinsOrBreaks: issue 41, item 6. A leak's power when its
// sampling thins (×4 from mid-run) or breaks (two gaps of a tenth of the
// soak) is held against the same seeds sampled evenly with as many
// samples (62.5 % and 80 % of them): at 3× the floor it falls short by
// no more than samplingSlack (what the lost samples explain); at 2× the
// floor a thinned soak still falls short by 16–17 points (a known gap,
// held to samplingGap so that it cannot get worse); and runs under
// the floor are not called leaks for it (≤ 1 % over 2 h). Before the
// halves were split at the requests' midpoint and a thinned stretch was
// inflated for its own spacing, a leak 2× the floor over 2 h sampled ×4
// less often from mid-run was found in 76 and 77 of 200 runs of seed 1
// (100 and 1 000 req/s), against 158 and 154 evenly with as many
// samples; now 127 and 135 (docs/verdict-study.md, "Sampling that thins
// or breaks").
func TestSamplingThinsOrBreaks(t *testing.T) {
	t.Parallel() // pure arithmetic on one goroutine: two run at once on two cores
	n := 100
	if raceBuild {
		n = 4 // the mechanics only
	}
	for _, rate := range SlowRates {
		fl := SlowDesign{Rate: rate}.HorizonFloor()
		for _, mult := range []float64{0, 0.9, 2, 3} {
			for _, c := range []struct{ uneven, even Sampling }{
				{Sampling{Thin: 4}, Sampling{Keep: Sampling{Thin: 4}.Share()}},
				{Sampling{Gaps: 2}, Sampling{Keep: Sampling{Gaps: 2}.Share()}},
			} {
				u := RunSlow(SlowDesign{Leak: mult * fl, Rate: rate, SoakSec: 7200, Sampling: c.uneven}, n, 1)
				e := RunSlow(SlowDesign{Leak: mult * fl, Rate: rate, SoakSec: 7200, Sampling: c.even}, n, 1)
				t.Logf("%.1f× the floor, %g req/s, 2 h: %s leak %d of %d; even with as many samples (%s) %d",
					mult, rate, c.uneven, u.Leak, n, c.even, e.Leak)
				if raceBuild {
					continue
				}
				if mult < 1 {
					if u.Leak > n/100 {
						t.Errorf("%.1f× the floor, %g req/s, %s: got %d leaks of %d under the floor; want ≤ 1 %%", mult, rate, c.uneven, u.Leak, n)
					}
					continue
				}
				slack := samplingSlack
				if mult < 3 {
					slack = samplingGap
				}
				if float64(u.Leak) < float64(e.Leak)-slack*float64(n) {
					t.Errorf("%.1f× the floor, %g req/s, %s: found %d of %d; want ≥ the even series' %d of as many samples − %.0f %% of the runs",
						mult, rate, c.uneven, u.Leak, n, e.Leak, 100*slack)
				}
			}
		}
	}
}

// samplingSlack is the share of runs by which a thinned or gappy
// design's power may fall short of the even one's with as many samples:
// two binomial standard errors of a difference near 80 % over 100
// paired runs.
const samplingSlack = 0.08

// samplingGap is how far short a thinned design 2× the floor may fall
// (16 and 17 points measured on this seed at 100 req/s; 50 of 100
// against 83, 33 points, with the halves split by bin index).
const samplingGap = 0.2
