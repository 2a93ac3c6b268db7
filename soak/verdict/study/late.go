package study

import (
	"fmt"
	"io"
	"math/rand/v2"

	"github.com/soakd/soakd/soak/verdict"
)

// LateDesigns are leaks that start late (issue 41, item 2): 1.5× and 3×
// the horizon floor from 50 % and 75 % of a 2 h soak's requests, at 100
// and 1 000 req/s, on the slow designs' noise.
func LateDesigns() []SlowDesign {
	var ds []SlowDesign
	for _, rate := range SlowRates {
		fl := SlowDesign{Rate: rate}.HorizonFloor()
		for _, mult := range []float64{1.5, 3} {
			for _, from := range []float64{0.5, 0.75} {
				ds = append(ds, SlowDesign{Leak: mult * fl, Rate: rate, SoakSec: 7200, Start: from})
			}
		}
	}
	return ds
}

// LateFoundDesigns are the leaks that start late which issue 41, item
// 2 asks to find: 3×, 6× and 13× the horizon floor from 25 %, 50 % and
// 75 % of a 2 h soak's requests, at 100 and 1 000 req/s, on the slow
// designs' noise.
func LateFoundDesigns() []SlowDesign {
	var ds []SlowDesign
	for _, rate := range SlowRates {
		fl := SlowDesign{Rate: rate}.HorizonFloor()
		for _, mult := range []float64{3, 6, 13} {
			for _, from := range []float64{0.25, 0.5, 0.75} {
				ds = append(ds, SlowDesign{Leak: mult * fl, Rate: rate, SoakSec: 7200, Start: from})
			}
		}
	}
	return ds
}

// FlatRow is one trendless model's verdicts: how many of N runs read
// stable (the verdict's decisiveness) and leak (a false alarm).
type FlatRow struct {
	Name            string
	N, Stable, Leak int
}

// FlatStable runs the study's trendless series n times each (seed):
// every kind with no leak (Kinds: white, AR(1) wander, GC sawtooth,
// steps, saturating caches, restarts, recycled workers, flat fds, pool
// jumps, a spread that drifts), the slow designs' flat soaks of 30 min
// and 2 h at 100 and 1 000 req/s, and the interval study's noises
// (AR(1) of 30 s–8 h, long memory, heavy tails, a drifting spread) with
// no trend on its 30 min, 2 h and 8 h runs at 100 req/s (n/2 each).
// The share read stable is the cost of any rule that holds stable back.
func FlatStable(n int, seed uint64) []FlatRow {
	type job struct {
		name string
		runs int
		one  func(i int) verdict.Resource
	}
	var jobs []job
	for _, k := range Kinds() {
		if k.Leak {
			continue
		}
		jobs = append(jobs, job{k.Name, n, func(i int) verdict.Resource {
			s := k.Make(rand.New(rand.NewPCG(seed, uint64(i)*7919+uint64(len(k.Name)))))
			return verdict.AnalyzeResource(s.Points, s.Opt)
		}})
	}
	for _, rate := range SlowRates {
		for _, sec := range []float64{1800, 7200} {
			d := SlowDesign{Rate: rate, SoakSec: sec}
			jobs = append(jobs, job{d.Name(), n, func(i int) verdict.Resource {
				s := d.Make(rand.New(rand.NewPCG(seed, uint64(i)*104729+uint64(d.Leak*1000+d.Rate+d.SoakSec+d.CycleSec))))
				return verdict.AnalyzeResource(s.Points, s.Opt)
			}})
		}
	}
	for _, nz := range Noises() {
		for _, d := range Designs() {
			if d.Rate != 100 {
				continue
			}
			jobs = append(jobs, job{nz.Name + " " + d.String(), n / 2, func(i int) verdict.Resource {
				pts := IntervalSeries(rand.New(rand.NewPCG(seed, uint64(i))), nz, d, 0)
				return verdict.AnalyzeResource(pts, verdict.ResourceOptions{Name: "rss", Unit: "bytes"})
			}})
		}
	}
	rows := make([]FlatRow, len(jobs))
	each(len(jobs), func(j int) {
		r := FlatRow{Name: jobs[j].name, N: jobs[j].runs}
		for i := range r.N {
			switch jobs[j].one(i).Verdict {
			case verdict.Stable:
				r.Stable++
			case verdict.Leak:
				r.Leak++
			}
		}
		rows[j] = r
	})
	return rows
}

// WriteFlatStable prints FlatStable's rows and their total.
func WriteFlatStable(w io.Writer, rows []FlatRow) (stable, n int) {
	fmt.Fprintf(w, "%-32s %5s %6s %5s\n", "trendless model", "n", "stable", "leak")
	for _, r := range rows {
		fmt.Fprintf(w, "%-32s %5d %6d %5d\n", r.Name, r.N, r.Stable, r.Leak)
		stable, n = stable+r.Stable, n+r.N
	}
	fmt.Fprintf(w, "%-32s %5d %6d (%.2f %%)\n", "all", n, stable, 100*float64(stable)/float64(n))
	return stable, n
}
