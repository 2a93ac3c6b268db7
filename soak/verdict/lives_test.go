package verdict

import (
	"math"
	"math/rand/v2"
	"testing"
)

// recycledLives returns n lives of a recycled worker pool over a soak
// starting at second 0: life i starts at 10·i s (all but the first are
// replacements) and is sampled every second for pts samples; its value is
// rise(k) at its k-th sample plus noise of sd (seeded by seed), and it
// serves 1 request a second.
func recycledLives(n, pts int, seed uint64, sd float64, rise func(k int) float64) ([][]Point, float64) {
	rng := rand.New(rand.NewPCG(seed, 7))
	var lives [][]Point
	last := 0.0
	for i := range n {
		var l []Point
		for k := range pts {
			sec := float64(10*i + k)
			v := 1e6 + rise(k) + sd*rng.NormFloat64()
			l = append(l, Point{Requests: sec, Seconds: sec, Value: v, Incarnation: 1, Phase: Soak})
			last = math.Max(last, sec)
		}
		lives = append(lives, l)
	}
	return lives, last
}

// startup is a life that grows 1000 a sample through its first third
// (pools, caches) and is flat after.
func startup(pts int) func(k int) float64 {
	return func(k int) float64 { return 1000 * float64(min(k, pts/3)) }
}

func TestFitLivesSkipsStartupThird(t *testing.T) {
	const pts = 30
	lives, reqs := recycledLives(8, pts, 1, 0, startup(pts))
	lf, ok := fitLives(lives, reqs, 0)
	if !ok {
		t.Fatalf("fitLives: ok = false with %d lives; want a fit", lf.lives)
	}
	if lf.perRequest != 0 || lf.hi > 0 {
		t.Errorf("perRequest = %g, interval [%g, %g]; want 0: each life is flat after its start-up third", lf.perRequest, lf.lo, lf.hi)
	}
}

// TestFitLivesIdleThenStartUp: a new prefork worker in a closed loop
// idles, exactly flat, until a connection comes to it (here 12 of its 30
// samples), then starts up (1000 a sample for 6 samples) and stays flat.
// Its start-up is not growth it carried.
func TestFitLivesIdleThenStartUp(t *testing.T) {
	const pts = 30
	lives, reqs := recycledLives(8, pts, 1, 0, func(k int) float64 { return 1000 * float64(min(max(k-12, 0), 6)) })
	lf, ok := fitLives(lives, reqs, 0)
	if !ok {
		t.Fatalf("fitLives: ok = false with %d lives; want a fit", lf.lives)
	}
	if lf.perRequest != 0 || lf.hi > 0 {
		t.Errorf("perRequest = %g, interval [%g, %g]; want 0: each life is flat after its idle stretch and its start-up", lf.perRequest, lf.lo, lf.hi)
	}
}

func TestFitLivesMinimumLives(t *testing.T) {
	const pts = 30
	grow := func(k int) float64 { return 100 * float64(k) }
	for _, tt := range []struct {
		n  int
		ok bool
	}{{4, false}, {5, true}} {
		lives, reqs := recycledLives(tt.n, pts, 2, 10, grow)
		lf, ok := fitLives(lives, reqs, 0)
		if ok != tt.ok || lf.lives != tt.n {
			t.Errorf("%d lives: ok = %v, lives = %d; want ok = %v (at least %d lives)", tt.n, ok, lf.lives, tt.ok, minLives)
		}
	}
}

// TestFitLivesOneSidedP checks that p is the one-sided tail of the
// bootstrap normal whose 95 % interval fitLives reports: growth is the
// only alternative, so p < 0.5 whenever the estimate is above zero.
func TestFitLivesOneSidedP(t *testing.T) {
	const pts = 30
	// Slight growth in much noise: z near 1, where doubling p matters.
	grow := func(k int) float64 { return 2 * float64(k) }
	for seed := uint64(1); seed <= 20; seed++ {
		lives, reqs := recycledLives(8, pts, seed, 200, grow)
		lf, ok := fitLives(lives, reqs, 0)
		if !ok || lf.hi <= lf.lo {
			t.Fatalf("seed %d: ok = %v, interval [%g, %g]; want a fit with a spread", seed, ok, lf.lo, lf.hi)
		}
		se := (lf.hi - lf.lo) / (2 * 1.96)
		want := 0.5 * math.Erfc(lf.perRequest/se/math.Sqrt2)
		if math.Abs(lf.p-want) > 1e-9 {
			t.Errorf("seed %d: p = %g; want %g, the one-sided tail of estimate %g with interval [%g, %g]", seed, lf.p, want, lf.perRequest, lf.lo, lf.hi)
		}
		if lf.perRequest > 0 && lf.p >= 0.5 {
			t.Errorf("seed %d: p = %g for a positive estimate %g; want < 0.5 (one-sided)", seed, lf.p, lf.perRequest)
		}
	}
}

// lurchingLives is a supervised child on a busy machine: a root that
// stays flat over the whole soak and n children that live 20 samples
// each, a second apart, while the load lurches (each second serves 100
// to 1000 requests at random, seeded). Each child starts at 896 KiB and
// leaks leak bytes per request it serves; it returns the lives and the
// soak's requests.
func lurchingLives(n int, leak float64, seed uint64) ([][]Point, float64) {
	rng := rand.New(rand.NewPCG(seed, 9))
	const life = 20
	root := []Point{}
	var lives [][]Point
	var q, grown float64
	for k := range n * life {
		if k%life == 0 {
			lives, grown = append(lives, nil), 0
		}
		served := 100 + 900*rng.Float64()
		q += served
		grown += leak * served
		sec := float64(k)
		root = append(root, Point{Requests: q, Seconds: sec, Value: 8 << 20, Incarnation: 1, Phase: Soak})
		lives[len(lives)-1] = append(lives[len(lives)-1], Point{Requests: q, Seconds: sec, Value: 896<<10 + grown, Incarnation: 1, Phase: Soak})
	}
	return append([][]Point{root}, lives...), q - root[0].Requests
}

// TestFitLivesAgainstRequests: a leak grows with the requests served, and
// when the load lurches (a busy machine) the lives' growth against time
// is no straight line: the lives' estimate must still be the leak.
func TestFitLivesAgainstRequests(t *testing.T) {
	const leak = 120.0
	for seed := uint64(1); seed <= 10; seed++ {
		lives, reqs := lurchingLives(6, leak, seed)
		lf, ok := fitLives(lives, reqs, 0)
		if !ok {
			t.Fatalf("seed %d: ok = false with %d lives; want a fit", seed, lf.lives)
		}
		// The first sample of each life is not carried (the life's
		// growth before it is unseen): at most 1/20 of the leak.
		if lf.perRequest < 0.93*leak || lf.perRequest > 1.001*leak {
			t.Errorf("seed %d: perRequest = %.1f B; want %.0f B less the first sample's share (≥ %.1f)", seed, lf.perRequest, leak, 0.93*leak)
		}
	}
}

// TestTypicalLifeLeavesOutTheRoot: a supervisor's root spans the soak
// and does not grow; its children each grow past their size. The soak
// starts and ends 12 s into a child's 20 s life, so it holds the root, 3
// whole lives and 2 cut short: the typical life is a whole child's, not
// the median of all six (which the root and the cut ones pull to 0.7 of
// it, under the rule's bar of its own size).
func TestTypicalLifeLeavesOutTheRoot(t *testing.T) {
	lives, _ := lurchingLives(5, 120, 3)
	var first, last float64
	for _, l := range lives {
		for i := range l {
			switch {
			case l[i].Seconds < 12:
				l[i].Phase = Warmup
			case l[i].Seconds > 87:
				l[i].Phase = Cooldown
			}
		}
	}
	for _, p := range lives[0] {
		if p.Phase == Soak {
			if first == 0 {
				first = p.Requests
			}
			last = p.Requests
		}
	}
	lf, ok := fitLives(lives, last-first, 12)
	if !ok {
		t.Fatalf("ok = false with %d lives; want a fit", lf.lives)
	}
	// 19 s of ~550 req/s at 120 B over a first soak sample near 960 KiB.
	if lf.grownShare < 1 {
		t.Errorf("grownShare = %.2f; want a whole child's (≥ 1), not the median with the root's 0 and the cut lives", lf.grownShare)
	}
	if lf.lifeSeconds != 19 {
		t.Errorf("lifeSeconds = %.0f; want a whole child's 19", lf.lifeSeconds)
	}
}

// poolLives simulates a worker pool under a steady load of 100 requests
// a second, sampled every second: workers processes at once, each
// replaced after serving maxReq requests by a new one that idles
// (exactly flat) for idle of the tree's requests before it takes its
// share; each grows leak per request it serves. Lives are born between
// samples (each second is cut into 10 steps), as real ones are.
func poolLives(workers int, maxReq, idle, leak float64) ([][]Point, float64) {
	type proc struct {
		idx          int
		served, wait float64
	}
	lives := [][]Point{nil}
	procs := make([]proc, workers)
	for i := range procs {
		lives = append(lives, nil)
		procs[i] = proc{idx: len(lives) - 1, served: maxReq * float64(i) / float64(workers)}
	}
	var q float64
	for step := 0; step <= 3000; step++ {
		const served = 10.0 // requests a step, 10 steps a second
		active := 0
		for _, p := range procs {
			if p.wait <= 0 {
				active++
			}
		}
		q += served
		for i := range procs {
			p := &procs[i]
			if p.wait > 0 {
				p.wait -= served
			} else {
				p.served += served / float64(active)
			}
			if p.served >= maxReq {
				lives = append(lives, nil)
				*p = proc{idx: len(lives) - 1, wait: idle}
			}
		}
		if step%10 != 0 {
			continue
		}
		sec := float64(step / 10)
		lives[0] = append(lives[0], Point{Requests: q, Seconds: sec, Value: 2e6, Incarnation: 1, Phase: Soak})
		for _, p := range procs {
			lives[p.idx] = append(lives[p.idx], Point{Requests: q, Seconds: sec, Value: 1e6 + leak*p.served, Incarnation: 1, Phase: Soak})
		}
	}
	return lives, q - 10
}

// TestFitLivesCoversEveryRequest: the growth the lives carried, over the
// requests the soak served, is the leak per request, also when lives are
// too short to fit (born and dead within 2–3 samples: given the fitted
// replaced lives' growth per request of their spans), when they are born
// and die between samples (half of the neighbouring intervals added), and
// when a new worker idles before it serves (its span starts where it
// began to serve). Before, the four designs read 0.43, 0.78, 1.48 and
// 1.25 of the truth (the short lives' growth left out; the lives' edges
// left out; an idle worker's slope carried over its idle requests); now
// 1.00, 1.00, 0.84 and 0.99. The third is held to ±20 %: while a worker
// idles the others serve more of the tree's requests, so a life's growth
// against them is not a line, and its slope, fitted after its start-up
// third, misses part of it.
func TestFitLivesCoversEveryRequest(t *testing.T) {
	for _, c := range []struct {
		name               string
		workers            int
		maxReq, idle, leak float64
		tol                float64
	}{
		{"supervised, lives of 3.5 samples", 1, 350, 0, 100, 0.1},
		{"supervised, lives of 4.5 samples", 1, 450, 0, 100, 0.1},
		{"prefork of 3, idle half a life", 3, 600, 900, 100, 0.2},
		{"prefork of 4, lives of 3–6 samples", 4, 150, 200, 100, 0.1},
	} {
		lives, reqs := poolLives(c.workers, c.maxReq, c.idle, c.leak)
		lf, ok := fitLives(lives, reqs, 0)
		if !ok {
			t.Errorf("%s: no fit (%d lives)", c.name, lf.lives)
			continue
		}
		if r := lf.perRequest / c.leak; math.Abs(r-1) > c.tol {
			t.Errorf("%s: %.1f per request (%.2f of the truth %.0f), %d lives fitted of %d; want within %.0f %%", c.name, lf.perRequest, r, c.leak, lf.lives, len(lives), 100*c.tol)
		}
	}
}
