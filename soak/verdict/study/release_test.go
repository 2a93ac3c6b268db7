package study

import (
	"strings"
	"testing"
)

// TestReleaseIsProven: issue 41's cool-down designs (docs/verdict-study.md,
// "Released means proven released"). No leak of 1.5–4× the floor that is
// kept through a cool-down of 60 s to 5 min, under white noise or 5-minute
// wander, reads stable because released (before: 29 of 200 at 2.6× the
// floor under white noise after 60 s, 92 of 200 at 2× after 5 min), and
// under white noise none reads stable or plateau in more than 1 % of a
// cell's runs. The
// cool-down's interval covers the truth in at least 85 % of a cell's runs
// (88–100 % measured), and growth really given back at 4× the floor under
// white noise reads released in at least 60 % (68–100 % measured).
func TestReleaseIsProven(t *testing.T) {
	t.Parallel() // pure arithmetic on one goroutine: two run at once on two cores
	n := 200
	if raceBuild {
		n = 4
	}
	for _, d := range ReleaseDesigns() {
		r := RunRelease(d, n, 1)
		cover := float64(r.Covered) / float64(r.N)
		t.Logf("%s: leak %d, stable %d, plateau %d, other %d; released %d, false clean %d (by the release %d), coverage %.1f %%",
			d.Name(), r.Leak, r.Stable, r.Plateau, r.Others, r.Released, r.FalseClean, r.ReleasedClean, 100*cover)
		if raceBuild {
			continue
		}
		if r.ReleasedClean > 0 {
			t.Errorf("%s: %d of %d kept leaks read stable as released; want none", d.Name(), r.ReleasedClean, r.N)
		}
		if d.Noise == "white" && float64(r.FalseClean) > 0.01*float64(r.N) {
			// Under 5-minute wander a 30-minute soak's interval is
			// sometimes too narrow, and a kept leak reads stable or
			// plateau on the soak alone (2 of 200 at most on seed 1,
			// 3 on seed 2, none by the release; "Limits"): logged,
			// not asserted, as in TestSlowLeaks.
			t.Errorf("%s: %d of %d kept leaks read stable or plateau; want ≤ 1 %%", d.Name(), r.FalseClean, r.N)
		}
		if cover < 0.85 {
			t.Errorf("%s: the cool-down's interval covered the truth in %.1f %%; want ≥ 85 %%", d.Name(), 100*cover)
		}
		if d.Given && d.Times == 4 && strings.Contains(d.Noise, "white") && float64(r.Released) < 0.6*float64(r.N) {
			t.Errorf("%s: %d of %d releases read released; want ≥ 60 %%", d.Name(), r.Released, r.N)
		}
	}
}
