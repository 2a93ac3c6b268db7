package abrun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"go.uber.org/zap"

	"github.com/soakd/soakd/soak/compare"
	"github.com/soakd/soakd/soak/load"
	"github.com/soakd/soakd/soak/verdict"
)

// Options configure an A/B run.
type Options struct {
	A, B  Target
	Paths []string // the URL paths loaded on each build; none = "/"
	// Load is the shape of every block's load (concurrency, keep-alive,
	// timeout, method, headers, checks); its endpoints, requests and
	// duration are set per block.
	Load load.Options
	// Method and Body are every request's; default GET with none.
	Method string
	Body   []byte
	// BlockRequests is the requests of one block; default 2000.
	BlockRequests uint64
	// Requests and Duration bound the run (both builds together); the
	// run stops at the first look past either. Zero Requests is no
	// bound; zero Duration is DefaultDuration.
	Requests uint64
	Duration time.Duration
	// WarmupPairs is the number of first pairs whose requests only warm
	// the builds up (default 1; negative: none); MinPairs the pairs of
	// the first look (default 4), LookEvery the pairs between looks
	// (default 2).
	WarmupPairs, MinPairs, LookEvery int
	// Margins are the judged differences' margins; the zero value is
	// compare.InterleavedMargins.
	Margins compare.Margins
	// MarginNames says how a reader sets each margin (see
	// compare.Options.MarginNames).
	MarginNames  map[string]string
	Alpha        float64       // default DefaultAlpha
	Interval     time.Duration // sampling within a block; default 50ms
	ReadyTimeout time.Duration // for a started command; default 10s
	Progress     io.Writer     // a line per look; nil = none
	Log          *zap.Logger
}

// DefaultDuration bounds a run given no bound.
const DefaultDuration = 10 * time.Minute

func (o *Options) setDefaults() {
	if len(o.Paths) == 0 {
		o.Paths = []string{"/"}
	}
	if o.BlockRequests == 0 {
		o.BlockRequests = 2000
	}
	if o.Duration <= 0 {
		o.Duration = DefaultDuration
	}
	switch {
	case o.WarmupPairs == 0:
		o.WarmupPairs = 1
	case o.WarmupPairs < 0:
		o.WarmupPairs = 0
	}
	if o.MinPairs <= 0 {
		o.MinPairs = 4
	}
	if o.LookEvery <= 0 {
		o.LookEvery = 2
	}
	if o.Alpha <= 0 {
		o.Alpha = DefaultAlpha
	}
	if o.Interval <= 0 {
		o.Interval = 50 * time.Millisecond
	}
	if o.Log == nil {
		o.Log = zap.NewNop()
	}
	if o.Margins == (compare.Margins{}) {
		o.Margins = compare.InterleavedMargins()
	}
}

// Result is an A/B run's outcome: the comparison at the last look, in
// soakd compare's form (its verdict, metrics and writers), and what the
// decision took.
type Result struct {
	compare.Result
	// DecidedAt is the pairs at the look that decided each decided
	// metric.
	DecidedAt map[string]int `json:"decided_at_pairs"`
	// Decided says the comparison was decided at the last look (see
	// Decided); otherwise the run reached its bound (StoppedBy) first and
	// what is undecided reads inconclusive.
	Decided   bool   `json:"decided"`
	StoppedBy string `json:"stopped_by"` // "decided", "requests", "duration", "interrupt", "a_died", "b_died"
	Blocks    int    `json:"blocks"`
	Pairs     int    `json:"pairs"`
	Looks     int    `json:"looks"`
	// Requests is both builds' requests at the stop, RequestsA and
	// RequestsB each's.
	Requests      uint64  `json:"requests"`
	RequestsA     uint64  `json:"requests_a"`
	RequestsB     uint64  `json:"requests_b"`
	BlockRequests uint64  `json:"block_requests"`
	Seconds       float64 `json:"seconds"`
	Alpha         float64 `json:"alpha"`
	Method        string  `json:"method"`
	// Died is the build that died mid-run (StoppedBy a_died or b_died):
	// its exit and its last output lines.
	Died *Death `json:"died,omitempty"`
}

// Method names the sequential test in the result.
const Method = "normal-mixture confidence sequence (mixture SPRT), Student-t widened, running intersection"

// run is an A/B run while it goes.
type run struct {
	o      *Options
	builds [2]*build
	tally  *Tally
	judge  *Judge
	start  time.Time
	res    Result
}

// Run starts (or finds) both builds, alternates blocks of load between
// them, looks after every LookEvery pairs and stops when the comparison
// is decided or at a bound. It stops the builds it started.
func Run(ctx context.Context, o Options) (*Result, error) {
	o.setDefaults()
	r := &run{o: &o, tally: NewTally(), judge: NewJudge(o.Margins, o.Alpha).WithMarginNames(o.MarginNames)}
	r.tally.Warmup = o.WarmupPairs
	for i, t := range []Target{o.A, o.B} {
		b, err := open(ctx, Build(i), t, o.Paths, o.ReadyTimeout, o.Log)
		if err != nil {
			return nil, err
		}
		defer b.close(o.Log)
		r.builds[i] = b
	}
	r.start = time.Now()
	r.res = Result{BlockRequests: o.BlockRequests, Alpha: o.Alpha, Method: Method}
	if err := r.loop(ctx); err != nil {
		return nil, err
	}
	r.res.Seconds = time.Since(r.start).Seconds()
	return &r.res, nil
}

// loop runs pairs of blocks until a look decides or a bound stops it.
func (r *run) loop(ctx context.Context) error {
	for i := 0; ; i++ {
		who := Order(i)
		blk, err := r.block(ctx, r.builds[who])
		if err != nil {
			return err
		}
		if ctx.Err() != nil { // a block cut short is no block
			return r.stop("interrupt")
		}
		r.tally.Blocks = append(r.tally.Blocks, blk)
		if b := r.builds[who]; !b.last.Alive {
			r.res.Died = b.death()
			return r.stop([...]string{"a_died", "b_died"}[who])
		}
		if i%2 == 0 {
			continue
		}
		total, _ := r.tally.Requests()
		pairs := len(r.tally.Pairs())
		switch {
		case r.o.Requests > 0 && total+2*r.o.BlockRequests > r.o.Requests:
			return r.stop("requests")
		case time.Since(r.start) >= r.o.Duration:
			return r.stop("duration")
		case pairs >= r.o.MinPairs && (pairs-r.o.MinPairs)%r.o.LookEvery == 0:
			if r.look(); Decided(r.res.Result) {
				return r.stop("decided")
			}
		}
	}
}

// look judges every metric on the tally and records it in the result.
func (r *run) look() {
	pairs := len(r.tally.Pairs())
	r.res.Result = r.judge.Look(r.tally, pairs)
	r.res.DecidedAt = r.judge.DecidedAt()
	r.res.Looks++
	r.res.Pairs, r.res.Blocks = pairs, len(r.tally.Blocks)
	total, by := r.tally.Requests()
	r.res.Requests, r.res.RequestsA, r.res.RequestsB = total, by[A], by[B]
	if w := r.o.Progress; w != nil {
		fmt.Fprintf(w, "look %d: %d pairs, %d requests: %s%s\n", r.res.Looks, pairs, total, r.res.Verdict, undecided(r.res.Result))
	}
}

// stop ends the run: a last look at what was done (unless the last pair
// just had one), with the reason.
func (r *run) stop(why string) error {
	if why != "decided" {
		r.look()
	}
	r.res.StoppedBy, r.res.Decided = why, Decided(r.res.Result)
	return nil
}

// block sends one block of load to b, sampling it as it goes, and
// returns its accounting.
func (r *run) block(ctx context.Context, b *build) (Block, error) {
	lo := r.o.Load
	lo.Endpoints = make([]load.Endpoint, len(b.urls))
	for i, u := range b.urls {
		lo.Endpoints[i] = load.Endpoint{URL: u, Method: r.o.Method, Body: r.o.Body}
	}
	lo.Requests, lo.Duration = r.o.BlockRequests, 0
	eng, err := load.New(lo)
	if err != nil {
		return Block{}, err
	}
	cpu0, wait0 := b.onCPU()
	done := make(chan *load.Summary, 1)
	go func() {
		sum, _ := eng.Run(ctx) // errs only when run twice
		done <- sum
	}()
	tick := time.NewTicker(r.o.Interval)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			r.sample(b, b.served+eng.Completed())
		case sum := <-done:
			if sum == nil {
				return Block{}, errors.New("load: no summary")
			}
			b.served += sum.Requests
			r.sample(b, b.served)
			l := sum.Latency
			cpu1, wait1 := b.onCPU()
			return Block{Build: b.name, Requests: sum.Requests, Errors: sum.Errors, Seconds: sum.DurationSeconds,
				CPU: cpu1 - cpu0, Wait: wait1 - wait0, P50: l.P50, P99: l.P99, P999: l.P999}, nil
		}
	}
}

// sample reads b's tree and records its resources at served requests.
func (r *run) sample(b *build, served uint64) {
	s := b.sampler.Sample()
	b.last = s
	if !s.Alive {
		return
	}
	ph := verdict.Soak
	if served <= uint64(r.o.WarmupPairs)*r.o.BlockRequests {
		ph = verdict.Warmup
	}
	p := verdict.Point{Requests: float64(served), Seconds: s.Time.Sub(r.start).Seconds(), Incarnation: s.Incarnation, Phase: ph}
	if s.RSSValid {
		p.Value = float64(s.RSS)
		r.tally.Add(b.name, ResourceRSS, p)
	}
	if s.FDsValid {
		p.Value = float64(s.FDs)
		r.tally.Add(b.name, ResourceFDs, p)
	}
}

// undecided lists the metrics still inconclusive, for a progress line.
func undecided(res compare.Result) string {
	s := ""
	for _, d := range defs {
		if m := res.Metrics[d.name]; m.Verdict == compare.Inconclusive {
			c := m.Cells()
			s += fmt.Sprintf(" %s %s [%s]", d.name, c.Difference, c.CI95)
		}
	}
	if s != "" {
		s = "; undecided:" + s
	}
	return s
}
