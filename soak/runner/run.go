package runner

import (
	"context"
	"runtime"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/soakd/soakd/probes"
	"github.com/soakd/soakd/probes/remote"
	"github.com/soakd/soakd/soak/load"
	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/verdict"
)

// runner holds the state of one run while it goes.
type runner struct {
	o       *Options
	eng     *load.Engine
	sampler probes.Source // nil with NoProbe
	start   time.Time
	// spool takes every record as it is taken (see Spool); csv, when it
	// is not the spool, writes OutDir's samples.csv beside it.
	spool Spool
	csv   *csvSpool

	// remote is the remote source (also sampler) with Options.Remote;
	// fetchErr is its range query's failure, if any.
	remote   remote.Source
	fetchErr error

	wReq uint64
	wDur time.Duration

	mu      sync.Mutex // guards last and latency
	last    load.Interval
	latency model.LatencyBlocks

	pace *pacer
	tick *time.Ticker
	// prev is the record before, without its members: the run keeps no
	// series in memory.
	prev        *model.Record
	final       []model.Record // a remote source's own samples, which the analysis takes instead (fetchRemote)
	samples     int
	loadStarted bool
	loadStart   float64 // Elapsed when the load started
	loadDone    bool
	stopLoad    context.CancelFunc // stops the load early: the target died
	goneSince   time.Time          // when the target was first seen gone, during the load
	died        *time.Time         // goneSince, once the grace passed without it coming back
	tally       tally              // what completed while the target was gone
	stops       *stopWatch         // the spans in which the target was stopped
	unsampled   []string           // the endpoints the sampled tree does not serve
	collector   string             // the root's garbage-collected runtime, see collectorOf
	// servesLoad says the sampled tree serves every endpoint, so that each
	// connection of the load is one of its fds (model.Record.FDsNet).
	servesLoad bool
	stall      stallWatch
	mix        *mixer         // nil with one endpoint or a fixed mix
	where      *where         // nil: no mappings or sites are looked at
	live       *liveHeap      // nil: the target's live heap is not read
	jvm        *jvmHeap       // nil: no JVM's heap counters are read
	ups        *upstreamWatch // nil: no local tree is sampled
	until      *until         // nil unless Options.UntilDecided

	// memberNet is each process's fds net of its connections to soakd
	// at the previous sample (netMembers), by identity.
	memberNet map[memberID]uint64
}

// Run soaks the target: it resolves (or starts) the target, checks that the
// URL answers, runs the load while sampling, samples on through the
// cool-down, and returns the analysed report. When ctx is cancelled the load
// stops, the cool-down is skipped, and the report covers what was done.
func Run(ctx context.Context, o Options) (*model.Report, error) {
	o.setDefaults()
	if o.Remote.Enabled() && o.Interval == 0 {
		o.Interval = remoteDefaultInterval
	}
	r := &runner{o: &o}
	var err error
	if r.until, err = newUntil(&o); err != nil {
		return nil, err
	}
	r.wReq, r.wDur = o.warmupEnd()
	r.pace = newPacer(o.Interval, plan{requests: o.Load.Requests, duration: o.Load.Duration, warmReq: r.wReq, warmDur: r.wDur})
	r.wireLoad()
	eng, err := load.New(o.Load)
	if err != nil {
		return nil, err
	}
	r.eng = eng
	r.mix = newMixer(r.o, eng)
	r.stops = newStopWatch(o.Log, eng.Options().Timeout)
	var tgt *probes.Target
	if o.Remote.Enabled() && o.Target.Exec != "" { // started here, sampled through its metrics
		if tgt, err = probes.Open(ctx, o.Target, o.Log); err != nil {
			return nil, err
		}
		defer closeTarget(tgt, o.Log)
	}
	if o.Remote.Enabled() {
		if err := r.openRemote(ctx); err != nil {
			return nil, err
		}
	} else if !o.NoProbe {
		tgt, err = probes.Open(ctx, o.Target, o.Log)
		if err != nil {
			return nil, err
		}
		defer closeTarget(tgt, o.Log)
		so := o.Sampler
		so.LoadConns = true // each process's fds net of the load's connections, for the lives rule
		so.LoadEnds = eng.EachConn
		r.sampler = probes.NewSampler(tgt, so)
		r.ups = newUpstreamWatch(r.sampler, &o)
	}
	if err := preflight(ctx, o.Load); err != nil {
		return nil, err
	}
	if r.sampler != nil && tgt != nil {
		r.unsampled = unsampled(ctx, tgt, o.Load.Endpoints, o.Log)
		r.servesLoad = len(r.unsampled) == 0
	}
	r.where = r.openWhere(ctx)
	if m, ok := r.sampler.(mapper); ok && r.remote == nil {
		if pid, comm, ok := m.Root(); ok {
			r.collector = collectorOf(pid, comm)
		}
	}
	if o.Spool == nil || o.OutDir != "" {
		if r.csv, err = newCSVSpool(o.OutDir, len(eng.Options().Endpoints)); err != nil {
			return nil, err
		}
		defer func() {
			if err := r.csv.Close(); err != nil {
				o.Log.Warn("closing the samples files", zap.Error(err))
			}
		}()
	}
	r.spool = o.Spool
	if r.spool == nil {
		r.spool = r.csv
	}
	sum, loadEnd, err := r.loop(ctx)
	if err != nil {
		return nil, err
	}
	r.settleLoad(sum, tgt)
	r.settleUntil(sum)
	if r.remote != nil {
		r.fetchRemote(ctx)
	}
	rep, err := r.report(sum, tgt, loadEnd)
	if err != nil {
		return nil, err
	}
	r.noteStall(rep, loadEnd)
	r.where.fill(rep)
	r.live.splitSites(rep)
	r.fillUntil(rep)
	if o.OutDir != "" {
		if err := rep.WriteFiles(o.OutDir); err != nil {
			return rep, err
		}
		if err := rep.WriteEvidence(o.OutDir); err != nil {
			return rep, err
		}
		if err := writeLiveHeap(o.OutDir, r.liveSeries()); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

func closeTarget(t *probes.Target, log *zap.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := t.Close(ctx); err != nil {
		log.Warn("stopping the target", zap.Error(err))
	}
}

// wireLoad chains the run's own interval bookkeeping before the progress
// printer and any caller's hook.
func (r *runner) wireLoad() {
	o := r.o
	var progress func(load.Interval)
	if o.Progress != nil {
		progress = load.NewProgress(o.Progress, o.Load.Requests)
	}
	onResult := o.Load.OnResult
	o.Load.OnResult = func(res load.Result) {
		r.tally.observe(res)
		if onResult != nil {
			onResult(res)
		}
	}
	user := o.Load.OnInterval
	o.Load.OnInterval = func(iv load.Interval) {
		r.mu.Lock()
		r.last = iv
		r.latency.Add(model.LatencyBlock{Start: iv.Start.Sub(r.start).Seconds(), Seconds: iv.End.Sub(iv.Start).Seconds(),
			Requests: iv.Count, P50: iv.P50, P99: iv.P99, P999: iv.P999})
		if u := r.until; u != nil && iv.Count > 0 {
			u.latSum += iv.Mean * float64(iv.Count)
			u.latN += float64(iv.Count)
		}
		r.mu.Unlock()
		if progress != nil {
			progress(iv)
		}
		if user != nil {
			user(iv)
		}
	}
}

// loop samples the idle baseline, then runs the load and samples on the
// paced cadence until the load ends, then through the cool-down. It
// returns the load summary and when the load ended.
func (r *runner) loop(ctx context.Context) (*load.Summary, time.Time, error) {
	r.start = r.o.Now()
	r.tick = time.NewTicker(r.pace.cur)
	defer r.tick.Stop()
	if d := r.o.baseline(); d > 0 {
		r.o.Log.Info("baseline: sampling the idle target before the load", zap.Duration("baseline", d))
		r.idle(ctx, d, r.pace.baseline(d))
	}
	var sum *load.Summary
	var lerr error
	done := make(chan struct{})
	r.where.beforeLoad(r.eng.Completed)
	r.loadStarted = true
	r.loadStart = r.o.Now().Sub(r.start).Seconds()
	loadCtx, stopLoad := context.WithCancel(ctx)
	defer stopLoad()
	r.stopLoad = stopLoad
	r.jvm = r.openJVMHeap()
	if r.jvm != nil {
		r.mix.byCollections()
	}
	r.mix.start()
	r.live = r.openLiveHeap(ctx)
	defer r.live.wait() // a reading under way when the load fails
	go func() {
		defer close(done)
		sum, lerr = r.eng.Run(loadCtx)
	}()
	r.setInterval(r.pace.underLoad(0, 0, true)) // back from the baseline's interval
	r.take(ctx)
	for running := true; running; {
		select {
		case <-r.tick.C:
			r.take(ctx)
		case <-done:
			running = false
		}
	}
	if lerr != nil {
		return nil, time.Time{}, lerr
	}
	r.take(ctx) // the load's last state, still in the soak phase
	if r.prev != nil {
		r.live.atLoadEnd(ctx, r.mix.favoured(), *r.prev)
	}
	loadEnd := r.o.Now()
	r.loadDone = true
	r.where.atLoadEnd(ctx, r.eng.Completed)
	if r.sampler != nil && r.o.Cooldown > 0 && ctx.Err() == nil && r.died == nil {
		r.o.Log.Info("cool-down: load stopped, sampling goes on", zap.Duration("cooldown", r.o.Cooldown))
		r.idle(ctx, r.o.Cooldown, r.pace.idle(r.o.Cooldown))
	}
	return sum, loadEnd, nil
}

// idle samples an idle phase (the baseline or the cool-down) of length d,
// at least minPhaseSamples times when the interval is automatic, and once
// more at its end.
func (r *runner) idle(ctx context.Context, d, interval time.Duration) {
	r.setInterval(interval)
	timer := time.NewTimer(d)
	defer timer.Stop()
	r.take(ctx)
	for {
		select {
		case <-r.tick.C:
			r.take(ctx)
		case <-timer.C:
			r.take(ctx)
			return
		case <-ctx.Done():
			return
		}
	}
}

// setInterval moves the ticker to d.
func (r *runner) setInterval(d time.Duration) {
	r.pace.cur = d
	r.tick.Reset(d)
}

// take records one sample now, measures what it cost, and under load
// re-paces the ticker.
func (r *runner) take(ctx context.Context) {
	runtime.LockOSThread()
	cpu0 := threadCPU()
	rec := r.record()
	r.ups.observe(ctx, rec)
	if err := r.spool.Append(rec); err != nil {
		r.o.Log.Error("spooling a sample", zap.Error(err))
	}
	if r.csv != nil && Spool(r.csv) != r.spool {
		if err := r.csv.Append(rec); err != nil {
			r.o.Log.Error("writing samples.csv", zap.Error(err))
		}
	}
	if r.o.OnRecord != nil {
		r.o.OnRecord(rec)
	}
	r.stops.observe(rec, r.eng.Counters().Timeouts)
	r.pace.observe(threadCPU() - cpu0)
	runtime.UnlockOSThread()
	if r.loadStarted && !r.loadDone {
		r.watchDeath(rec)
		r.watchStall()
		d := r.pace.underLoad(rec.Elapsed-r.loadStart, rec.Requests, rec.Phase == verdict.Warmup)
		if r.pace.retick(d) {
			r.tick.Reset(d)
		}
		r.pace.ran()
		r.paceSmaps(rec)
		if r.jvm.observe(rec, r.mix.favoured()) {
			r.mix.collected()
		}
		if ended := r.mix.sampled(rec.EndpointRequests); ended >= 0 {
			r.live.boundary(ctx, ended, rec)
		}
		r.where.observe(rec, r.eng.Completed)
		r.observeUntil(rec)
	}
}

// paceSmaps sets, once, the PSS/USS cadence of a run bounded by requests
// only, from the throughput seen by the warm-up's end: the default 30 s
// left such runs with 0-3 PSS samples.
func (r *runner) paceSmaps(rec model.Record) {
	if !r.o.smapsByRequests {
		return
	}
	d, ok := r.pace.smaps(rec.Elapsed-r.loadStart, rec.Requests, rec.Phase == verdict.Warmup)
	s, can := r.sampler.(interface{ SetSmapsInterval(time.Duration) })
	if !ok || !can {
		return
	}
	s.SetSmapsInterval(d)
	r.o.smapsByRequests = false
	r.o.Log.Debug("PSS/USS paced to the throughput", zap.Duration("smaps_interval", d))
}

// watchDeath stops the load when the target has been gone for longer than
// the grace period; a target back within it (a restart: a new
// incarnation) goes on being soaked. The requests completed while it is
// gone are counted apart (tally), not as the soak's.
func (r *runner) watchDeath(rec model.Record) {
	if r.sampler == nil || r.died != nil {
		return
	}
	if rec.Alive {
		r.goneSince = time.Time{}
		r.tally.gone.Store(false)
		return
	}
	if r.goneSince.IsZero() {
		r.goneSince = rec.Time
		r.tally.gone.Store(true)
		if r.o.DeadGrace >= 0 {
			r.o.Log.Warn("the target is gone; the load stops unless it is back within the grace period",
				zap.Duration("grace", r.o.DeadGrace))
		}
		return
	}
	if r.o.DeadGrace >= 0 && rec.Time.Sub(r.goneSince) >= r.o.DeadGrace {
		died := r.goneSince
		r.died = &died
		r.o.Log.Error("the target died and is not back: stopping the load",
			zap.Time("died_at", died), zap.Duration("grace", r.o.DeadGrace))
		r.stopLoad()
	}
}

// record samples the target and joins the load's progress.
func (r *runner) record() model.Record {
	var s probes.Sample
	if r.sampler != nil {
		s = r.sampler.Sample()
	} else {
		s.Time = r.o.Now()
	}
	r.mu.Lock()
	iv := r.last
	r.mu.Unlock()
	rec := model.Record{
		Sample:  s,
		Elapsed: s.Time.Sub(r.start).Seconds(),
		P50:     iv.P50,
		P99:     iv.P99,
	}
	rec.Requests, rec.Errors = r.soakCounts()
	r.netFDs(&rec)
	r.netMembers(&rec)
	if len(r.o.Load.Endpoints) >= 2 {
		rec.EndpointRequests = r.eng.EndpointCompleted()
	}
	if prev := r.prev; prev != nil {
		if dt := rec.Elapsed - prev.Elapsed; dt > 0 && rec.Requests >= prev.Requests {
			rec.Rate = float64(rec.Requests-prev.Requests) / dt
		}
	}
	rec.Phase = r.phase(rec)
	prev := rec
	prev.Members, prev.Top = nil, nil
	r.prev = &prev
	r.samples++
	return rec
}

// netFDs sets rec's fds net of the load's open connections when the tree
// serves the load. Once the load has begun to close them at its end, the
// tree still holds an fd for each until it reads the close, which the
// load no longer counts: a sample then would read them as the target's,
// a spike of the load's size at the soak's end. Such a sample carries the
// previous one's net reading instead; the cool-down's samples read it
// again, the connections gone.
func (r *runner) netFDs(rec *model.Record) {
	if !r.servesLoad || !rec.FDsValid {
		return
	}
	rec.FDsNet, rec.FDsNetValid = rec.FDs-min(uint64(r.eng.OpenConns()), rec.FDs), true
	if r.loadStarted && !r.loadDone && r.eng.Closing() && r.prev != nil && r.prev.FDsNetValid {
		rec.FDsNet = r.prev.FDsNet
	}
}

// memberID is a process's identity.
type memberID struct {
	pid   int32
	start uint64
}

// netMembers does for each process what netFDs does for the tree: once
// the load has begun to close its connections at its end, a process
// holds an fd for each until it reads the close, and a connection soakd
// opened since the previous sample and closed before this one is not
// seen as soakd's (probes.Member.LoadConns), so such a sample's member
// carries its previous net reading: its LoadConns becomes its fds less
// that. A process first seen then keeps its count.
func (r *runner) netMembers(rec *model.Record) {
	r.memberNet = carryNet(rec.Members, r.memberNet, r.loadStarted && !r.loadDone && r.eng.Closing())
}

// carryNet sets, when closing, the LoadConns of each member that has a
// count and a net reading in prev so that its net is prev's, and returns
// every counted member's net reading.
func carryNet(members []probes.Member, prev map[memberID]uint64, closing bool) map[memberID]uint64 {
	next := make(map[memberID]uint64, len(members))
	for i := range members {
		m := &members[i]
		if !m.LoadConnsValid || m.NoFDs {
			continue
		}
		id := memberID{m.PID, m.Start}
		if net, ok := prev[id]; ok && closing && m.FDs >= net {
			m.LoadConns = m.FDs - net
		}
		next[id] = m.FDs - min(m.LoadConns, m.FDs)
	}
	return next
}

// phase places a record: in the warm-up until it reaches the first of the
// warm-up bounds that are set (both are only set by the default warm-up of
// a run bounded by both -n and -d, which stops at whichever comes first).
func (r *runner) phase(rec model.Record) verdict.Phase {
	reqLeft := r.wReq == 0 || rec.Requests < r.wReq
	durLeft := r.wDur == 0 || time.Duration((rec.Elapsed-r.loadStart)*float64(time.Second)) < r.wDur
	switch {
	case !r.loadStarted:
		return verdict.Baseline
	case r.loadDone:
		return verdict.Cooldown
	case (r.wReq > 0 || r.wDur > 0) && reqLeft && durLeft:
		return verdict.Warmup
	}
	return verdict.Soak
}
