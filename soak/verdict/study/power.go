package study

import (
	"math/rand/v2"

	"github.com/soakd/soakd/soak/verdict"
)

// PowerResult checks the "run ≥ N more requests" advice: of Advised
// inconclusive runs, Decided were decided (leak or stable) when run again
// with the advised requests added to the soak.
type PowerResult struct {
	Runs, Advised, Decided int
}

// PowerStudy draws n runs, half flat and half a leak of 2–6 times the
// horizon floor (0.26–2.6 B/request at these rates), on white noise of
// 0.5–4 MiB over 10–30 minute soaks, and for each that is inconclusive
// with advice, runs the same server (same level, leak and noise spread,
// fresh noise) again, longer by the advice. A truth within twice the
// floor is left out: the advice takes the estimate for the truth, and
// near the floor no run of any length decides in 80 % of runs
// (docs/verdict-study.md, "Decisions").
func PowerStudy(n int, seed uint64) PowerResult {
	var r PowerResult
	for k := range n {
		rng := rand.New(rand.NewPCG(seed, uint64(k)*15485863+7))
		sh := Shape{SoakSec: uniform(rng, 600, 1800), SampleSec: 2, Rate: logUniform(rng, 300, 3000), Drift: 1, WarmupSec: 30}
		floor := SlowDesign{Rate: sh.Rate}.HorizonFloor()
		leak := floor * uniform(rng, 2, 6)
		if rng.IntN(2) == 0 {
			leak = 0
		}
		sd, base := logUniform(rng, 0.5*mib, 4*mib), logUniform(rng, 20*mib, 200*mib)
		first := line(rng, sh, base, leak, sd)
		r.Runs++
		if first.Verdict != verdict.Inconclusive || first.SettleRequests <= 0 {
			continue
		}
		r.Advised++
		sh.SoakSec += first.SettleRequests / sh.Rate
		if again := line(rng, sh, base, leak, sd); again.Verdict == verdict.Leak || again.Verdict == verdict.Stable {
			r.Decided++
		}
	}
	return r
}

func line(rng *rand.Rand, sh Shape, base, leak, sd float64) verdict.Resource {
	pts := generate(sh, func(q, t float64, ph verdict.Phase) (float64, int) {
		return pages(base + leak*q + sd*rng.NormFloat64()), 0
	})
	return verdict.AnalyzeResource(pts, verdict.ResourceOptions{Name: "rss", Unit: "bytes"})
}
