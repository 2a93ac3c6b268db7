package study

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/soakd/soakd/soak/verdict"
)

// TestSlowingDesigns measures issue 41 item 3's designs (docs/
// verdict-study.md, "Slowing is not stopping"). Over seed 1, 200 runs a
// design, leaks that slow at mid-run to 3× the floor are found in 155,
// 118, 51 of 200 (a quarter, a third, a half; 100 req/s) and 152, 126,
// 54 (1 000 req/s), 40 → 20 B/request at 500 req/s in 156 (76 before the
// hinge was weighed against the curves that stop, goesOnOverStop): the
// bar (≥ 90 %) is not met, and each is held to what it reads less two
// binomial standard errors (slowingLeastFound). A cache of 8 MiB filling
// with no leak is a leak in ≤ 1 % (0–1 of 200). SLOWING_N sets the runs
// a design.
func TestSlowingDesigns(t *testing.T) {
	t.Parallel() // pure arithmetic on one goroutine: two run at once on two cores
	n := 200
	fmt.Sscan(os.Getenv("SLOWING_N"), &n)
	if raceBuild {
		n = 4 // the mechanics only
	}
	for _, d := range SlowingDesigns() {
		r := RunSlow(d, n, 1)
		t.Logf("%-44s after the knot %.2f× the floor: leak %d, stable %d, plateau %d, inconclusive %d of %d %v",
			d.Name(), d.Truth()/d.HorizonFloor(), r.Leak, r.Stable, r.Plateau, r.Inconclusive, r.N, r.Misses)
		if raceBuild {
			continue
		}
		if d.Cache > 0 && d.Leak == 0 && r.Leak > r.N/100 {
			t.Errorf("%s: %d false leaks of %d; want ≤ 1 %%", d.Name(), r.Leak, r.N)
		}
		if d.SlowAt > 0 {
			key := [2]float64{math.Round(100 * d.SlowTo / d.Leak), d.Rate}
			if least, ok := slowingLeastFound[key]; !ok || r.Found() < least {
				t.Errorf("%s: found %d of %d; want ≥ %.0f %%", d.Name(), r.Leak, r.N, 100*least)
			}
		}
	}
}

// slowingLeastFound is the least share of leaks a slowing design must
// read, by the share of its slope it keeps after the knot (in %) and its
// rate: what it reads on seed 1 less two binomial standard errors (see
// TestSlowingDesigns); the bar, 90 %, is met by none.
var slowingLeastFound = map[[2]float64]float64{
	{75, 100}:  0.71, // 155 of 200
	{67, 100}:  0.52, // 118 of 200
	{50, 100}:  0.19, // 51 of 200
	{75, 1000}: 0.70, // 152 of 200
	{67, 1000}: 0.56, // 126 of 200
	{50, 1000}: 0.20, // 54 of 200
	{50, 500}:  0.72, // 156 of 200 (76 before goesOnOverStop)
}

// TestSlowingAdvice: the design (40 → 20 B/request at mid-run,
// 500 req/s, 2 h; 12.9× the floor after the knot) held back as
// inconclusive is advised for the rule that held it back, never "so that
// the interval narrows enough" while the interval after the knot already
// clears the floor (issue 41, item 3). Seed 1, 40 runs: all of the runs
// held back name the pace the growth slowed at.
func TestSlowingAdvice(t *testing.T) {
	t.Parallel() // pure arithmetic on one goroutine: two run at once on two cores
	n := 40
	if raceBuild {
		n = 4 // the mechanics only
	}
	d := SlowDesign{Leak: 40, SlowTo: 20, SlowAt: 0.5, Rate: 500, SoakSec: 7200}
	held := 0
	for i := range n {
		rng := rand.New(rand.NewPCG(1, uint64(i)*104729+uint64(d.Leak*1000+d.Rate+d.SoakSec+d.CycleSec)))
		s := d.Make(rng)
		res := verdict.AnalyzeResource(s.Points, s.Opt)
		if res.Verdict != verdict.Inconclusive || !strings.Contains(res.Reason, "the growth is slowing") {
			continue
		}
		held++
		if strings.Contains(res.Settle, "narrows enough") || !strings.Contains(res.Settle, "already clears the horizon floor") {
			t.Errorf("run %d: advice %q; want it to name the rule that held it back", i, res.Settle)
		}
	}
	t.Logf("held back as slowing: %d of %d", held, n)
	if !raceBuild && held == 0 {
		t.Error("no run held back as slowing: the test checks nothing")
	}
}
