package study

import (
	"os"
	"strconv"
	"testing"
)

// TestUntilTable writes the optional-stopping study's whole table
// (docs/verdict-study.md, "Until decided"): every plan on every design.
// It takes about 20 minutes on two cores, so it runs only when
// SOAKD_UNTIL_TABLE gives the runs per cell, e.g.
//
//	SOAKD_UNTIL_TABLE=200 go test -count=1 -run TestUntilTable -v -timeout 2h ./soak/verdict/study/
func TestUntilTable(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("SOAKD_UNTIL_TABLE"))
	if n <= 0 {
		t.Skip("set SOAKD_UNTIL_TABLE to the runs per cell to write the table")
	}
	UntilTable(os.Stdout, UntilPlans(), UntilDesigns(), n, 1)
}

// TestStudyUntilDecided: soakd's until-decided plan (Soakd: geometric
// looks from 30 s, each spending its share, none deciding before 5
// minutes, three in a row to stop) keeps, over all the looks a run
// takes, false leaks on growth at 0.9× the horizon floor and false stable
// (or plateau) on leaks 1.5× the floor at or under 1 %, over at most 30
// minutes and 2 hours of soak on issue 22's noise (300 runs a design,
// seed 1; docs/verdict-study.md, "Until decided").
func TestStudyUntilDecided(t *testing.T) {
	t.Parallel() // pure arithmetic on one goroutine: two run at once on two cores
	n := 300
	if raceBuild {
		n = 4 // the mechanics only
	}
	fl := SlowDesign{Rate: 100}.HorizonFloor()
	for _, d := range []SlowDesign{
		{Leak: 0.9 * fl, Rate: 100, SoakSec: 1800}, {Leak: 1.5 * fl, Rate: 100, SoakSec: 1800},
		{Leak: 0.9 * fl, Rate: 100, SoakSec: 7200}, {Leak: 1.5 * fl, Rate: 100, SoakSec: 7200},
	} {
		r := RunUntil(d, Soakd, n, 1)
		t.Logf("%s (%.1f× the floor): leak %d, stable or plateau %d, undecided %d of %d; %.1f looks a run",
			d.Name(), d.Leak/d.HorizonFloor(), r.Leak, r.Stable, r.Undecided, r.N, r.MeanLooks)
		if raceBuild {
			continue
		}
		if r.FalseLeak() > 0.01 {
			t.Errorf("%s: false leaks %d of %d; want ≤ 1 %%", d.Name(), r.Leak, r.N)
		}
		if r.FalseStable() > 0.01 {
			t.Errorf("%s: false stable %d of %d; want ≤ 1 %%", d.Name(), r.Stable, r.N)
		}
	}
}
