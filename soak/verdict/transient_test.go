package verdict

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/soakd/soakd/soak/trend"
)

// goShortRun is the shape a Go server showed under soakd run -d 10s: idle
// at 7 MiB for 3 s, then its RSS climbing in a straight line, about 2.8
// KiB per request at 184 req/s, through a 9 s soak (its runtime kept the
// first collections' peak and stopped climbing at about 12 MiB, after the
// run). Sampled every 30 ms, with a page of jitter.
func goShortRun(seed uint64, soakSec, perRequest float64) []Point {
	rng := rand.New(rand.NewPCG(seed, 0x60))
	const base, rate, step = 7 * mib, 184.0, 0.03
	var pts []Point
	var req float64
	for t := 0.0; t <= 4+soakSec; t += step {
		p := Point{Seconds: t, Phase: Baseline}
		switch {
		case t >= 4:
			p.Phase = Soak
		case t >= 3:
			p.Phase = Warmup
		}
		if p.Phase != Baseline {
			req += rate * step
		}
		p.Requests = req
		p.Value = pages(base + perRequest*req + 4096*rng.NormFloat64())
		pts = append(pts, p)
	}
	return pts
}

// TestShortSoakGrowthUnderItsOwnSizeIsNotALeak: a soak shorter than the
// transient threshold whose growth stays under the level at the load's
// start cannot tell a runtime's warm-up from a leak, and says so, with
// the soak or the growth that would decide it.
func TestShortSoakGrowthUnderItsOwnSizeIsNotALeak(t *testing.T) {
	for seed := range uint64(10) {
		res := AnalyzeResource(goShortRun(seed, 9, 2800), rss)
		if res.Verdict != Inconclusive || !strings.Contains(res.Reason, "not yet twice its") {
			t.Fatalf("seed %d: got %s (%s); want inconclusive, growth under its own size", seed, res.Verdict, res.Reason)
		}
		if res.SettleRequests <= 0 {
			t.Errorf("seed %d: no advice on how much longer to run: %+v", seed, res)
		}
		if math.Abs(res.PerRequest-2800) > 280 {
			t.Errorf("seed %d: got %.0f B/request; want the slope still reported, 2800 ± 10 %%", seed, res.PerRequest)
		}
		if seed == 0 {
			t.Logf("short Go run: %s; %s", res.Reason, res.Settle)
		}
	}
}

// TestShortSoakGrowthPastItsOwnSizeIsALeak: the same short soak is a leak
// once the growth passes the starting level (no sizing doubles a
// process), and so is the same growth rate over a soak past the
// threshold.
func TestShortSoakGrowthPastItsOwnSizeIsALeak(t *testing.T) {
	for seed := range uint64(10) {
		if res := AnalyzeResource(goShortRun(seed, 9, 6000), rss); res.Verdict != Leak {
			t.Errorf("seed %d: 6000 B/request over 9 s (past 7 MiB): got %s (%s); want leak", seed, res.Verdict, res.Reason)
		}
		short := rss
		short.Thresholds.Transient = 5
		if res := AnalyzeResource(goShortRun(seed, 9, 2800), short); res.Verdict != Leak {
			t.Errorf("seed %d: 9 s soak, transient 5 s: got %s (%s); want leak", seed, res.Verdict, res.Reason)
		}
	}
}

// goAnonRun is the anonymous part (PSS's Pss_Anon) of a flat Go server
// under soakd run -d 2m --rate 10: 1.3 MiB at the load's start in a
// process whose RSS was 8.2 MiB, climbing in a straight line by perRequest
// (2.4 KiB for the real one: its heap sized to the load until its first
// collection at about 170 s, then flat) over a soak of soakSec at 10
// req/s, read every 4 s (smaps) to the page.
func goAnonRun(soakSec, perRequest float64) []Point {
	const base, rate, step = 1.3 * mib, 10.0, 4.0
	pts := []Point{{Seconds: 0, Phase: Baseline, Value: pages(base)}}
	for t := step; t <= 12+soakSec; t += step {
		p := Point{Seconds: t, Phase: Soak, Requests: rate * t}
		if t < 12 {
			p.Phase = Warmup
		}
		p.Value = pages(base + perRequest*p.Requests)
		pts = append(pts, p)
	}
	return pts
}

// TestShortSoakOfAPartIsJudgedAgainstTheProcess: the transient rule asks
// a part of a process's memory (PSS's anonymous pages) to grow past the
// process's size at the load's start, its RSS, as it asks the RSS: the
// part of a flat Go server that starts at 1.3 MiB in an 8.2 MiB process
// trebled over a 2-minute soak at 10 req/s, and read as a leak judged by
// its own level (issue 40; docs/time-to-clean.md), while its RSS, the
// same pages, was held. Past the process's size, it is a leak again.
func TestShortSoakOfAPartIsJudgedAgainstTheProcess(t *testing.T) {
	pss := ResourceOptions{Name: "pss", Unit: "bytes"}
	if res := AnalyzeResource(goAnonRun(108, 2400), pss); res.Verdict != Leak {
		t.Fatalf("the premise: judged by its own level, got %s (%s); want leak", res.Verdict, res.Reason)
	}
	pss.Size = 8.2 * mib
	res := AnalyzeResource(goAnonRun(108, 2400), pss)
	if res.Verdict != Inconclusive || !strings.Contains(res.Reason, "plus the process tree's size (its RSS's 8.2 MiB)") {
		t.Fatalf("got %s (%s); want inconclusive, growth under the process's size", res.Verdict, res.Reason)
	}
	if !strings.Contains(res.Settle, "grows by more than the process tree's size") || res.SettleRequests <= 0 {
		t.Errorf("settle %q (%v requests); want the soak or the growth that decides it", res.Settle, res.SettleRequests)
	}
	t.Logf("%s; %s", res.Reason, res.Settle)
	// 8 KiB a request adds 9.4 MiB over the soak's 1 200 requests: past
	// 1.3 + 8.2 MiB, which no sizing does.
	if res := AnalyzeResource(goAnonRun(108, 8192), pss); res.Verdict != Leak {
		t.Errorf("8 KiB/request past the process's size: got %s (%s); want leak", res.Verdict, res.Reason)
	}
	// A size under the part's own level leaves its own level the bar.
	pss.Size = 1 * mib
	if res := AnalyzeResource(goAnonRun(108, 2400), pss); res.Verdict != Leak {
		t.Errorf("size under the part's level: got %s (%s); want leak, judged by its own level", res.Verdict, res.Reason)
	}
}

func TestSignP(t *testing.T) {
	for _, c := range []struct {
		k, n int
		want float64
	}{{10, 10, 1.0 / 1024}, {0, 4, 1}, {3, 4, 5.0 / 16}, {11, 12, 13.0 / 4096}} {
		if got := signP(c.k, c.n); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("signP(%d, %d) = %g; want %g", c.k, c.n, got, c.want)
		}
	}
}

// TestJumpsAllUpAreGrowth: a staircase of a dozen jumps up (a JVM
// expanding its heap) counts as jumps all up, and is a leak; a pool that
// jumps up and down as often is not. A real JVM's irregular staircase,
// where the AR(1) correction alone reads "too noisy", is in
// testdata/verdicts (cmd/soakd's TestAnalyzeRealRuns).
func TestJumpsAllUpAreGrowth(t *testing.T) {
	stairs := func(seed uint64, updown bool) []Point {
		rng := rand.New(rand.NewPCG(seed, 0x5a))
		var pts []Point
		level, k, req := 200*mib, 2, 0.0
		for i := range 400 {
			p := Point{Seconds: float64(i) * 0.2, Phase: Soak}
			if i < 40 {
				p.Phase = Warmup
			}
			req += 3000
			if i%25 == 12 {
				if !updown {
					level += uniform(rng, 70, 100) * mib
				} else if k == 4 || (k > 0 && rng.IntN(2) == 0) {
					k-- // a pool of 0–4 chunks of 80 MiB, moving one at a time
				} else {
					k++
				}
			}
			v := level
			if updown {
				v = 200*mib + float64(k)*80*mib
			}
			p.Requests, p.Value = req, pages(v+4096*rng.NormFloat64())
			pts = append(pts, p)
		}
		return pts
	}
	for seed := range uint64(10) {
		s := &series{}
		for _, p := range stairs(seed, false) {
			if p.Phase == Soak {
				s.x, s.y, s.sec = append(s.x, p.Requests), append(s.y, p.Value), append(s.sec, p.Seconds)
			}
		}
		ups, downs, _, _ := s.jumps(4096)
		if ups < minJumps || downs != 0 {
			t.Fatalf("seed %d: the staircase has %d jumps up and %d down; want ≥ %d up, none down", seed, ups, downs, minJumps)
		}
		if res := AnalyzeResource(stairs(seed, false), rss); res.Verdict != Leak {
			t.Errorf("seed %d: a staircase of jumps all up: got %s (%s); want leak", seed, res.Verdict, res.Reason)
		}
		if res := AnalyzeResource(stairs(seed, true), rss); res.Verdict == Leak {
			t.Errorf("seed %d: a pool jumping up and down: got leak (%s)", seed, res.Reason)
		}
	}
}

// TestRobustlySlower: a least-squares hinge bends where two stray points
// sit at the end of a straight series (connections closing as the load
// stops take fds with them); the Theil–Sen slopes on each side of the knot
// do not, and a series that does slow is slower by them too.
func TestRobustlySlower(t *testing.T) {
	var x, straight, slowing []float64
	for i := range 40 {
		x = append(x, float64(i)*200)
		straight = append(straight, 20+2*float64(i))
		slowing = append(slowing, 20+2*math.Min(float64(i), 25)+0.5*math.Max(float64(i)-25, 0))
	}
	straight[38] -= 8
	straight[39] -= 8
	b := func(y []float64) trend.Binned { return trend.Binned{X: x, Y: y} }
	if robustlySlower(b(straight), 30) {
		t.Errorf("a straight series with two low points at its end reads slower after point 30")
	}
	if !robustlySlower(b(slowing), 25) {
		t.Errorf("a series whose slope falls to a quarter at point 25 does not read slower")
	}
}

// BenchmarkLivesLongLife: one process over a whole run of 40 000 samples
// (a single-process target: its one life is the run), and five helpers
// started near its end. Theil–Sen over every pair of its samples took 5
// GB and minutes; its bins' medians take a few milliseconds.
func BenchmarkLivesLongLife(b *testing.B) {
	lives := make([][]Point, 6)
	for i := range 40000 {
		p := Point{Seconds: float64(i) * 0.02, Requests: float64(i) * 10, Phase: Soak, Value: 8*mib + float64(i)*100}
		lives[0] = append(lives[0], p)
		for k := 1; k < len(lives); k++ {
			if i >= 39000+100*k {
				lives[k] = append(lives[k], p)
			}
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := fitLives(lives, 400000, 0); !ok {
			b.Fatal("no fit")
		}
	}
}
