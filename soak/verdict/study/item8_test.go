package study

import (
	"math/rand/v2"
	"testing"

	"github.com/soakd/soakd/soak/verdict"
)

// TestItem8AtOnePointFive: issue 22's item 8 at 1.54× the horizon floor
// over 2 h (12 B/request at 100 req/s, 1.2 at 1 000; docs/verdict-study.md,
// "Item 8, sixth round"). Where the soak does not bend and its interval
// clears the floor by less than 2×, growth shows that it goes on by its
// two halves and a last third that goes on, not by the last third's bar:
// found in about half the runs (98–117 of 200 on seeds 1 and 2; 39–63 with
// the last third's bar, which a live look keeps: 18–21). Runs under the floor over 30 minutes, where the
// whole soak's interval is sometimes too narrow, are called leaks no more
// often than with the bar (the test's limits): over seeds 1–6, trendless
// runs in 1–2 of 1 200 (1–4 with the bar), runs at 0.9× the floor in 7–15
// (7–18 with the bar; the interval's coverage over 30 minutes, item 2).
func TestItem8AtOnePointFive(t *testing.T) {
	t.Parallel() // pure arithmetic on one goroutine: two run at once on two cores
	n, under, seeds := 100, 200, uint64(6)
	if raceBuild {
		n, under, seeds = 4, 4, 1 // the mechanics only
	}
	for _, d := range []SlowDesign{{Leak: 12, Rate: 100, SoakSec: 7200}, {Leak: 1.2, Rate: 1000, SoakSec: 7200}} {
		r := RunSlow(d, n, 1)
		looks := 0 // the same runs judged as a live look: by the last third's bar
		for i := range n {
			s := d.Make(rand.New(rand.NewPCG(1, uint64(i)*104729+uint64(d.Leak*1000+d.Rate+d.SoakSec+d.CycleSec))))
			s.Opt.Thresholds.Look = true
			if verdict.AnalyzeResource(s.Points, s.Opt).Verdict == verdict.Leak {
				looks++
			}
		}
		t.Logf("%s (%.2f× the floor): leak %d of %d, %d as a live look", d.Name(), d.Leak/d.HorizonFloor(), r.Leak, r.N, looks)
		if raceBuild {
			continue
		}
		if r.Found() < 0.45 {
			t.Errorf("%s: got %.0f %% found; want ≥ 45 %% (the last third's bar found 20–32 %%)", d.Name(), 100*r.Found())
		}
		if float64(looks) > 0.35*float64(n) {
			t.Errorf("%s: a live look found %d of %d; want the last third's bar (20–32 %%), not the halves", d.Name(), looks, n)
		}
	}
	for _, rate := range SlowRates {
		fl := SlowDesign{Rate: rate, SoakSec: 1800}.HorizonFloor()
		for _, c := range []struct{ share, most float64 }{{0, 4.0 / 1200}, {0.9, 18.0 / 1200}} {
			d := SlowDesign{Leak: c.share * fl, Rate: rate, SoakSec: 1800}
			leaks, runs := 0, 0
			for seed := uint64(1); seed <= seeds; seed++ {
				r := RunSlow(d, under, seed)
				leaks, runs = leaks+r.Leak, runs+r.N
			}
			t.Logf("%s (%.1f× the floor): leak %d of %d", d.Name(), c.share, leaks, runs)
			if !raceBuild && float64(leaks) > c.most*float64(runs) {
				t.Errorf("%s: got %d leaks of %d under the floor; want ≤ %.2g %%", d.Name(), leaks, runs, 100*c.most)
			}
		}
	}
}

// TestLevellingAtThreeFloors: a straight leak 3× the floor over 2 h is
// not read as levelling off because its halves' slopes happened to
// differ. Levelling is projected from the slope the second half
// confidently fell from (verdict's slowedFrom); from the halves' own
// slopes 40–43 of 1 200 such leaks read as levelling (seeds 1–6), from
// there 13–15. Over seeds 1–2, 400 runs a rate, the halves' own slopes
// give 15 and 7, the confident fall 4 and 3 (the test's limit is 9).
func TestLevellingAtThreeFloors(t *testing.T) {
	t.Parallel() // pure arithmetic on one goroutine: two run at once on two cores
	n := 200
	if raceBuild {
		n = 4 // the mechanics only
	}
	for _, rate := range SlowRates {
		d := SlowDesign{Leak: 3 * SlowDesign{Rate: rate}.HorizonFloor(), Rate: rate, SoakSec: 7200}
		levelling, leaks := 0, 0
		for seed := uint64(1); seed <= 2; seed++ {
			r := RunSlow(d, n, seed)
			levelling, leaks = levelling+r.Misses["halves slowed, levelling"], leaks+r.Leak
		}
		t.Logf("%s: leak %d of %d, levelling %d", d.Name(), leaks, 2*n, levelling)
		if !raceBuild && levelling > 9 {
			t.Errorf("%s: %d of %d read as levelling off; want ≤ 9", d.Name(), levelling, 2*n)
		}
	}
}
