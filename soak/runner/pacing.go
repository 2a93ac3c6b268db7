package runner

import (
	"math"
	"time"

	"github.com/soakd/soakd/soak/model"
	"golang.org/x/sys/unix"
)

// Automatic sampling (Options.Interval zero) paces the samples to the work:
// a fast server that answers a run's requests in a few seconds needs
// samples every few milliseconds to get a verdict, an overnight soak needs
// one a second. The pacer aims at targetSoakSamples over the soak phase,
// never samples more often than the probe's own cost allows (probeBudget
// of one core), and never less often than maxAutoInterval.
const (
	targetSoakSamples = 300
	probeBudget       = 0.02 // share of one core that sampling may use
	// MinInterval is the shortest sampling interval, set or automatic.
	MinInterval = 10 * time.Millisecond
	// startInterval is the automatic interval before the plan and the
	// throughput tell a better one.
	startInterval   = 50 * time.Millisecond
	maxAutoInterval = time.Second
	// minPhaseSamples is the fewest samples an automatic interval takes
	// over the baseline and the cool-down.
	minPhaseSamples = 10
	// retickShare is the relative change of the interval that resets the
	// ticker; smaller changes keep the cadence regular.
	retickShare = 0.2
	// costWeight is the weight of the newest sample's cost in the moving
	// figure.
	costWeight = 0.1
)

// plan is what the pacer knows of a run before it starts: its stop
// conditions and the warm-up bounds (0 = none).
type plan struct {
	requests uint64
	duration time.Duration
	warmReq  uint64
	warmDur  time.Duration
}

// pacer chooses the sampling interval. It is used by the sampling
// goroutine only.
type pacer struct {
	auto  bool
	fixed time.Duration
	plan  plan

	cur     time.Duration // the interval the ticker runs at
	cost    float64       // moving figure of the CPU seconds per sample
	costSum float64       // CPU seconds spent sampling, all samples
	samples int
	minLoad time.Duration // shortest and longest interval under load
	maxLoad time.Duration
	loadEnd time.Duration // the interval when the load ended
	warmEnd float64       // seconds of load when the warm-up ended; -1 before
}

func newPacer(fixed time.Duration, p plan) *pacer {
	pc := &pacer{auto: fixed == 0, fixed: fixed, plan: p, warmEnd: -1}
	pc.cur = fixed
	if pc.auto {
		pc.cur = pc.clamp(pc.fromPlan(0, 0))
	}
	return pc
}

// observe adds one sample's CPU cost, in seconds.
func (p *pacer) observe(cost float64) {
	if p.samples == 0 {
		p.cost = cost
	} else {
		p.cost += costWeight * (cost - p.cost)
	}
	p.samples++
	p.costSum += cost
}

// floor is the shortest interval the probe's cost allows.
func (p *pacer) floor() time.Duration {
	return max(MinInterval, time.Duration(p.cost/probeBudget*float64(time.Second)))
}

func (p *pacer) clamp(d time.Duration) time.Duration {
	return min(max(d, p.floor()), maxAutoInterval)
}

// idle is the interval over an idle phase of length d: the paced
// interval, short enough for minPhaseSamples samples over d.
func (p *pacer) idle(d time.Duration) time.Duration {
	if !p.auto {
		return p.fixed
	}
	return p.clamp(min(p.cur, d/minPhaseSamples))
}

// baseline is the interval over the idle baseline of length d: twice
// minPhaseSamples samples (so that a late tick or two still leave
// minPhaseSamples), not the load's cadence. The analysis takes only the
// baseline's median from them (the level "released" is judged against);
// at a short run's cadence, every 20-30 ms, a 3 s baseline took about 125
// samples, 40 ms of soakd's CPU, for the same median.
func (p *pacer) baseline(d time.Duration) time.Duration {
	if !p.auto {
		return p.fixed
	}
	return p.clamp(d / (2 * minPhaseSamples))
}

// underLoad returns the interval for the rest of the load, from the plan,
// the seconds of load so far, the requests done and whether the sample
// was still in the warm-up.
func (p *pacer) underLoad(loadSec float64, done uint64, inWarmup bool) time.Duration {
	if !p.auto {
		return p.fixed
	}
	if !inWarmup && p.warmEnd < 0 {
		p.warmEnd = loadSec
	}
	return p.clamp(p.fromPlan(loadSec, done))
}

// ran notes the interval the ticker ran at under load.
func (p *pacer) ran() {
	if p.minLoad == 0 || p.cur < p.minLoad {
		p.minLoad = p.cur
	}
	p.maxLoad = max(p.maxLoad, p.cur)
	p.loadEnd = p.cur
}

// fromPlan is the expected length of the soak phase over the target
// number of samples. The load ends at -d or when the remaining -n
// requests are done at the throughput so far, whichever comes first; the
// warm-up likewise. Without a throughput yet, a run bounded by requests
// starts at startInterval at most.
func (p *pacer) fromPlan(loadSec float64, done uint64) time.Duration {
	x := 0.0
	if loadSec > 0 && done > 0 {
		x = float64(done) / loadSec
	}
	at := func(reqs uint64, dur time.Duration) float64 {
		t := math.Inf(1)
		if dur > 0 {
			t = dur.Seconds()
		}
		if reqs > 0 && x > 0 {
			t = min(t, loadSec+float64(reqs-min(done, reqs))/x)
		}
		return t
	}
	end := at(p.plan.requests, p.plan.duration)
	warm := p.warmEnd
	if warm < 0 {
		warm = 0
		if p.plan.warmReq > 0 || p.plan.warmDur > 0 {
			warm = at(p.plan.warmReq, p.plan.warmDur)
		}
	}
	switch {
	case math.IsInf(end, 1) && p.plan.requests > 0:
		return startInterval
	case math.IsInf(end, 1):
		return maxAutoInterval // no bound: a long run
	case math.IsInf(warm, 1):
		warm = 0 // the warm-up's length is not known yet
	}
	soak := max(end-min(warm, end), 0)
	d := time.Duration(soak / targetSoakSamples * float64(time.Second))
	if p.plan.requests > 0 && x == 0 {
		d = min(d, startInterval) // -n may end it long before -d
	}
	return d
}

// smapsMinLoad is the load a run bounded by requests runs before its
// throughput paces PSS/USS.
const smapsMinLoad = time.Second

// smaps is the PSS/USS cadence of a run bounded by requests only (-n),
// from the throughput so far: SmapsPace of the load still to run. ok is
// false until the warm-up ended and smapsMinLoad of load ran.
func (p *pacer) smaps(loadSec float64, done uint64, inWarmup bool) (d time.Duration, ok bool) {
	if inWarmup || loadSec < smapsMinLoad.Seconds() || done == 0 || p.plan.requests == 0 {
		return 0, false
	}
	left := float64(p.plan.requests-min(done, p.plan.requests)) / (float64(done) / loadSec)
	return SmapsPace(time.Duration(left * float64(time.Second))), true
}

// retick reports whether the ticker should move to d.
func (p *pacer) retick(d time.Duration) bool {
	if d == p.cur {
		return false
	}
	if math.Abs(float64(d-p.cur)) <= retickShare*float64(p.cur) {
		return false
	}
	p.cur = d
	return true
}

// sampling is the report's account of the pacing, over wall seconds.
func (p *pacer) sampling(wall float64) *model.Sampling {
	s := &model.Sampling{Auto: p.auto, IntervalSeconds: p.loadEnd.Seconds()}
	if p.loadEnd == 0 {
		s.IntervalSeconds = p.cur.Seconds()
	}
	if p.auto && p.minLoad > 0 {
		s.MinIntervalSeconds, s.MaxIntervalSeconds = p.minLoad.Seconds(), p.maxLoad.Seconds()
	}
	if p.samples > 0 {
		s.ProbeCostSeconds = p.costSum / float64(p.samples)
	}
	if wall > 0 {
		s.CPUShare = p.costSum / wall
	}
	return s
}

// threadCPU is the calling thread's CPU time in seconds; the caller locks
// its goroutine to the thread around the work it measures.
func threadCPU() float64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return float64(ts.Sec) + float64(ts.Nsec)/1e9
}
