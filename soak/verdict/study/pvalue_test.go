package study

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/soakd/soakd/soak/verdict"
)

// TestPValueBesideTheInterval reads every model of the study (seed 2, 50
// series each) for a p-value that contradicts the interval beside it
// (issue 41, item 5): p < 0.025 while ci95 reaches to 0 or below. No leak's
// ci95 may reach 0; a p from the sign test must say so (p_test "sign",
// and the reason names the test where it prints p). A p of p_test
// "slope" takes its SE from the interval's lower half, so none may
// disagree; those of the sign test (not ci95's test) may, and are counted
// in the log. Before the slope's p took its SE from the whole width: 17
// slope and 6 sign disagreements. The first 10 series of each model are
// read again as an until-decided look (ci95 at 99.9 %), where p must
// agree with ci95 at that level: p < 0.0005 exactly when ci95 lies above
// 0.
func TestPValueBesideTheInterval(t *testing.T) {
	byTest := map[string]int{}
	var runs, leaks, looks, atLooks int
	for _, k := range Kinds() {
		for i := range 50 {
			rng := rand.New(rand.NewPCG(2, uint64(i)*7919+uint64(len(k.Name))))
			s := k.Make(rng)
			res := verdict.AnalyzeResource(s.Points, s.Opt)
			runs++
			if res.Verdict == verdict.Leak {
				leaks++
				if !(res.CI95[0] > 0) {
					t.Errorf("%s #%d: a leak with ci95 %v reaching 0: %s", k.Name, i, res.CI95, res.Reason)
				}
			}
			if res.PTest == verdict.PTestSign && strings.Contains(res.Reason, "p ") && !strings.Contains(res.Reason, "(sign test: ") {
				t.Errorf("%s #%d: p from the sign test, not named: %s", k.Name, i, res.Reason)
			}
			if res.PValue < 0.025 && res.CI95[0] <= 0 && res.CI95[1] >= 0 {
				byTest[res.PTest]++
			}
			if i < 10 {
				looks++
				if disagreesAtALook(s) {
					atLooks++
				}
			}
		}
	}
	t.Logf("%d runs, %d leaks (none with ci95 reaching 0); p < 0.025 beside a ci95 that spans 0, by p_test: %v", runs, leaks, byTest)
	if n := byTest[verdict.PTestSlope]; n > 0 {
		t.Errorf("got %d runs with the slope test's p < 0.025 beside a ci95 that spans 0; want 0", n)
	}
	t.Logf("at an until-decided look's level (share 0.02, ci95 at 99.9 %%): %d of %d runs with the slope's p on the other side of (1 − level)/2 from ci95's lower end", atLooks, looks)
	if atLooks > 0 {
		t.Errorf("got %d of %d runs at a look's level with p and ci95 disagreeing; want 0", atLooks, looks)
	}
}

// disagreesAtALook analyses s as an until-decided look spending a share
// of 0.02 (ci95 at 99.9 %) and says whether a p of the slope test stands
// on the other side of (1 − level)/2 from ci95's lower end's side of 0.
func disagreesAtALook(s Series) bool {
	opt := s.Opt
	opt.Thresholds = opt.Thresholds.WithDefaults(opt.Unit).Spent(0.02)
	res := verdict.AnalyzeResource(s.Points, opt)
	if res.PTest != verdict.PTestSlope || res.Level == 0 || res.Tail != nil {
		return false
	}
	return (res.PValue < (1-res.Level)/2) != (res.CI95[0] > 0)
}
