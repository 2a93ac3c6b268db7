package abrun

import (
	"os"
	"sort"
	"strconv"
	"testing"
)

// simSeeds is the number of seeded runs per case: SOAKD_AB_SEEDS, else
// 50 (each runs up to 20 looks of two fits; bench/ab-study.sh runs 1000).
func simSeeds(t *testing.T) int {
	if s := os.Getenv("SOAKD_AB_SEEDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("SOAKD_AB_SEEDS=%q: want a positive count", s)
		}
		return n
	}
	return 50
}

// simCase is one truth: A's and B's {leak B/request, CPU, latency}.
type simCase struct {
	name string
	a, b [3]float64
}

// tallyCase runs the case over n seeds and counts its overall verdicts,
// the metrics that read regressed, and the pairs at the stop.
func tallyCase(c simCase, n int) (overall map[string]int, regressed map[string]int, pairs []int) {
	overall, regressed = map[string]int{}, map[string]int{}
	for seed := range uint64(n) {
		o := simulate(seed, c.a, c.b, 4, 2, 40)
		overall[o.overall]++
		for _, m := range o.metrics {
			if m.Verdict == Regressed {
				regressed[m.Name]++
			}
		}
		pairs = append(pairs, o.pairs)
	}
	sort.Ints(pairs)
	return overall, regressed, pairs
}

// TestSimNoFalseAlarm: the same build twice, under a machine that drifts
// for both, and a B exactly at every margin (16 B/request, +5 % CPU, +10 %
// latency): the sequential test, looking every 2 pairs up to 20 times,
// reads regressed in at most 1 % of the runs, with a binomial slack of
// one run at the default 50 seeds.
func TestSimNoFalseAlarm(t *testing.T) {
	n := simSeeds(t)
	for _, c := range []simCase{
		{"same", [3]float64{0, 1, 1}, [3]float64{0, 1, 1}},
		{"at the margins", [3]float64{0, 1, 1}, [3]float64{16, 1.05, 1.10}},
	} {
		overall, reg, pairs := tallyCase(c, n)
		rate := float64(overall[Regressed]) / float64(n)
		t.Logf("%s: %v; regressed by metric %v; pairs median %d", c.name, overall, reg, pairs[n/2])
		if limit := 0.01 + 1/float64(n); rate > limit {
			t.Errorf("%s: regressed in %.1f %% of %d runs; want <= %.1f %%", c.name, 100*rate, n, 100*limit)
		}
	}
}

// TestSimFindsLeak: B leaks 120 B/request: regressed on rss in at least
// 95 % of the runs; it logs the requests the decision took.
func TestSimFindsLeak(t *testing.T) {
	n := simSeeds(t)
	overall, reg, pairs := tallyCase(simCase{"leak", [3]float64{0, 1, 1}, [3]float64{120, 1, 1}}, n)
	rate := float64(reg["rss_per_request"]) / float64(n)
	t.Logf("leak 120 B/request: %v; regressed by metric %v; requests to decide: median %d, 90th %d",
		overall, reg, pairs[n/2]*2*simBlock, pairs[n*9/10]*2*simBlock)
	if rate < 0.95 {
		t.Errorf("rss regressed in %.1f %% of %d runs; want >= 95 %%", 100*rate, n)
	}
}
