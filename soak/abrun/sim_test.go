package abrun

import (
	"math"
	"math/rand/v2"

	"github.com/soakd/soakd/soak/compare"
	"github.com/soakd/soakd/soak/verdict"
)

// simBuild is one synthetic build: its true leak, CPU and latency, and
// the state of its memory.
type simBuild struct {
	leak    float64 // bytes per request
	cpu     float64 // relative CPU per request (1 = A's)
	lat     float64 // relative latency
	base    float64 // bytes
	heap    float64 // garbage since the last GC, bytes
	gcEvery float64 // bytes of garbage that trigger a GC
	alloc   float64 // garbage bytes per request
	wander  float64 // AR(1) state, bytes
	served  float64 // cumulative requests
}

// simWorld is the shared machine: a drift that moves CPU and latency of
// both builds alike, over the blocks.
type simWorld struct {
	r     *rand.Rand
	drift float64 // ln factor, AR(1)
	block int
	sec   float64
}

const (
	simBlock  = 2000 // requests per block
	simSample = 200  // requests between samples
)

func newSimBuild(r *rand.Rand, leak, cpu, lat float64) *simBuild {
	return &simBuild{leak: leak, cpu: cpu, lat: lat, base: 8<<20 + r.Float64()*(32<<20),
		gcEvery: 2<<20 + r.Float64()*(6<<20), alloc: 2000 + r.Float64()*6000}
}

// runBlock serves one block on b, adding its samples and block to t.
func (w *simWorld) runBlock(t *Tally, who Build, b *simBuild, warmReq float64) {
	r := w.r
	w.drift = 0.9*w.drift + 0.1*r.NormFloat64() // the machine drifts, for both
	f := math.Exp(w.drift + 0.3*math.Sin(float64(w.block)/7))
	// 8 ms a request (125 req/s): a run passes the transient rule's 10
	// minutes, which a build's own leak verdict needs (see heldBack), at
	// about 19 of its 40 pairs.
	secs := simBlock * 8e-3 * b.lat * f * math.Exp(0.03*r.NormFloat64())
	for q := simSample; q <= simBlock; q += simSample {
		b.served += simSample
		b.heap += simSample * b.alloc
		if b.heap > b.gcEvery {
			b.heap = r.Float64() * b.alloc * simSample
		}
		b.wander = 0.95*b.wander + (64<<10)*r.NormFloat64()
		v := b.base + b.leak*b.served + b.heap + b.wander + 4096*r.NormFloat64()
		ph := verdict.Soak
		if b.served <= warmReq {
			ph = verdict.Warmup
		}
		w.sec += secs * simSample / simBlock
		t.Add(who, ResourceRSS, verdict.Point{Requests: b.served, Seconds: w.sec, Value: math.Round(v/4096) * 4096, Incarnation: 1, Phase: ph})
		t.Add(who, ResourceFDs, verdict.Point{Requests: b.served, Seconds: w.sec, Value: 8, Incarnation: 1, Phase: ph})
	}
	p50 := 40e-6 * b.lat * f * math.Exp(0.04*r.NormFloat64())
	t.Blocks = append(t.Blocks, Block{Build: who, Requests: simBlock, Seconds: secs,
		CPU: simBlock * 30e-6 * b.cpu * f * math.Exp(0.03*r.NormFloat64()),
		P50: p50, P99: 3 * p50 * math.Exp(0.08*r.NormFloat64()), P999: 8 * p50 * math.Exp(0.15*r.NormFloat64())})
	w.block++
}

// simOutcome is one simulated A/B run: its verdicts at the stop, and the
// pairs it took.
type simOutcome struct {
	overall string
	rss     string
	pairs   int
	metrics map[string]compare.Metric
}

// simulate runs one sequential A/B soak of builds a and b: a look every
// lookEvery pairs from minPairs, at most maxPairs.
func simulate(seed uint64, a, b [3]float64, minPairs, lookEvery, maxPairs int) simOutcome {
	r := rand.New(rand.NewPCG(seed, 0xab))
	w := &simWorld{r: r}
	bs := [2]*simBuild{newSimBuild(r, a[0], a[1], a[2]), newSimBuild(r, b[0], b[1], b[2])}
	t := NewTally()
	j := NewJudge(compare.InterleavedMargins(), DefaultAlpha)
	var res compare.Result
	for i := 0; i < 2*maxPairs; i++ {
		who := Order(i)
		w.runBlock(t, who, bs[who], simBlock)
		pairs := (i + 1) / 2
		if i%2 == 0 || pairs < minPairs || (pairs-minPairs)%lookEvery != 0 && pairs != maxPairs {
			continue
		}
		if res = j.Look(t, pairs); Decided(res) {
			break
		}
	}
	return simOutcome{overall: res.Verdict, rss: res.Metrics["rss_per_request"].Verdict, pairs: len(t.Pairs()), metrics: res.Metrics}
}
