package study

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"

	"github.com/soakd/soakd/soak/verdict"
)

// Optional stopping (soakd run --until-decided): a run that looks at its
// soak again and again and stops at the first look that decides. Each
// look of a plan is an analysis of the soak so far; the run stops at the
// first that reads leak, stable or plateau, and that verdict is the
// run's. The errors to keep are the false leak on growth under the floor
// and the false stable (or plateau) on a leak over it, counted over
// every look a run takes.

// UntilPlan is a plan of looks: their soak seconds for a soak of at most
// maxSec, and whether each look spends its share of the error budget
// (verdict.Thresholds.Spent, Bonferroni over the plan's looks) or tests
// at the single analysis' level.
type UntilPlan struct {
	Name  string
	At    func(maxSec float64) []float64
	Spend bool
	// MinSec: no look before this many seconds of soak decides; Confirm:
	// a verdict stops the run once this many looks in a row read it (the
	// last look's verdict stands alone); 0 = 1.
	MinSec  float64
	Confirm int
	// LastShare, when set, is the last look's share of the budget, the
	// others sharing the rest evenly; 0 = every look the same.
	LastShare float64
}

// share is look k's share of the budget of a plan of n looks.
func (p UntilPlan) share(k, n int) float64 {
	switch {
	case p.LastShare <= 0 || n == 1:
		return 1 / float64(n)
	case k == n-1:
		return p.LastShare
	}
	return (1 - p.LastShare) / float64(n-1)
}

// Soakd is soakd's plan: the geometric schedule (verdict.NewSchedule:
// from 30 s of soak, each look ≥ 1.25× the one before), each look
// spending its share (half of the budget the last's), none deciding
// before verdict.MinDecideSeconds, and verdict.ConfirmLooks in a row to
// stop.
var Soakd = UntilPlan{Name: "geometric (soakd)", At: Geometric, Spend: true,
	MinSec: verdict.MinDecideSeconds, Confirm: verdict.ConfirmLooks, LastShare: verdict.LastLookShare}

// UntilPlans are the plans the study compares: soakd's; a look every
// minute and at every tenth of the most with the same rules; the
// geometric looks with one look deciding, spent and not spent (what
// repeated looks cost); and the single analysis at the most.
func UntilPlans() []UntilPlan {
	minute := func(maxSec float64) []float64 {
		var at []float64
		for t := 60.0; t < maxSec; t += 60 {
			at = append(at, t)
		}
		return append(at, maxSec)
	}
	tenth := func(maxSec float64) []float64 {
		at := make([]float64, 10)
		for k := range at {
			at[k] = maxSec * float64(k+1) / 10
		}
		return at
	}
	end := func(maxSec float64) []float64 { return []float64{maxSec} }
	return []UntilPlan{
		Soakd,
		{Name: "every minute", At: minute, Spend: true, MinSec: verdict.MinDecideSeconds, Confirm: verdict.ConfirmLooks},
		{Name: "every 10 %", At: tenth, Spend: true, MinSec: verdict.MinDecideSeconds, Confirm: verdict.ConfirmLooks},
		{Name: "geometric, 1 look, spent", At: Geometric, Spend: true},
		{Name: "geometric, 1 look", At: Geometric},
		{Name: "single analysis at most", At: end},
	}
}

// Geometric is soakd's schedule in soak seconds (verdict.NewSchedule).
func Geometric(maxSec float64) []float64 {
	s := verdict.NewSchedule(verdict.FirstLookSeconds/maxSec, 0)
	at := make([]float64, len(s.At))
	for k, p := range s.At {
		at[k] = p * maxSec
	}
	return at
}

// UntilRow is one plan on one design: how its runs ended.
type UntilRow struct {
	Plan   string
	Design SlowDesign
	// N runs, of which Leak ended leak, Stable stable or plateau, and
	// Undecided reached the most undecided.
	N, Leak, Stable, Undecided int
	// MedianSeconds is the median soak seconds at which the decided runs
	// stopped (0 when none did); MeanSeconds the mean soak of all the
	// runs, decided or not, at their stop; MeanLooks the looks a run
	// took.
	MedianSeconds, MeanSeconds, MeanLooks float64
}

// FalseLeak is the share called leak when the truth is under the floor
// (0 when it is over).
func (r UntilRow) FalseLeak() float64 {
	if r.Design.Leak > r.Design.HorizonFloor() {
		return 0
	}
	return float64(r.Leak) / float64(r.N)
}

// FalseStable is the share called stable or plateau when the truth is
// over the floor (0 when it is not).
func (r UntilRow) FalseStable() float64 {
	if r.Design.Leak <= r.Design.HorizonFloor() {
		return 0
	}
	return float64(r.Stable) / float64(r.N)
}

// RunUntil runs n series of design d (the SlowDesign noise, its SoakSec
// the most the run may take) under plan p, seeded by seed, spread over
// the machine's cores.
func RunUntil(d SlowDesign, p UntilPlan, n int, seed uint64) UntilRow {
	at := p.At(d.SoakSec)
	type end struct {
		verdict string
		sec     float64
		looks   int
	}
	ends := make([]end, n)
	each(n, func(i int) {
		rng := rand.New(rand.NewPCG(seed, uint64(i)*104729+uint64(d.Leak*1000+d.Rate+d.SoakSec)))
		s := d.Make(rng)
		v, k := untilDecided(s, at, p)
		ends[i] = end{v, at[min(k, len(at)-1)], k + 1}
	})
	r := UntilRow{Plan: p.Name, Design: d, N: n}
	var secs []float64
	looks := 0
	for _, e := range ends {
		looks += e.looks
		r.MeanSeconds += e.sec / float64(n)
		switch e.verdict {
		case verdict.Leak:
			r.Leak++
		case verdict.Stable, verdict.Plateau:
			r.Stable++
		default:
			r.Undecided++
			continue
		}
		secs = append(secs, e.sec)
	}
	if len(secs) > 0 {
		r.MedianSeconds = median(secs)
	}
	r.MeanLooks = float64(looks) / float64(n)
	return r
}

// untilDecided looks at s's soak at each of at (soak seconds) and returns
// the first decided verdict and its look's index, or the last look's
// verdict and index.
func untilDecided(s Series, at []float64, p UntilPlan) (string, int) {
	soakStart := s.Shape.WarmupSec + s.Shape.BaselineSec
	opt := s.Opt
	end := 0
	var v, prev string
	streak := 0
	for k, t := range at {
		if t < p.MinSec && k < len(at)-1 {
			continue
		}
		for end < len(s.Points) && s.Points[end].Seconds <= soakStart+t+1e-9 && s.Points[end].Phase != verdict.Cooldown {
			end++
		}
		opt.Thresholds = s.Opt.Thresholds.WithDefaults(opt.Unit)
		if p.Spend {
			opt.Thresholds = opt.Thresholds.Spent(p.share(k, len(at)))
		}
		v = verdict.AnalyzeResource(s.Points[:end], opt).Verdict
		if v == prev {
			streak++
		} else {
			prev, streak = v, 1
		}
		if v != verdict.Inconclusive && (streak >= max(p.Confirm, 1) || k == len(at)-1) {
			return v, k
		}
	}
	return v, len(at) - 1
}

// UntilDesigns are the optional-stopping study's designs at 100 req/s on
// issue 22's noise: no growth (the time to decide a clean soak), growth
// at 0.9× the horizon floor (false leaks) and leaks at 1.5× and 3× it
// (false stable; power), with at most 30 min and 2 h of soak.
func UntilDesigns() []SlowDesign {
	fl := SlowDesign{Rate: 100}.HorizonFloor()
	var ds []SlowDesign
	for _, sec := range []float64{1800, 7200} {
		for _, share := range []float64{0, 0.9, 1.5, 3} {
			ds = append(ds, SlowDesign{Leak: share * fl, Rate: 100, SoakSec: sec})
		}
	}
	return ds
}

// UntilTable runs every plan on every design, n runs each, and writes a
// row per pair.
func UntilTable(w io.Writer, plans []UntilPlan, designs []SlowDesign, n int, seed uint64) []UntilRow {
	var rows []UntilRow
	fmt.Fprintf(w, "%-26s %-26s %5s %14s %14s %10s %10s %10s %6s\n", "plan", "design", "runs", "leak", "stable/plateau", "undecided", "median", "mean stop", "looks")
	for _, d := range designs {
		for _, p := range plans {
			r := RunUntil(d, p, n, seed)
			rows = append(rows, r)
			name := fmt.Sprintf("%.3g B/req %s (%.1f×)", d.Leak, runLength(d.SoakSec), d.Leak/d.HorizonFloor())
			fmt.Fprintf(w, "%-26s %-26s %5d %14s %14s %10d %10s %10s %6.1f\n", p.Name, name, r.N,
				fmt.Sprintf("%d (%.1f %%)", r.Leak, 100*float64(r.Leak)/float64(r.N)),
				fmt.Sprintf("%d (%.1f %%)", r.Stable, 100*float64(r.Stable)/float64(r.N)),
				r.Undecided, minutes(r.MedianSeconds), minutes(r.MeanSeconds), r.MeanLooks)
		}
	}
	return rows
}

func minutes(sec float64) string {
	if sec <= 0 || math.IsNaN(sec) {
		return "–"
	}
	return fmt.Sprintf("%.1f min", sec/60)
}
