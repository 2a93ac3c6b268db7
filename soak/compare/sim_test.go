package compare_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/soakd/soakd/probes"
	"github.com/soakd/soakd/soak/compare"
	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/verdict"
)

const mib = 1 << 20

// server is a synthetic server's lasting traits: both runs of a pair
// share them, and differ by their noise and by the change under test.
type server struct {
	noise     string  // "white", "ar1" or "sawtooth"
	base, sd  float64 // RSS level and white noise, bytes
	tau, wsd  float64 // AR(1) wander of RSS: time constant (s) and spread
	cycle     float64 // sawtooth: GC period, seconds
	live      float64 // sawtooth: the heap that a GC leaves
	cost, p99 float64 // CPU seconds per request, p99 latency in seconds
	errRate   float64
}

// change is what the new build adds.
type change struct {
	leak         float64 // bytes per request
	cpu, latency float64 // shares: 0.1 = +10 %
	stall        float64 // more of the intervals stall (offsets.stall)
}

// offsets are one run's own offsets from its build's figures, drawn from
// a between-run spread (compare.RunSpread: log-normal): what a separate
// process of the same build, on the same machine, costs by itself. The
// CPU offset is the machine's cost per request (machine, which soakd's
// own CPU per request shares) times the target's own (the spread
// CPUControlled), so that together they spread as rs.CPU.
//
// stall is the share of the run's intervals that stall (their p99 and
// p99.9 5 to 50 times the rest's), drawn from 0 to 25 %: what a machine
// does to one run and not the other (the real runs of one build in
// docs/compare.md stalled in 0 to 23 % of their seconds).
type offsets struct{ p50, p99, p999, cpu, machine, stall float64 }

func drawOffsets(rng *rand.Rand, rs compare.RunSpread) offsets {
	if rs == (compare.RunSpread{}) {
		return offsets{1, 1, 1, 1, 1, 0} // and no draws: the other tests' streams stay as they were
	}
	m := math.Exp(math.Sqrt(math.Max(rs.CPU*rs.CPU-rs.CPUControlled*rs.CPUControlled, 0)) * rng.NormFloat64())
	u := rng.Float64()
	return offsets{math.Exp(rs.P50 * rng.NormFloat64()), math.Exp(rs.P99 * rng.NormFloat64()),
		math.Exp(rs.P999 * rng.NormFloat64()), m * math.Exp(rs.CPUControlled*rng.NormFloat64()), m, 0.25 * u * u}
}

// shape of each simulated run: a 1-hour soak sampled every 4 s at
// 1000 req/s after a 1-minute warm-up.
const (
	soakSec, sampleSec, warmSec, rate = 3600.0, 4.0, 60.0, 1000.0
	selfCost                          = 200e-6 // soakd's own CPU seconds per request
)

func newServer(rng *rand.Rand, noise string) server {
	s := server{noise: noise, base: (20 + 180*rng.Float64()) * mib, sd: (0.004 + 2*rng.Float64()) * mib,
		cost: 20e-6 + 80e-6*rng.Float64(), p99: 0.001 + 0.01*rng.Float64(), errRate: 0.001 * rng.Float64()}
	switch noise {
	case "ar1":
		s.tau, s.wsd = 60+540*rng.Float64(), (0.5+3.5*rng.Float64())*mib
	case "sawtooth":
		s.cycle, s.live, s.sd = 20+100*rng.Float64(), (5+45*rng.Float64())*mib, 0.25*mib*rng.Float64()
	}
	return s
}

// ar1 is autocorrelated wander with time constant tau samples and spread sd.
func ar1(rng *rand.Rand, tau, sd float64) func() float64 {
	phi := math.Exp(-1 / tau)
	level := sd * rng.NormFloat64()
	return func() float64 {
		level = phi*level + math.Sqrt(1-phi*phi)*sd*rng.NormFloat64()
		return level
	}
}

// records simulates one run of s with ch: RSS, CPU time counted in 10 ms
// ticks, the load's per-second latency and errors, each with its own
// noise, through warm-up and soak; and the load's latency blocks.
func records(rng *rand.Rand, s server, ch change, off offsets) ([]model.Record, []model.LatencyBlock) {
	wander := func() float64 { return 0 }
	if s.tau > 0 {
		wander = ar1(rng, s.tau/sampleSec, s.wsd)
	}
	load := ar1(rng, 15, 0.05) // the machine's drift: throughput
	slow := ar1(rng, 15, 0.08) // and latency
	burst := ar1(rng, 5, 0.5)  // errors come in bursts
	recs := make([]model.Record, 0, int(math.Ceil((warmSec+soakSec)/sampleSec))+1)
	var lat model.LatencyBlocks
	var req, errs, cpu, self, soakReq0 float64
	for t := 0.0; t <= warmSec+soakSec; t += sampleSec {
		ph := verdict.Soak
		if t < warmSec {
			ph = verdict.Warmup
		}
		n := rate * sampleSec * (1 + load())
		req += n
		if ph == verdict.Warmup {
			soakReq0 = req
		}
		errs += math.Max(0, math.Round(s.errRate*math.Exp(burst())*n+math.Sqrt(s.errRate*n)*rng.NormFloat64()))
		cpu += s.cost * off.cpu * (1 + ch.cpu) * n * (1 + 0.05*rng.NormFloat64())
		self += selfCost * off.machine * n * (1 + 0.05*rng.NormFloat64())
		q := math.Max(req-soakReq0, 0)
		rss := s.base + s.sd*rng.NormFloat64() + wander() + ch.leak*q
		if s.cycle > 0 {
			rss += s.live * math.Mod(t, s.cycle) / s.cycle
		}
		lat0 := s.p99 * (1 + ch.latency) * math.Exp(slow()+0.1*rng.NormFloat64())
		p50, p99, p999 := lat0/4*off.p50, lat0*off.p99, 2*lat0*off.p999
		if off.stall > 0 && rng.Float64() < off.stall+ch.stall {
			x := 5 + 45*rng.Float64()
			p99, p999 = x*p99, x*p999
		}
		recs = append(recs, model.Record{
			Sample: probes.Sample{Alive: true, Incarnation: 1, RSSValid: true, RSS: uint64(math.Round(rss/4096) * 4096), CPUUser: math.Floor(cpu*100) / 100,
				SelfUser: math.Floor(self*100) / 100},
			Elapsed: t, Phase: ph, Requests: uint64(req), Errors: uint64(errs), Rate: n / sampleSec, P50: p50, P99: p99,
		})
		lat.Add(model.LatencyBlock{Start: t - sampleSec, Seconds: sampleSec, Requests: uint64(n), P50: p50, P99: p99, P999: p999})
	}
	return recs, lat.Blocks()
}

// simulate runs one run of s with ch into a report, the way a run's
// report is made: the verdict's fit of RSS against requests.
//
// Each run draws its own offsets from spread (the zero value: none).
func simulate(rng *rand.Rand, s server, ch change, spread compare.RunSpread) *model.Report {
	recs, lat := records(rng, s, ch, drawOffsets(rng, spread))
	pts := make([]verdict.Point, len(recs))
	for i, r := range recs {
		pts[i] = verdict.Point{Requests: float64(r.Requests), Seconds: r.Elapsed, Value: float64(r.RSS), Incarnation: 1, Phase: r.Phase}
	}
	rss := verdict.AnalyzeResource(pts, verdict.ResourceOptions{Name: "rss", Unit: "bytes"})
	return &model.Report{Resources: map[string]verdict.Resource{"rss": rss}, Records: recs, LatencyBlocks: lat}
}

// tally counts the verdicts of pairs of runs, overall and per metric.
type tally struct {
	n       int
	overall map[string]int
	metric  map[string]map[string]int
}

func (t *tally) add(noise string, r compare.Result) {
	t.n++
	t.overall[r.Verdict]++
	t.overall[noise+":"+r.Verdict]++
	for name, m := range r.Metrics {
		if t.metric[name] == nil {
			t.metric[name] = map[string]int{}
		}
		t.metric[name][m.Verdict]++
	}
}

func (t *tally) rate(metric, v string) float64 {
	if metric == "" {
		return float64(t.overall[v]) / float64(t.n)
	}
	return float64(t.metric[metric][v]) / float64(t.n)
}

// study compares n pairs of runs of servers with each noise model, the
// new run carrying ch, each run with its own offsets drawn from the
// default between-run spread (compare.DefaultRunSpread) times truth, and
// judges them with the default margins and spread.
func study(n int, ch change, seed uint64, truth float64) *tally {
	spread := compare.DefaultRunSpread()
	t := &tally{overall: map[string]int{}, metric: map[string]map[string]int{}}
	for _, noise := range []string{"white", "ar1", "sawtooth"} {
		for k := range n {
			rng := rand.New(rand.NewPCG(seed, uint64(k)*7919+uint64(len(noise))))
			s := newServer(rng, noise)
			old := compare.FromReport(simulate(rng, s, change{}, spread.Scaled(truth)))
			cur := compare.FromReport(simulate(rng, s, ch, spread.Scaled(truth)))
			old.Concurrency, cur.Concurrency = 4, 4 // one load shape: CPU judged against soakd's own
			t.add(noise, compare.Compare(old, cur,
				compare.Options{Margins: compare.DefaultMargins(), RunSpread: spread, ControlCPU: true, Seed: uint64(k), Resamples: 300}))
		}
	}
	return t
}

func (t *tally) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "overall %v;", t.overall)
	for name, m := range t.metric {
		fmt.Fprintf(&b, " %s %v;", name, m)
	}
	return b.String()
}

// TestStudySameServer: two runs of one build, each with its own offsets
// drawn from the default between-run spread, never read regressed or
// improved (<= 1 % of pairs overall; runs that differ 1.5 times as much
// as the spread soakd assumes are reported, not asserted: they claim
// more, and --run-spread is how a user says so); CPU per request (judged against soakd's own), p50,
// p99 and p99.9 (the typical second's: each run stalls in up to a
// quarter of its intervals, which it leaves out), the leak and the error
// rate read same in >= 90 % (p99 in 56 and p99.9 in 60 of 60). The
// simulated load is a closed loop, whose throughput two separate runs do
// not resolve within −10 % (its spread, 0.08, is assumed): it and so the
// overall verdict read inconclusive.
func TestStudySameServer(t *testing.T) {
	for _, truth := range []float64{1, 1.5} {
		tl := study(pairs(), change{}, 1, truth)
		t.Logf("spread ×%v: %s", truth, tl)
		if truth != 1 {
			continue // reported: a machine whose runs differ more than the spread soakd assumes claims more (--run-spread)
		}
		for _, v := range []string{compare.Regressed, compare.Improved} {
			if r := tl.rate("", v); r > 0.01 {
				t.Errorf("the same server read %s in %.1f %% of pairs; want <= 1 %%", v, 100*r)
			}
		}
		if truth != 1 {
			continue
		}
		for _, m := range []string{compare.CPUPerRequest, compare.LatencyP50, compare.LatencyP99, compare.LatencyP999, "rss_per_request", compare.ErrorRate} {
			if r := tl.rate(m, compare.Same); r < 0.90 {
				t.Errorf("the same server read %s same in %.1f %% of pairs; want >= 90 %%", m, 100*r)
			}
		}
	}
}

// TestStudyChanges: a leak, a CPU cost or a latency added in the new run
// that clears its margin by what two separate runs differ by themselves
// reads regressed in at least 95 % of pairs, on that metric and overall:
// CPU per request against its 20 % margin at +40 %, p50 against its 25 %
// at +60 %, p99 against its 25 % at +80 %. A leak at the margin (16
// B/request against a 16 B margin), CPU +30 %, latency +50 % and p99 +40 %
// and +60 % are reported, not asserted (bench/compare-study.sh), and so are stalls
// in 10 % and 40 % more of the seconds: p99, the typical second's, reads
// regressed in 5 and 60 of 60 pairs (same in 36 and none), while
// stalled_seconds shows the change, unjudged.
func TestStudyChanges(t *testing.T) {
	for _, c := range []struct {
		name    string
		ch      change
		metric  string
		assert  bool
		implied bool // by a smaller change of the same kind
	}{
		{"leak 16 B/request", change{leak: 16}, "rss_per_request", false, false},
		{"leak 64 B/request", change{leak: 64}, "rss_per_request", true, false},
		{"leak 200 B/request", change{leak: 200}, "rss_per_request", true, true},
		{"CPU +30 %", change{cpu: 0.30}, compare.CPUPerRequest, false, false},
		{"CPU +40 %", change{cpu: 0.40}, compare.CPUPerRequest, true, false},
		{"CPU +60 %", change{cpu: 0.60}, compare.CPUPerRequest, true, true},
		{"latency +50 %", change{latency: 0.50}, compare.LatencyP50, false, false},
		{"latency +60 %", change{latency: 0.60}, compare.LatencyP50, true, false},
		{"latency p99 +40 %", change{latency: 0.4}, compare.LatencyP99, false, false},
		{"latency p99 +60 %", change{latency: 0.6}, compare.LatencyP99, false, false},
		{"latency p99 +80 %", change{latency: 0.8}, compare.LatencyP99, true, false},
		{"stalls in 10 % more of the seconds", change{stall: 0.1}, compare.LatencyP99, false, false},
		{"stalls in 40 % more of the seconds", change{stall: 0.4}, compare.LatencyP99, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if !c.assert && os.Getenv("SOAKD_COMPARE_PAIRS") == "" {
				t.Skip("reported, not asserted: bench/compare-study.sh runs it")
			}
			if raceBuild && c.implied {
				t.Skip("implied by the smaller change: skipped under the race detector, for time")
			}
			tl := study(pairs()/2, c.ch, 2, 1)
			t.Logf("%s: %s regressed %.0f %%, overall regressed %.0f %%; %s", c.name, c.metric,
				100*tl.rate(c.metric, compare.Regressed), 100*tl.rate("", compare.Regressed), tl)
			if !c.assert {
				return
			}
			if r := tl.rate(c.metric, compare.Regressed); r < 0.95 {
				t.Errorf("%s read regressed on %s in %.1f %% of pairs; want >= 95 %%", c.name, c.metric, 100*r)
			}
			if r := tl.rate("", compare.Regressed); r < 0.95 {
				t.Errorf("%s read regressed overall in %.1f %% of pairs; want >= 95 %%", c.name, 100*r)
			}
		})
	}
}
