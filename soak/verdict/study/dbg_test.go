package study

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/soakd/soakd/soak/verdict"
)

func TestDbgStudy(t *testing.T) {
	for _, k := range Kinds() {
		if k.Name != "leak-200-ar1-10min" {
			continue
		}
		for i := range 100 {
			rng := rand.New(rand.NewPCG(1, uint64(i)*7919+uint64(len(k.Name))))
			s := k.Make(rng)
			res := verdict.AnalyzeResource(s.Points, s.Opt)
			bad := (k.Leak && (!(res.CI95[0] <= s.Truth && s.Truth <= res.CI95[1]) || res.Verdict != verdict.Leak)) || (!k.Leak && res.Verdict == verdict.Leak)
			if bad {
				fmt.Printf("%s #%d soak %.0fs @%.2fs rate %.0f: %s ci %v noise %.0f KiB\n   %s\n", k.Name, i, s.Shape.SoakSec, s.Shape.SampleSec, s.Shape.Rate, res.Verdict, res.CI95, s.NoiseSD/1024, verdict.DebugFit(s.Points))
			}
		}
	}
}
