package study

import (
	"math/rand/v2"
	"testing"

	"github.com/soakd/soakd/soak/verdict"
)

// runBusy runs a busy-machine design as Run does, with a leak eligible
// when it also grows past a typical life's size by a quarter (the lives'
// transient rule: a life shorter than the transient that grew less than
// its size cannot be told from a runtime sizing itself; at the bar
// itself an unbiased estimate of the growth falls under it about half
// the time).
func runBusy(k Kind, n int, seed uint64) Tally {
	t := Tally{Kind: k.Name, Leak: k.Leak, Verdicts: map[string]int{}}
	for i := range n {
		rng := rand.New(rand.NewPCG(seed, uint64(i)*7919+uint64(len(k.Name))))
		s := k.Make(rng)
		res := verdict.AnalyzeResource(s.Points, s.Opt)
		t.N++
		t.Verdicts[res.Verdict]++
		if res.CI95[0] <= s.Truth && s.Truth <= res.CI95[1] {
			t.Covered++
		}
		if res.MaskedBy != "" {
			t.Masked++
			if res.CI95[0] <= s.Truth && s.Truth <= res.CI95[1] {
				t.MaskedCovered++
			}
		}
		if k.Leak && s.LifeShare >= 1.25 && s.Truth*s.SoakRequests() >= 5*s.NoiseSD && meaningful(s) {
			t.Eligible++
			if res.Verdict == verdict.Leak {
				t.Detected++
			}
			if res.MaskedBy != "" {
				t.MaskedEligible++
			}
		}
	}
	return t
}

// TestStudyBusyLives: the busy-machine lives (issue 41, item 4). The
// no-leak twins are called leaks in at most 1 % of their series; of the
// leaks of 120 B/request that grow past a typical life's size by a
// quarter, the prefork ones are found in at least 95 % (63 of 64) and the
// supervised ones in at least 90 % (186 of 197: a run of 3–8 lives, the
// rest too wide); and where a leak is reported masked by recycling, the
// lives' interval holds the truth in at least 90 % (236 of 236 and 92 of
// 98; 91 of 124 on prefork before the lives' spans counted every request
// and no idle one: its estimate read 1.27 times the truth).
// docs/verdict-study.md, "Leaks that recycling hides, on a busy machine".
func TestStudyBusyLives(t *testing.T) {
	n := seriesPerKind(t, 300)
	minDetect := map[string]float64{"leak-120-busy-supervised": 0.90, "leak-120-busy-prefork": 0.95}
	for _, k := range busyKinds() {
		t.Run(k.Name, func(t *testing.T) {
			t.Parallel()
			r := runBusy(k, n, 4)
			t.Logf("%s: leak %.1f %%, coverage %.1f %%, detected %d/%d, masked %d (the lives' interval holds the truth in %d), verdicts %v",
				k.Name, 100*r.Rate(verdict.Leak), 100*r.Coverage(), r.Detected, r.Eligible, r.Masked, r.MaskedCovered, r.Verdicts)
			if raceBuild {
				return
			}
			if !k.Leak {
				if r.Rate(verdict.Leak) > 0.01 {
					t.Errorf("got %.1f %% leak verdicts; want ≤ 1 %%", 100*r.Rate(verdict.Leak))
				}
				return
			}
			if r.Eligible < 50 {
				t.Fatalf("got %d eligible leaks; the design needs lives that grow past their size", r.Eligible)
			}
			if got := r.Detection(); got < minDetect[k.Name] {
				t.Errorf("got %d of %d eligible leaks detected (%.1f %%); want ≥ %.0f %%", r.Detected, r.Eligible, 100*got, 100*minDetect[k.Name])
			}
			if r.MaskedCovered < r.Masked*9/10 {
				t.Errorf("the lives' interval held the truth in %d of %d leaks masked by recycling; want ≥ 90 %%", r.MaskedCovered, r.Masked)
			}
			if r.MaskedEligible < r.Detected*9/10 {
				t.Errorf("got %d of %d detected leaks reported masked by recycling; want ≥ 90 %%", r.MaskedEligible, r.Detected)
			}
		})
	}
}
