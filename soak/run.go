package soak

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/soakd/soakd/probes"
	"github.com/soakd/soakd/probes/remote"
	"github.com/soakd/soakd/soak/dialaddr"
	"github.com/soakd/soakd/soak/load"
	"github.com/soakd/soakd/soak/verdict"
)

// Record is one sample of a run: the target's process tree, joined with the
// load's progress at the moment it was taken.
type Record struct {
	probes.Sample
	// Elapsed is the time since the run started: since the first sample
	// of the baseline, or since the load started when there is none.
	Elapsed  float64       `json:"elapsed_seconds"`
	Phase    verdict.Phase `json:"phase"`
	Requests uint64        `json:"requests"` // cumulative completed requests
	Errors   uint64        `json:"errors"`
	// Rate is the throughput since the previous sample, requests per
	// second. P50 and P99 are the latency, in seconds, of the load's last
	// progress interval (1 s by default), which may span several samples.
	Rate float64 `json:"rate_rps"`
	P50  float64 `json:"p50_seconds"`
	P99  float64 `json:"p99_seconds"`
}

// runner holds the state of one run while it goes.
type runner struct {
	o       *Options
	eng     *load.Engine
	sampler probes.Source // nil with NoProbe
	start   time.Time
	csv     *csvWriter // nil without OutDir

	// remote is the remote source (also sampler) with Options.Remote;
	// fetchErr is its range query's failure, if any.
	remote   remote.Source
	fetchErr error

	wReq uint64
	wDur time.Duration

	mu   sync.Mutex // guards last
	last load.Interval

	pace        *pacer
	tick        *time.Ticker
	recs        []Record
	loadStarted bool
	loadStart   float64 // Elapsed when the load started
	loadDone    bool
}

// Run soaks the target: it resolves (or starts) the target, checks that the
// URL answers, runs the load while sampling, samples on through the
// cool-down, and returns the analysed report. When ctx is cancelled the load
// stops, the cool-down is skipped, and the report covers what was done.
func Run(ctx context.Context, o Options) (*Report, error) {
	if err := o.setDefaults(); err != nil {
		return nil, err
	}
	if o.Remote.Enabled() && o.Interval == 0 {
		o.Interval = remoteDefaultInterval
	}
	r := &runner{o: &o}
	r.wReq, r.wDur = o.warmupEnd()
	r.pace = newPacer(o.Interval, plan{requests: o.Load.Requests, duration: o.Load.Duration, warmReq: r.wReq, warmDur: r.wDur})
	r.wireLoad()
	eng, err := load.New(o.Load)
	if err != nil {
		return nil, err
	}
	r.eng = eng
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
		r.sampler = probes.NewSampler(tgt, o.Sampler)
	}
	if err := preflight(ctx, o.Load.Endpoints); err != nil {
		return nil, err
	}
	if o.OutDir != "" {
		if r.csv, err = createCSV(filepath.Join(o.OutDir, "samples.csv")); err != nil {
			return nil, err
		}
		defer r.csv.Close()
	}
	sum, loadEnd, err := r.loop(ctx)
	if err != nil {
		return nil, err
	}
	if r.remote != nil {
		r.fetchRemote(ctx)
	}
	rep := r.report(sum, tgt, loadEnd)
	if o.OutDir != "" {
		if err := rep.WriteFiles(o.OutDir); err != nil {
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
	user := o.Load.OnInterval
	o.Load.OnInterval = func(iv load.Interval) {
		r.mu.Lock()
		r.last = iv
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
		r.idle(ctx, d)
	}
	var sum *load.Summary
	var lerr error
	done := make(chan struct{})
	r.loadStarted = true
	r.loadStart = r.o.Now().Sub(r.start).Seconds()
	go func() {
		defer close(done)
		sum, lerr = r.eng.Run(ctx)
	}()
	r.setInterval(r.pace.underLoad(0, 0, true)) // back from the baseline's interval
	r.take()
	for running := true; running; {
		select {
		case <-r.tick.C:
			r.take()
		case <-done:
			running = false
		}
	}
	if lerr != nil {
		return nil, time.Time{}, lerr
	}
	r.take() // the load's last state, still in the soak phase
	loadEnd := r.o.Now()
	r.loadDone = true
	if r.sampler != nil && r.o.Cooldown > 0 && ctx.Err() == nil {
		r.o.Log.Info("cool-down: load stopped, sampling goes on", zap.Duration("cooldown", r.o.Cooldown))
		r.idle(ctx, r.o.Cooldown)
	}
	return sum, loadEnd, nil
}

// idle samples an idle phase (the baseline or the cool-down) of length d,
// at least minPhaseSamples times when the interval is automatic, and once
// more at its end.
func (r *runner) idle(ctx context.Context, d time.Duration) {
	r.setInterval(r.pace.idle(d))
	timer := time.NewTimer(d)
	defer timer.Stop()
	r.take()
	for {
		select {
		case <-r.tick.C:
			r.take()
		case <-timer.C:
			r.take()
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
func (r *runner) take() {
	runtime.LockOSThread()
	cpu0 := threadCPU()
	rec := r.record()
	if r.csv != nil {
		if err := r.csv.Write(rec); err != nil {
			r.o.Log.Error("writing samples.csv", zap.Error(err))
		}
	}
	if r.o.OnRecord != nil {
		r.o.OnRecord(rec)
	}
	r.pace.observe(threadCPU() - cpu0)
	runtime.UnlockOSThread()
	if r.loadStarted && !r.loadDone {
		d := r.pace.underLoad(rec.Elapsed-r.loadStart, rec.Requests, rec.Phase == verdict.Warmup)
		if r.pace.retick(d) {
			r.tick.Reset(d)
		}
		r.pace.ran()
	}
}

// record samples the target and joins the load's progress.
func (r *runner) record() Record {
	var s probes.Sample
	if r.sampler != nil {
		s = r.sampler.Sample()
	} else {
		s.Time = r.o.Now()
	}
	r.mu.Lock()
	iv := r.last
	r.mu.Unlock()
	rec := Record{
		Sample:   s,
		Elapsed:  s.Time.Sub(r.start).Seconds(),
		Requests: r.eng.Completed(),
		Errors:   r.eng.Errors(),
		P50:      iv.P50,
		P99:      iv.P99,
	}
	if n := len(r.recs); n > 0 {
		prev := r.recs[n-1]
		if dt := rec.Elapsed - prev.Elapsed; dt > 0 && rec.Requests >= prev.Requests {
			rec.Rate = float64(rec.Requests-prev.Requests) / dt
		}
	}
	rec.Phase = r.phase(rec)
	r.recs = append(r.recs, rec)
	return rec
}

// phase places a record: in the warm-up until it reaches the first of the
// warm-up bounds that are set (both are only set by the default warm-up of
// a run bounded by both -n and -d, which stops at whichever comes first).
func (r *runner) phase(rec Record) verdict.Phase {
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

// preflight checks that every endpoint's host and port accept a TCP
// connection, so that an unreachable target is one clear line, not a
// report full of errors.
func preflight(ctx context.Context, eps []load.Endpoint) error {
	seen := map[string]bool{}
	for _, ep := range eps {
		a, err := dialaddr.Parse(ep.URL)
		if err != nil {
			return fmt.Errorf("URL %w", err)
		}
		addr := a.String()
		if seen[addr] {
			continue
		}
		seen[addr] = true
		d := net.Dialer{Timeout: 5 * time.Second}
		c, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			return fmt.Errorf("cannot reach %s: %w (is the server running and listening on %s?)", ep.URL, unwrapOp(err), addr)
		}
		c.Close()
	}
	return nil
}

func unwrapOp(err error) error {
	if op, ok := err.(*net.OpError); ok {
		if se, ok := op.Err.(*os.SyscallError); ok {
			return se.Err
		}
		return op.Err
	}
	return err
}
