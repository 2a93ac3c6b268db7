// Package sweep runs a ladder of closed-loop concurrencies against a
// target, each level a short soak (runner.Run) with the kernel's view of
// the listener beside it, then finds the knee of the throughput, names
// its cause, fits the Universal Scalability Law and the memory and fds
// per connection, and proposes a soak at the knee's level under its
// throughput.
package sweep

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"time"

	"go.uber.org/zap"
	"golang.org/x/sys/unix"

	"github.com/soakd/soakd/probes"
	"github.com/soakd/soakd/soak/load"
	"github.com/soakd/soakd/soak/runner"
	"github.com/soakd/soakd/soak/urlx"
)

// DefaultLevels is the ladder of concurrencies.
var DefaultLevels = []int{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000}

// DefaultLevelDuration is how long each level is measured.
const DefaultLevelDuration = 30 * time.Second

// Options configure a sweep.
type Options struct {
	// Run is the base of every level's run: the target, the request, the
	// sampling and the thresholds. Its concurrency, rate, bounds,
	// baseline, warm-up and cool-down are set per level.
	Run    runner.Options
	Levels []int
	// Each level is measured for LevelDuration, or LevelRequests requests
	// when set, after a warm-up of LevelWarmup (0: a tenth of the level,
	// 300 ms to 3 s; negative: none).
	LevelDuration time.Duration
	LevelRequests uint64
	LevelWarmup   time.Duration
	// PastKnee climbs the whole ladder: no stop past a confirmed knee
	// (errors, the fd wall and soakd's own fd limit still stop it).
	PastKnee bool
	// Progress receives the table's lines as the levels end; nil = none.
	Progress io.Writer
}

// Report is a sweep's outcome.
type Report struct {
	URL           string        `json:"url"`
	Target        string        `json:"target,omitempty"`
	Levels        []Level       `json:"levels"`
	Knee          Knee          `json:"knee"`
	USL           USL           `json:"usl"`
	PerConnection PerConnection `json:"per_connection"`
	Suggestion    Suggestion    `json:"suggestion"`
	// Stopped says why the ladder ended before its last level; "" when
	// it ran them all.
	Stopped string `json:"stopped,omitempty"`
	// ClientFDLimit is soakd's own RLIMIT_NOFILE during the sweep, and
	// ClientFDNote how it was raised.
	ClientFDLimit uint64    `json:"client_fd_limit"`
	ClientFDNote  string    `json:"client_fd_note"`
	Started       time.Time `json:"started"`
	Ended         time.Time `json:"ended"`
}

// fdReserve is the fds soakd keeps for itself beside a level's
// connections: its sampler, logs, netlink and the target's files.
const fdReserve = 64

// Run climbs the ladder. It stops early past a confirmed knee once
// throughput fell (unless PastKnee), when a level's errors exceed Run.Health.MaxRate, when the
// target's fds reached their limit, or when the next level needs more
// fds than soakd may open. A cancelled ctx ends the sweep with the levels
// done so far.
func Run(ctx context.Context, o Options) (*Report, error) {
	o.setDefaults()
	rep := &Report{URL: o.Run.Load.Endpoints[0].URL, Started: time.Now()}
	rep.ClientFDLimit, rep.ClientFDNote = RaiseFDLimit()
	base, closeTarget, err := o.openOnce(ctx)
	if err != nil {
		return nil, err
	}
	defer closeTarget()
	rep.Target = base.Target.Describe(base.Run.Target)
	o.headProgress()
	for _, n := range o.Levels {
		if uint64(n+fdReserve) > rep.ClientFDLimit {
			rep.Stopped = fmt.Sprintf("%d clients need more fds than soakd's limit (%d)", n, rep.ClientFDLimit)
			break
		}
		lv, err := base.level(ctx, n)
		if ctx.Err() != nil {
			rep.Stopped = fmt.Sprintf("cancelled during the level of %d clients (%v)", n, context.Cause(ctx))
			break
		}
		if err != nil {
			return nil, fmt.Errorf("level %d: %w", n, err)
		}
		rep.Levels = append(rep.Levels, lv)
		o.progressRow(lv)
		if rep.Stopped = stopReason(rep.Levels, o.Run.Health.MaxRate, o.PastKnee); rep.Stopped != "" {
			break
		}
	}
	rep.analyse(o)
	rep.Ended = time.Now()
	return rep, nil
}

func (o *Options) setDefaults() {
	if len(o.Levels) == 0 {
		o.Levels = DefaultLevels
	}
	if o.LevelDuration <= 0 && o.LevelRequests == 0 {
		o.LevelDuration = DefaultLevelDuration
	}
	if o.Run.Health.MaxRate == 0 {
		o.Run.Health.MaxRate = 0.01
	}
	if o.Run.Log == nil {
		o.Run.Log = zap.NewNop()
	}
}

// analyse fits the ladder and explains it.
func (r *Report) analyse(o Options) {
	r.USL, r.PerConnection, r.Knee = fit(r.Levels)
	r.Suggestion = suggest(r.Levels, r.Knee, o.Run)
	r.Knee.Reason, r.Suggestion.Reason, r.Stopped = singular(r.Knee.Reason), singular(r.Suggestion.Reason), singular(r.Stopped)
}

var oneClients = regexp.MustCompile(`\b1 (client|thread)s\b`)

// singular words "1 clients" as "1 client", "1 threads" as "1 thread".
func singular(s string) string { return oneClients.ReplaceAllString(s, "1 $1") }

// fit fits the USL and the per-connection line to the levels and finds
// the knee: the one knee that the stop rule and the report both read.
func fit(ls []Level) (USL, PerConnection, Knee) {
	n, x := make([]float64, len(ls)), make([]float64, len(ls))
	for i, l := range ls {
		n[i], x[i] = float64(l.Concurrency), l.Throughput
	}
	u, pc := FitUSL(n, x), perConnection(ls)
	return u, pc, explain(ls, u, pc)
}

// stopReason says why the ladder should stop after its last level, or "".
// Past the knee it stops only once the knee is confirmed (a wall, or two
// levels past it that did not scale from it), so that one noisy level
// neither ends the ladder nor places the knee; pastKnee climbs on.
func stopReason(ls []Level, maxRate float64, pastKnee bool) string {
	l := ls[len(ls)-1]
	if l.Errors >= 3 && l.ErrorRate() > maxRate {
		return fmt.Sprintf("at %d clients %.2f %% of the requests failed, above the failing threshold (%.2g %%)", l.Concurrency, 100*l.ErrorRate(), 100*maxRate)
	}
	if _, what, ok := fdCeiling(l); ok {
		return fmt.Sprintf("at %d clients the target's fds reached %s", l.Concurrency, what)
	}
	if pastKnee {
		return ""
	}
	_, _, k := fit(ls)
	if !k.Confirmed || k.Concurrency == 0 || l.Concurrency <= k.Concurrency {
		return ""
	}
	best := 0.0
	for _, v := range ls {
		best = max(best, v.Throughput)
	}
	if l.Throughput < 0.9*best {
		return fmt.Sprintf("past the knee at %d clients (%s) the throughput fell to %.0f %% of its best at %d clients (--past-knee climbs on)", k.Concurrency, k.Cause, 100*l.Throughput/best, l.Concurrency)
	}
	return ""
}

// RaiseFDLimit raises soakd's soft RLIMIT_NOFILE to its hard limit and
// returns the limit in force, with a sentence saying what was done.
func RaiseFDLimit() (uint64, string) {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		return 1024, "soakd's fd limit is unknown (" + err.Error() + "); 1024 assumed"
	}
	if lim.Cur >= lim.Max {
		return lim.Cur, fmt.Sprintf("soakd's fd limit is %d, its hard limit", lim.Cur)
	}
	old := lim.Cur
	lim.Cur = lim.Max
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		return old, fmt.Sprintf("soakd's fd limit stays %d: raising it to %d failed (%v)", old, lim.Max, err)
	}
	return lim.Max, fmt.Sprintf("soakd raised its fd limit from %d to %d, its hard limit", old, lim.Max)
}

// base is what every level shares: the options with the target resolved
// once (a target soakd starts runs for the whole sweep).
type base struct {
	Options
	Target describer
	port   uint16
}

// describer names the target for the report.
type describer interface {
	Describe(probes.Spec) string
}

type specDescriber struct{ t *probes.Target }

func (d specDescriber) Describe(s probes.Spec) string {
	if d.t != nil {
		return d.t.Describe()
	}
	if n := s.Named(); n != "" {
		return n
	}
	return "the URL's listener"
}

// openOnce starts an --exec target for the whole sweep: every level then
// samples it by PID, so that it is started and stopped once.
func (o Options) openOnce(ctx context.Context) (*base, func(), error) {
	b := &base{Options: o, port: urlPort(o.Run.Load.Endpoints[0].URL)}
	if o.Run.Target.Exec == "" || o.Run.NoProbe {
		b.Target = specDescriber{}
		return b, func() {}, nil
	}
	spec := o.Run.Target
	var pid int
	user := spec.OnStart
	spec.OnStart = func(s probes.Started) {
		pid = s.PID
		if user != nil {
			user(s)
		}
	}
	t, err := probes.Open(ctx, spec, o.Run.Log)
	if err != nil {
		return nil, nil, err
	}
	b.Target = specDescriber{t}
	b.Run.Target = probes.Spec{PID: pid, URL: spec.URL, ProcRoot: spec.ProcRoot, CgroupRoot: spec.CgroupRoot}
	return b, func() {
		cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := t.Close(cctx); err != nil {
			o.Run.Log.Warn("stopping the target", zap.Error(err))
		}
	}, nil
}

// urlPort is the URL's port, the scheme's default when it names none.
func urlPort(raw string) uint16 {
	a, err := urlx.ParseAddr(raw)
	if err != nil {
		return 0
	}
	return a.Port
}

// warmup is a level's warm-up: a duration, or requests with
// LevelRequests.
func (b *base) warmup() (time.Duration, uint64) {
	switch {
	case b.LevelWarmup < 0:
		return 0, 0
	case b.LevelWarmup > 0:
		return b.LevelWarmup, 0
	case b.LevelRequests > 0:
		return 0, max(b.LevelRequests/10, 1)
	}
	return min(max(b.LevelDuration/10, minWarmup), 3*time.Second), 0
}

// minWarmup lets a short level open its connections (and the target
// accept them) before it is measured.
const minWarmup = 300 * time.Millisecond

// levelInterval is a level's sampling interval when the user set none:
// about 20 samples a level, 100 ms to 1 s. A run's own pacing (300
// samples) would sample a short level every 10 ms, and a level needs
// its highest fds and RSS and its CPU times, not a series to fit.
func levelInterval(d time.Duration) time.Duration {
	if d <= 0 {
		return time.Second
	}
	return min(max(d/20, 100*time.Millisecond), time.Second)
}

// level runs one rung: a soak at n clients with the kernel watched.
func (b *base) level(ctx context.Context, n int) (Level, error) {
	o := b.Run
	o.Load.Concurrency, o.Load.Rate = n, 0
	wd, wr := b.warmup()
	o.Load.Duration, o.Load.Requests = 0, 0
	if b.LevelRequests > 0 {
		o.Load.Requests = b.LevelRequests + wr
	} else {
		o.Load.Duration = b.LevelDuration + wd
	}
	o.Warmup = runner.Warmup{Duration: wd, Requests: wr, None: wd == 0 && wr == 0}
	o.Baseline, o.Cooldown, o.OutDir, o.Progress, o.Spool = -1, 0, "", nil, nil
	if o.Interval == 0 {
		o.Interval = levelInterval(b.LevelDuration)
	}
	lat := newLatencies(wd, wr)
	user := o.Load.OnResult
	o.Load.OnResult = func(r load.Result) {
		lat.observe(r)
		if user != nil {
			user(r)
		}
	}
	kw := &kernelWatch{port: b.port}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { defer close(done); kw.run(lat, max(wd, 100*time.Millisecond), stop) }()
	rep, err := runner.Run(ctx, o)
	close(stop)
	<-done
	if err != nil {
		return Level{}, err
	}
	lv := Level{Concurrency: n}
	lat.fill(&lv)
	kw.fill(&lv)
	fillTarget(&lv, rep)
	return lv, nil
}
