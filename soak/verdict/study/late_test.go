package study

import (
	"bytes"
	"math"
	"testing"
)

// TestLateStarts: issue 41, item 2's silent miss. A leak that starts
// late is averaged with the flat stretch before it, and the whole soak's
// interval can lie within the floor; stable is held back while the
// soak's last half or last quarter grows (verdict's recentGrowth). A leak
// 3× the floor from 50 % of a 2 h soak reads stable in ≤ 1 % of 200 runs
// (0 and 0 of 200 at 100 and 1 000 req/s; 0 before too). The others are
// a known gap, held to what they do today so that they cannot get worse:
// 3× from 75 % read stable in 17 and 8 of 200 (56 and 43 before), 1.5×
// from 50 % in 14 and 16 (21 and 28), 1.5× from 75 % in 100 and 107 (172
// and 175): over the last 30 minutes of a 2 h soak of 5-minute wander the
// stretch's interval is several floors wide (docs/verdict-study.md, "A
// leak that starts late: no stable while the recent stretch grows").
// The cost: the trendless series read stable in 4 008 of 7 800 runs (4 125
// before, 1.5 points; 4 006 since the slope's p agrees with its interval),
// held to ≥ 51 %, and none of them is called a leak more than before
// (ar1-30min 0 → 1 of 200 with that p; the bar is 1 %).
func TestLateStarts(t *testing.T) {
	t.Parallel() // pure arithmetic on one goroutine: two run at once on two cores
	n := 200
	if raceBuild {
		n = 4 // the mechanics only
	}
	for _, d := range LateDesigns() {
		r := RunSlow(d, n, 1)
		mult := d.Leak / d.HorizonFloor()
		t.Logf("%.1f× the floor from %g %%, %g req/s, 2 h: leak %d, stable %d, plateau %d, inconclusive %d of %d",
			mult, 100*d.Start, d.Rate, r.Leak, r.Stable, r.Plateau, r.Inconclusive, r.N)
		if raceBuild {
			continue
		}
		most := lateMostStable[[2]float64{math.Round(2*mult) / 2, d.Start}]
		if got := float64(r.Stable+r.Plateau) / float64(r.N); got > most {
			t.Errorf("%.1f× the floor from %g %%, %g req/s: got %d of %d stable or plateau; want ≤ %.0f %%",
				mult, 100*d.Start, d.Rate, r.Stable+r.Plateau, r.N, 100*most)
		}
	}
	rows := FlatStable(n, 1)
	var buf bytes.Buffer
	stable, all := WriteFlatStable(&buf, rows)
	t.Logf("trendless series read stable: %d of %d\n%s", stable, all, buf.String())
	if raceBuild {
		return
	}
	if float64(stable) < 0.51*float64(all) {
		t.Errorf("got %d of %d trendless series stable; want ≥ 51 %%", stable, all)
	}
	for _, r := range rows {
		if r.Leak > r.N/100 {
			t.Errorf("%s: got %d of %d leaks; want ≤ 1 %%", r.Name, r.Leak, r.N)
		}
	}
}

// lateMostStable is the most stable (or plateau) verdicts a late-start
// design may read, by multiple of the floor and start: the bar, 1 %,
// where it is met, else what the design reads today (see TestLateStarts).
var lateMostStable = map[[2]float64]float64{
	{3, 0.5}:    0.01,
	{3, 0.75}:   0.10,
	{1.5, 0.5}:  0.10,
	{1.5, 0.75}: 0.55,
}

// TestLateStartsFound: issue 41, item 2 proper. A leak that begins late
// is found from where it began (verdict's decideLate) and named ("since
// growth began at request N"), and smooth growth is never described as
// steps. 200 runs a design, seed 1; each cell is held to lateLeastFound
// (the bar, 90 %, where it is met, else what it reads today less two
// binomial standard errors), and no run of any cell reads "in N steps".
// The designs 0.9× the floor over 2 h, sampled evenly or with two gaps
// of a tenth of the soak, read no more than 1 % leaks in 1 000 runs
// (docs/verdict-study.md, "A leak that starts late, found and named").
func TestLateStartsFound(t *testing.T) {
	t.Parallel() // pure arithmetic on one goroutine: two run at once on two cores
	n, under := 200, 1000
	if raceBuild {
		n, under = 4, 4 // the mechanics only
	}
	for _, d := range LateFoundDesigns() {
		r := RunSlow(d, n, 1)
		mult := math.Round(d.Leak / d.HorizonFloor())
		t.Logf("%2.0f× the floor from %2.0f %%, %4g req/s, 2 h: leak %3d (growth began named in %3d), stable %d, plateau %d, inconclusive %3d of %d; steps %d",
			mult, 100*d.Start, d.Rate, r.Leak, r.Began, r.Stable, r.Plateau, r.Inconclusive, r.N, r.Steps)
		if raceBuild {
			continue
		}
		if least := lateLeastFound[[3]float64{mult, d.Start, d.Rate}]; r.Found() < least {
			t.Errorf("%.0f× the floor from %g %%, %g req/s: found %d of %d; want ≥ %.0f %%", mult, 100*d.Start, d.Rate, r.Leak, r.N, 100*least)
		}
		if r.Steps > 0 {
			t.Errorf("%.0f× the floor from %g %%, %g req/s: %d of %d read as steps; want none", mult, 100*d.Start, d.Rate, r.Steps, r.N)
		}
	}
	for _, rate := range SlowRates {
		fl := SlowDesign{Rate: rate}.HorizonFloor()
		for _, smp := range []Sampling{{}, {Gaps: 2}} {
			r := RunSlow(SlowDesign{Leak: 0.9 * fl, Rate: rate, SoakSec: 7200, Sampling: smp}, under, 1)
			t.Logf("0.9× the floor, %g req/s, 2 h, %s: leak %d of %d (growth began named in %d)", rate, smp, r.Leak, r.N, r.Began)
			if !raceBuild && r.Leak > r.N/100 {
				t.Errorf("0.9× the floor, %g req/s, %s: got %d leaks of %d; want ≤ 1 %%", rate, smp, r.Leak, r.N)
			}
		}
	}
}

// lateLeastFound is the least share of leaks a late-start design must
// read, by multiple of the floor, start and rate (see
// TestLateStartsFound); in brackets, where it differs, what the design
// read with the stretch's interval stretched 2.5× (lateWiden before).
var lateLeastFound = map[[3]float64]float64{
	{3, 0.25, 100}:   0.57, // 128 of 200
	{3, 0.5, 100}:    0.41, // 98 of 200 (72)
	{3, 0.75, 100}:   0.00, // 1 of 200 (0)
	{6, 0.25, 100}:   0.90, // 192 of 200
	{6, 0.5, 100}:    0.90, // 190 of 200 (185)
	{6, 0.75, 100}:   0.13, // 38 of 200 (25)
	{13, 0.25, 100}:  0.90, // 199 of 200
	{13, 0.5, 100}:   0.90, // 197 of 200
	{13, 0.75, 100}:  0.75, // 162 of 200 (150)
	{3, 0.25, 1000}:  0.67, // 148 of 200 (145)
	{3, 0.5, 1000}:   0.36, // 88 of 200 (61)
	{3, 0.75, 1000}:  0.00, // 6 of 200 (4)
	{6, 0.25, 1000}:  0.90, // 194 of 200
	{6, 0.5, 1000}:   0.90, // 188 of 200 (176)
	{6, 0.75, 1000}:  0.08, // 27 of 200 (20)
	{13, 0.25, 1000}: 0.90, // 200 of 200
	{13, 0.5, 1000}:  0.90, // 188 of 200
	{13, 0.75, 1000}: 0.80, // 171 of 200 (154)
}
