package verdict

import (
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

var sawtoothReason = regexp.MustCompile(`; a sawtooth of (5\.[6-9]\d*|6(\.[0-4]\d*)?) MiB every 10 min, larger than the growth per cycle \(\d+ KiB at the fitted slope\): run at least [\d.]+ (h|min) in all to decide$`)

// TestTooFewSamplesCounts: the reason for too few soak samples says "1
// soak sample" in the singular (issue 41, item 7), and the plural else.
func TestTooFewSamplesCounts(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want string
	}{{1, "only 1 soak sample in one incarnation"}, {3, "only 3 soak samples in one incarnation"}} {
		res := AnalyzeResource(line(Soak, 0, tc.n, 50*mib, 0, 0), rss)
		if res.Verdict != Inconclusive || !strings.Contains(res.Reason, tc.want) {
			t.Errorf("%d samples: got %s, %q; want inconclusive, %q", tc.n, res.Verdict, res.Reason, tc.want)
		}
	}
}

// TestSawtoothNamedAsTheReason: a leak of 10 B/request (0.57 MiB a
// cycle) inside a 6 MiB sawtooth of 10-minute cycles, over an hour at 100
// req/s, is inconclusive, and the reason names the sawtooth, the growth
// per cycle and the soak's length that would decide (issue 41, item 7).
// A soak without a sawtooth does not name one.
func TestSawtoothNamedAsTheReason(t *testing.T) {
	named := 0
	for seed := range uint64(10) {
		rng := rand.New(rand.NewPCG(seed, 41))
		pts := make([]Point, 3600)
		for i := range pts {
			q := float64(i) * 100
			v := 80*mib + 10*q + 6*mib*math.Mod(float64(i)/600+0.37, 1) + 0.2*mib*rng.NormFloat64()
			pts[i] = Point{Requests: q, Seconds: float64(i), Value: pages(v), Phase: Soak}
		}
		res := AnalyzeResource(pts, rss)
		if res.Verdict != Inconclusive {
			t.Logf("seed %d: %s (%s)", seed, res.Verdict, res.Reason)
			continue
		}
		named++
		if !sawtoothReason.MatchString(res.Reason) {
			t.Errorf("seed %d: %q; want the sawtooth named, with the length to run", seed, res.Reason)
		}
		if seed == 0 {
			t.Logf("%s", res.Reason)
		}
	}
	if named < 5 {
		t.Errorf("%d of 10 runs inconclusive; want most (the sawtooth hides the leak)", named)
	}
	flat := AnalyzeResource(soakOf(1, 900, 3*mib, func(q float64) float64 { return 50*mib + 2*q }), rss)
	if strings.Contains(flat.Reason, "sawtooth") {
		t.Errorf("no sawtooth, yet: %s", flat.Reason)
	}
}

// TestCooldownText: the release test's three outcomes read apart:
// released (the interval under the bar), not released (wholly above it),
// and not shown (it straddles the bar).
func TestCooldownText(t *testing.T) {
	for _, tc := range []struct {
		r    release
		want string
	}{
		{release{ok: true, ci: [2]float64{-mib, mib}, bar: 2 * mib, idle: 60, base: true}, ", released after 60 s idle (the cool-down's median 0 B above the baseline's, 95 % CI −1–1 MiB, under a quarter of the 8 MiB it grew)"},
		{release{ci: [2]float64{3 * mib, 5 * mib}, level: 4 * mib, bar: 2 * mib, idle: 60, base: true}, ", not released after 60 s idle ("},
		{release{ci: [2]float64{-mib, 5 * mib}, level: 2 * mib, bar: 2 * mib, idle: 60}, ", release not shown after 60 s idle (the cool-down's median 2 MiB above the soak's start, 95 % CI −1–5 MiB, not wholly under"},
	} {
		if got := cooldownText(&tc.r, "bytes"); !strings.HasPrefix(got, tc.want) {
			t.Errorf("got %q; want it to start %q", got, tc.want)
		}
	}
	if got := cooldownText(nil, "bytes"); got != " (no cool-down ran)" {
		t.Errorf("no cool-down: got %q", got)
	}
}

// TestPTestNamesTheTest: the JSON's p_test says which test p_value comes
// from (issue 41, item 5): "slope" is the z test of the fit ci95 comes
// from (the slope over the SE its lower half implies); "sign" is
// the sign test of sudden jumps, which the reason names too, beside which
// ci95 may span 0. A steady leak and a flat series take p from the slope;
// growth in 14 random jumps of 1–8 MiB, most of them early, never falling,
// from the sign test in most of 10 seeds (p_test must match the reason in every one).
func TestPTestNamesTheTest(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 5))
	var at, size []float64
	for range 14 {
		at, size = append(at, 9e5*math.Pow(rng.Float64(), 2)), append(size, (1+7*rng.Float64())*mib)
	}
	jumps := func(q float64) float64 {
		v := 50 * mib
		for i := range at {
			if q >= at[i] {
				v += size[i]
			}
		}
		return v
	}
	for _, tc := range []struct {
		name     string
		value    func(q float64) float64
		minSigns int
	}{
		{"a steady leak", func(q float64) float64 { return 50*mib + 8*q }, 0},
		{"flat", func(q float64) float64 { return 50 * mib }, 0},
		{"growth in jumps", jumps, 8},
	} {
		signs := 0
		for seed := uint64(1); seed <= 10; seed++ {
			res := AnalyzeResource(soakOf(seed, 900, 0.3*mib, tc.value), rss)
			named := strings.Contains(res.Reason, "(sign test: ")
			switch res.PTest {
			case PTestSlope:
				if math.Abs(slopeP(trendFit(res))-res.PValue) > 1e-9 || named {
					t.Errorf("%s, seed %d: p %g (slope) beside ci95 %v, %q: want the interval's own p", tc.name, seed, res.PValue, res.CI95, res.Reason)
				}
			case PTestSign:
				signs++
				if strings.Contains(res.Reason, "p ") && !named {
					t.Errorf("%s, seed %d: p from the sign test, not named in %q", tc.name, seed, res.Reason)
				}
			default:
				t.Errorf("%s, seed %d: p_test %q; want slope or sign", tc.name, seed, res.PTest)
			}
			if seed == 1 || res.PTest == PTestSign && signs == 1 {
				t.Logf("%s: %s, p %.2g (%s), ci95 %.3g–%.3g", tc.name, res.Verdict, res.PValue, res.PTest, res.CI95[0], res.CI95[1])
			}
		}
		if signs < tc.minSigns || tc.minSigns == 0 && signs > 0 {
			t.Errorf("%s: p from the sign test in %d of 10; want %s", tc.name, signs, map[bool]string{true: "none", false: fmt.Sprintf("at least %d", tc.minSigns)}[tc.minSigns == 0])
		}
	}
}
