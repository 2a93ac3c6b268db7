package abrun

import (
	"math"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"testing"

	"github.com/soakd/soakd/soak/compare"
	"github.com/soakd/soakd/soak/verdict"
)

// simSeeds is the number of seeded runs per case: SOAKD_AB_SEEDS, else
// 50, or 8 under -race (each runs up to 19 looks of two fits;
// bench/ab-study.sh runs 1000).
func simSeeds(t *testing.T) int {
	if s := os.Getenv("SOAKD_AB_SEEDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("SOAKD_AB_SEEDS=%q: want a positive count", s)
		}
		return n
	}
	if raceBuild {
		return 8
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
		for name, m := range o.metrics {
			if m.Verdict == compare.Regressed {
				regressed[name]++
			}
		}
		pairs = append(pairs, o.pairs)
	}
	sort.Ints(pairs)
	return overall, regressed, pairs
}

// TestSimNoFalseAlarm: a B exactly at every margin at once (16
// B/request, +5 % CPU, +10 % latency, −9 % throughput) under a machine
// that drifts for both: the sequential test, looking every 2 pairs up to
// 19 times, reads each metric regressed in at most alpha/2 = 1 % of the
// runs (with a binomial slack of one run at the default 50 seeds). With
// SOAKD_AB_SEEDS set it also runs the same build twice, where the whole
// comparison must read regressed in at most 1 %.
func TestSimNoFalseAlarm(t *testing.T) {
	n := simSeeds(t)
	limit := 0.01 + 1/float64(n)
	overall, reg, pairs := tallyCase(simCase{"at the margins", [3]float64{0, 1, 1}, [3]float64{16, 1.05, 1.10}}, n)
	t.Logf("at the margins: %v; regressed by metric %v; pairs median %d", overall, reg, pairs[n/2])
	for name, k := range reg {
		if rate := float64(k) / float64(n); rate > limit {
			t.Errorf("at the margins: %s regressed in %.1f %% of %d runs; want <= %.1f %%", name, 100*rate, n, 100*limit)
		}
	}
	// p99 and p99.9 have margins of their own (25 and 50 %): B's latency
	// at each (its p50 then truly regressed, and is not counted).
	for _, c := range []struct {
		metric string
		lat    float64
	}{{compare.LatencyP99, 1.25}, {compare.LatencyP999, 1.5}} {
		_, reg, _ := tallyCase(simCase{c.metric + " at its margin", [3]float64{0, 1, 1}, [3]float64{0, 1, c.lat}}, n)
		if rate := float64(reg[c.metric]) / float64(n); rate > limit {
			t.Errorf("latency ×%v: %s regressed in %.1f %% of %d runs; want <= %.1f %%", c.lat, c.metric, 100*rate, n, 100*limit)
		}
	}
	if os.Getenv("SOAKD_AB_SEEDS") == "" {
		return // A = B read no regression in 50 seeds; the bench runs it
	}
	overall, reg, pairs = tallyCase(simCase{"same", [3]float64{0, 1, 1}, [3]float64{0, 1, 1}}, n)
	t.Logf("same: %v; regressed by metric %v; pairs median %d", overall, reg, pairs[n/2])
	if rate := float64(overall[compare.Regressed]) / float64(n); rate > limit {
		t.Errorf("same: regressed in %.1f %% of %d runs; want <= %.1f %%", 100*rate, n, 100*limit)
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

// separateRuns judges a leak of leak B/request in B by two separate runs
// of total requests each half, judged by soakd compare's own slope rule
// (compare.CompareSlopes on each run's fit), with B's own fit reading a
// leak as the A/B asks. It returns the share of n seeds that read regressed.
func separateRuns(leak float64, total, n int) float64 {
	hits := 0
	for seed := range uint64(n) {
		r := rand.New(rand.NewPCG(seed, 0x5e9))
		t := NewTally()
		for who, l := range []float64{0, leak} {
			w := &simWorld{r: r}
			b := newSimBuild(r, l, 1, 1)
			for q := 0; q < total/2; q += simBlock {
				w.runBlock(t, Build(who), b, 0.1*float64(total/2))
			}
		}
		var sl [2]compare.Slope
		var leaks bool
		for _, b := range []Build{A, B} {
			f := verdict.AnalyzeResource(t.Points[b][ResourceRSS], verdict.ResourceOptions{Name: "rss", Unit: "bytes"})
			sl[b] = compare.Slope{Unit: "bytes", PerRequest: f.PerRequest, CI95: f.CI95}
			leaks = f.Verdict == verdict.Leak // B's own verdict, as the A/B asks (heldBack)
		}
		if leaks && compare.CompareSlopes(sl[A], sl[B], compare.InterleavedMargins()).Verdict == compare.Regressed {
			hits++
		}
	}
	return float64(hits) / float64(n)
}

// TestSimSeparateRuns compares the requests that decide a leak of 120
// B/request in 95 % of runs: the A/B soak's (the 95th percentile of its
// stops, counting a run that did not read regressed as never stopping)
// against two separate runs of a fixed total length judged once, the
// shortest length (in steps of 16 000) whose detection rate reaches
// 95 %. The A/B's median must be below it: a sequential test saves on
// the typical run and pays at the tail, where its boundary is wider.
func TestSimSeparateRuns(t *testing.T) {
	n := simSeeds(t)
	var stops []int
	for seed := range uint64(n) {
		o := simulate(seed, [3]float64{0, 1, 1}, [3]float64{120, 1, 1}, 4, 2, 40)
		s := math.MaxInt
		if o.rss == compare.Regressed {
			s = o.pairs * 2 * simBlock
		}
		stops = append(stops, s)
	}
	sort.Ints(stops)
	ab95, abMed := stops[(95*n+99)/100-1], stops[n/2]
	sep95 := 0
	for total := 32000; total <= 512000 && sep95 == 0; total += 16000 {
		if separateRuns(120, total, n) >= 0.95 {
			sep95 = total
		}
	}
	t.Logf("requests to decide a 120 B/request leak in 95 %% of %d runs: A/B %d (median %d); two separate runs %d", n, ab95, abMed, sep95)
	if raceBuild {
		return // 95 % of 8 seeds is all of them: too few to rank the designs
	}
	if sep95 == 0 || abMed >= sep95 {
		t.Errorf("the A/B's median is %d requests, the separate runs need %d; want the A/B below", abMed, sep95)
	}
}
