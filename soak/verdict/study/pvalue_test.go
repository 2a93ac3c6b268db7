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
// slope and 6 sign disagreements.
func TestPValueBesideTheInterval(t *testing.T) {
	byTest := map[string]int{}
	var runs, leaks int
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
		}
	}
	t.Logf("%d runs, %d leaks (none with ci95 reaching 0); p < 0.025 beside a ci95 that spans 0, by p_test: %v", runs, leaks, byTest)
	if n := byTest[verdict.PTestSlope]; n > 0 {
		t.Errorf("got %d runs with the slope test's p < 0.025 beside a ci95 that spans 0; want 0", n)
	}
}
