// Command verdict-study prints the simulation study behind soakd's
// verdicts: for every synthetic model, the share of leak verdicts, the
// 95 % interval's coverage of the true slope, and detection of leaks that
// matter. The study's tests (soak/verdict/study) assert the thresholds;
// this prints the whole table, e.g. for docs/verdict-study.md:
//
//	go run ./cmd/verdict-study -n 500
//
// With -intervals N it prints the interval study instead: per noise model
// and run design, coverage of the true slope, the interval's median
// half-width over 1.96 × the estimates' real SD, and leak verdicts;
// -boot adds how far another set of runs could read each figure:
//
//	go run ./cmd/verdict-study -intervals 1000 -rate 1000 -trendless -boot 400
//
// With -item8 N -seed A -seeds B it prints issue 22's item 8 at its
// edges over seeds A to B, N series a design and seed, with Wilson ranges,
// what a test that knew the noise exactly could do on those designs, and
// soakd's power over 2 h from 1.54× to 3× the floor against it:
//
//	go run ./cmd/verdict-study -item8 200 -seed 1 -seeds 6
//
// With -latebound N it prints the most any test could do, with the
// noise known, on the leaks that start late (issue 41, item 2): the
// start known, and a scan over knots whose level is set on N draws of
// the noise:
//
//	go run ./cmd/verdict-study -latebound 20000 -seed 1
//
// With -release N it prints issue 41's cool-down designs (leaks of 1.5–4×
// the floor with an idle baseline and a cool-down, kept or given back),
// N series a design:
//
//	go run ./cmd/verdict-study -release 200 -seed 1
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/soakd/soakd/soak/verdict"
	"github.com/soakd/soakd/soak/verdict/study"
)

func main() {
	n := flag.Int("n", 300, "series per model")
	seed := flag.Uint64("seed", 1, "random seed")
	live := flag.Int("live", 0, "also simulate the daemon's live looks on this many 8 h runs")
	slow := flag.Int("slow", 0, "print only the slow-leak power table and the sawtooth designs, with this many series per design")
	why := flag.Bool("why", false, "with -slow, also print why the leaks above the floor that were missed were missed")
	item8 := flag.Int("item8", 0, "print only issue 22's item 8 edges (1.54× the floor over 2 h; 0, 0.5× and 0.9× over 30 min and 2 h), with this many series per design and seed")
	seeds := flag.Uint64("seeds", 0, "with -item8, run the seeds from -seed to this one (each seed -item8 series a design; 0: -seed alone)")
	intervals := flag.Int("intervals", 0, "print only the interval study (coverage and width against real spread per noise and design), with this many runs a cell")
	rate := flag.Float64("rate", 0, "with -intervals, only the designs at this many requests per second (0: all)")
	boot := flag.Int("boot", 0, "with -intervals, give each coverage and width its 95 % bootstrap range over this many resamples, and mark the cells that meet issue 22's item 2")
	trendless := flag.Bool("trendless", false, "with -intervals, only the cells with no trend (the ones item 2's width is measured on)")
	release := flag.Int("release", 0, "print only issue 41's cool-down designs (leaks kept or given back after the load), with this many series per design")
	lateBound := flag.Int("latebound", 0, "print only the bound on leaks that start late (the noise known; the start known, and a scan over knots), its level set on this many draws of the noise")
	flag.Parse()
	if *n < 1 {
		fmt.Fprintln(os.Stderr, "verdict-study: -n must be at least 1")
		os.Exit(2)
	}
	if *slow > 0 {
		tab := study.PowerTable(*slow, *seed)
		study.WritePowerTable(os.Stdout, tab)
		fmt.Println()
		saw := study.WriteSawtooths(os.Stdout, *slow, *seed)
		if *why {
			fmt.Println("\nwhy leaks above the floor were not called leaks:")
			for _, row := range tab {
				for _, c := range row {
					study.WriteMisses(os.Stdout, c.Tallies)
				}
			}
			study.WriteMisses(os.Stdout, saw)
		}
		return
	}
	if *lateBound > 0 {
		if *lateBound < 100 {
			fmt.Fprintf(os.Stderr, "verdict-study: -latebound %d is too few draws to set a 1 %% level; give at least 100 (20000 for the docs' table)\n", *lateBound)
			os.Exit(2)
		}
		study.NewLateBound(*lateBound, *seed).Write(os.Stdout)
		return
	}
	if *release > 0 {
		var ts []study.ReleaseTally
		for _, d := range study.ReleaseDesigns() {
			ts = append(ts, study.RunRelease(d, *release, *seed))
		}
		study.WriteRelease(os.Stdout, ts)
		return
	}
	if *item8 > 0 {
		if *seeds == 0 {
			*seeds = *seed
		}
		if *seeds < *seed {
			fmt.Fprintf(os.Stderr, "verdict-study: -seeds %d is under -seed %d; give the last seed of the range\n", *seeds, *seed)
			os.Exit(2)
		}
		study.Item8Table(os.Stdout, *item8, *seed, *seeds)
		fmt.Println()
		study.Item8Bound(os.Stdout)
		fmt.Println()
		study.Item8Curve(os.Stdout, *item8, *seed, *seeds)
		return
	}
	if *intervals > 0 {
		var ds []study.Design
		for _, d := range study.Designs() {
			if *rate == 0 || d.Rate == *rate {
				ds = append(ds, d)
			}
		}
		leaks := []float64{0, 50}
		if *trendless {
			leaks = leaks[:1]
		}
		study.IntervalTable(os.Stdout, *intervals, *seed, leaks, ds, *boot)
		return
	}
	study.Table(os.Stdout, *n, *seed)
	if *live > 0 {
		fmt.Println()
		fmt.Println("live analysis every minute; alert after K consecutive leak looks, none before M minutes of soak:")
		fmt.Printf("%3s %4s %22s %24s %14s\n", "K", "M", "stable 8 h runs fired", "200 B/req fired ≤30 min", "median (min)")
		var gates []study.GateSpec
		for _, m := range []float64{1, 10, 15} {
			for _, k := range []int{1, 3, verdict.DefaultGateLooks} {
				gates = append(gates, study.GateSpec{Need: k, MinSoak: m * 60})
			}
		}
		for _, alpha := range []float64{verdict.MemoryThresholds.Alpha, verdict.MemoryThresholds.Alpha * verdict.LiveAlphaShare} {
			fmt.Printf("each look at level %g:\n", alpha)
			for _, r := range study.LiveStudy(*live, alpha, gates, *seed) {
				fmt.Printf("%3d %4.0f %15d/%-6d %17d/%-6d %14.0f\n", r.Need, r.MinSoak/60, r.EverFired, r.StableRuns, r.FiredIn30, r.LeakRuns, r.MedianMinutes)
			}
		}
	}
}
