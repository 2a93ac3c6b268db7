package load

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// Engine drives HTTP/1.1 load with a lean client of its own over net.Conn:
// each worker sends ready-made request bytes and parses the response in
// place, so the hot path makes no allocations. Create it with New and call
// Run once.
//
// Stops: Run ends when Requests requests have completed (never more: slots
// are reserved atomically), when Duration has passed, or when ctx is
// cancelled, whichever comes first. At a duration or interrupt stop the
// requests still in flight are abandoned at once (their connections are
// cut) and counted in Summary.Abandoned, not in Requests.
type Engine struct {
	opts        Options
	targets     []target
	eps         []endpoint
	totalWeight int
	status      *statusSet
	dialer      net.Dialer
	tlsConf     *tls.Config

	workersMu sync.Mutex // guards workers
	workers   []*worker

	reserved  atomic.Uint64 // closed loop: request slots taken
	firstLen  atomic.Int64  // body length of the first response; -1 unset
	stopped   atomic.Bool   // set at a duration or interrupt stop
	stopCtx   context.Context
	stop      context.CancelFunc
	stopOnce  sync.Once
	stoppedBy string // written once under stopOnce, read after workers end
	ran       atomic.Bool
	rawIO     bool // closed-loop workers use blocking sockets (useRawIO)
	loopIO    bool // closed-loop workers run on event loops (useLoopIO)
	loopsMu   sync.Mutex
	loops     []*evLoop // guarded by loopsMu

	missed atomic.Uint64 // open loop: due times never sent

	// conns counts the load's sockets open now, connecting ones included
	// (see OpenConns); closing is set when the first worker or loop
	// begins to close them all at its end.
	conns   atomic.Int64
	closing atomic.Bool

	// favour is the endpoint the designed mix favours now, -1 for the
	// fixed mix (see Favour).
	favour atomic.Int32

	// texts are the fixed error texts: timeouts (see timeoutText) and
	// body mismatches.
	dialTimeoutText, timeoutText, partialText, bodyText string

	// epoch is when New made the engine; the hot path reads the clock as
	// the monotonic time since it (mono), one clock read where time.Now
	// makes two (the wall clock and the monotonic one).
	epoch time.Time
}

// New fills defaults (Concurrency 1, Interval 1s, Timeout 30s, Method GET,
// Weight 1) and validates opts. In open loop (Rate > 0) a Concurrency left
// at 0 or 1 becomes ceil(Rate × Timeout) capped at MaxOpenLoopConcurrency;
// workers are started only as the schedule needs them.
func New(opts Options) (*Engine, error) {
	o := withDefaults(opts)
	if err := validate(o); err != nil {
		return nil, err
	}
	e := &Engine{opts: o, status: newStatusSet(o.ExpectStatus), epoch: time.Now()}
	e.dialer = net.Dialer{Timeout: o.Timeout, KeepAlive: -1}
	e.firstLen.Store(-1)
	e.favour.Store(-1)
	e.rawIO = useRawIO(&o)
	e.buildEndpoints()
	e.loopIO = useLoopIO(&o, e.targets)
	e.setTexts()
	e.tlsConf = &tls.Config{
		InsecureSkipVerify: o.InsecureTLS, //nolint:gosec // user's explicit choice
		ClientSessionCache: tls.NewLRUClientSessionCache(64),
	}
	return e, nil
}

// buildEndpoints renders each endpoint's request and groups endpoints by
// the address they dial.
func (e *Engine) buildEndpoints() {
	index := map[target]int{}
	for _, ep := range e.opts.Endpoints {
		t, _ := parseTarget(ep.URL) // validated
		ti, ok := index[t]
		if !ok {
			ti = len(e.targets)
			index[t] = ti
			e.targets = append(e.targets, t)
		}
		e.totalWeight += ep.Weight
		e.eps = append(e.eps, endpoint{
			target: ti,
			index:  len(e.eps),
			req:    buildRequest(ep, t, &e.opts),
			head:   ep.Method == "HEAD",
			cumW:   e.totalWeight,
		})
	}
	if e.totalWeight == 0 { // all weights explicitly 0 cannot happen after defaults
		e.totalWeight = 1
	}
}

func (e *Engine) tlsConfig(t *target) *tls.Config {
	c := e.tlsConf.Clone()
	c.ServerName = t.serverName
	return c
}

// Options returns the options in effect: the caller's, with defaults
// filled in (for example the open-loop Concurrency New chose).
func (e *Engine) Options() Options { return e.opts }

// Completed returns the number of requests completed so far (successes
// and errors). Safe to call from any goroutine; cheap.
func (e *Engine) Completed() uint64 {
	var n uint64
	e.eachWorker(func(w *worker) { n += w.st.completed.Load() })
	return n
}

// Errors returns the number of completed requests that failed so far.
// Safe to call from any goroutine; cheap.
func (e *Engine) Errors() uint64 {
	var n uint64
	e.eachWorker(func(w *worker) { n += w.st.errors.Load() })
	return n
}

// OpenConns returns how many connections to the targets the load holds
// open now, those still connecting included. Each is an fd in the
// server that accepts it, so a run reads the target's fds net of them:
// an open loop that meets a stall starts workers with connections of
// their own, and keeps them. Safe to call from any goroutine; cheap.
func (e *Engine) OpenConns() int { return int(e.conns.Load()) }

// connAddrs are a connection's two addresses: Local the load's end,
// Remote the target's.
type connAddrs struct {
	Local, Remote netip.AddrPort
}

// EachConn calls fn with the addresses of each of the load's connections
// open now, its own end (local) and the target's (remote): each is an fd
// in the server that accepted it, which the sampler finds by these
// addresses (probes.SamplerOptions.LoadEnds). A connection still
// connecting is left out. It reads each raw or event-loop socket's
// addresses once, two system calls, on the first call that finds it
// connected. Safe to call from any goroutine; it always returns true.
func (e *Engine) EachConn(fn func(local, remote netip.AddrPort)) bool {
	e.eachWorker(func(w *worker) { w.eachConn(fn) })
	e.loopsMu.Lock()
	loops := e.loops
	e.loopsMu.Unlock()
	for _, l := range loops {
		l.eachConn(fn)
	}
	return true
}

// Closing says the load has begun to close its connections at its end
// (the first worker or event loop has finished): until the server has
// read each close, it still holds an fd that OpenConns no longer counts.
func (e *Engine) Closing() bool { return e.closing.Load() }

// Counters is a snapshot of a running engine's totals, for watching the
// run from outside: no request completing while requests wait and no
// byte arrives is a target that stopped answering.
type Counters struct {
	Completed uint64 // requests completed (successes and errors)
	Answered  uint64 // requests that got a status line
	Timeouts  uint64 // requests that timed out
	BytesIn   uint64 // response bytes of the completed requests
	InFlight  int    // requests in flight now
	// Waiting is how long the oldest request in flight has waited.
	Waiting time.Duration
}

// Counters returns the engine's totals now. Safe to call from any
// goroutine; it takes each worker's lock once, so call it at a sampling
// cadence, not per request.
func (e *Engine) Counters() Counters {
	var c Counters
	e.eachWorker(func(w *worker) {
		w.st.mu.Lock()
		defer w.st.mu.Unlock()
		c.Completed += w.st.completed.Load()
		c.BytesIn += w.st.bytesIn
		c.Timeouts += w.st.causes[causeIndex(CauseTimeout)]
		for _, n := range w.st.classes {
			c.Answered += n
		}
	})
	c.InFlight, c.Waiting = e.inFlight()
	return c
}

// inFlight counts the requests in flight and the wait of the oldest.
func (e *Engine) inFlight() (int, time.Duration) {
	now := int64(e.mono())
	n, oldest := 0, int64(0)
	e.eachWorker(func(w *worker) {
		if s := w.inflight.Load(); s > 0 {
			n++
			oldest = max(oldest, now-s)
		}
	})
	return n, time.Duration(oldest)
}

func (e *Engine) eachWorker(f func(*worker)) {
	e.workersMu.Lock()
	defer e.workersMu.Unlock()
	for _, w := range e.workers {
		f(w)
	}
}

func (e *Engine) addWorker() *worker {
	e.workersMu.Lock()
	defer e.workersMu.Unlock()
	w := newWorker(e, len(e.workers))
	e.workers = append(e.workers, w)
	return w
}

// sameLength reports whether n equals the first response's body length,
// recording n when it is the first.
func (e *Engine) sameLength(n int64) bool {
	if e.firstLen.CompareAndSwap(-1, n) {
		return true
	}
	return e.firstLen.Load() == n
}

// stopWith ends the run for reason ("duration" or "interrupt"): no new
// request starts and requests in flight are cut short.
func (e *Engine) stopWith(reason string) {
	e.stopOnce.Do(func() {
		e.stoppedBy = reason
		e.stopped.Store(true)
		e.stop()
		e.eachWorker(func(w *worker) { w.interrupt() })
		e.wakeLoops()
	})
}

// Run makes requests until a stop condition and returns the complete
// Summary. An unreachable target is not an error: its failures are counted
// by cause. Run returns an error only if it is called twice.
func (e *Engine) Run(ctx context.Context) (*Summary, error) {
	if !e.ran.CompareAndSwap(false, true) {
		return nil, errors.New("load: Run called twice on one Engine")
	}
	e.stopCtx, e.stop = context.WithCancel(context.Background())
	defer e.stop()
	start := time.Now()
	defer context.AfterFunc(ctx, func() { e.stopWith("interrupt") })()
	if d := e.opts.Duration; d > 0 {
		t := time.AfterFunc(d, func() { e.stopWith("duration") })
		defer t.Stop()
	}
	rep := newReporter(e, start)
	repDone := rep.start()
	watchDone := make(chan struct{})
	watched := e.startWatchdog(watchDone)
	switch {
	case e.opts.Rate > 0:
		e.runOpen(start)
	case e.loopIO:
		e.runLoops()
	default:
		e.runClosed(start)
	}
	end := time.Now()
	close(watchDone)
	<-watched
	e.stopOnce.Do(func() { e.stoppedBy = "requests" })
	close(repDone)
	rep.wait()
	return e.summary(start, end), nil
}

// runClosed runs Concurrency workers, each sending its next request as
// soon as the previous one completes.
func (e *Engine) runClosed(start time.Time) {
	var wg sync.WaitGroup
	for range e.opts.Concurrency {
		w := e.addWorker()
		wg.Go(func() {
			defer w.closeAll()
			var y yielder
			for e.takeSlot() {
				now := e.mono()
				y.maybe(now)
				w.do(now, now)
			}
		})
	}
	wg.Wait()
}

// mono is the monotonic time since the engine's epoch, always > 0: the
// clock of the hot path (request starts and ends, Worker.inflight).
func (e *Engine) mono() time.Duration {
	return max(time.Since(e.epoch), 1)
}

// takeSlot reserves one request of the Requests budget; false means stop.
func (e *Engine) takeSlot() bool {
	if e.stopped.Load() {
		return false
	}
	if e.opts.Requests == 0 {
		return true
	}
	return e.reserved.Add(1) <= e.opts.Requests
}

// startWatchdog cuts requests that run past Timeout, checking every tenth
// of Timeout (at most every 100 ms): one ticker for the run instead of a
// deadline per request. The returned channel closes when it has exited.
func (e *Engine) startWatchdog(done <-chan struct{}) <-chan struct{} {
	exited := make(chan struct{})
	tick := min(max(e.opts.Timeout/10, time.Millisecond), 100*time.Millisecond)
	go func() {
		defer close(exited)
		t := time.NewTicker(tick)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case now := <-t.C:
				limit := int64(now.Sub(e.epoch) - e.opts.Timeout)
				e.eachWorker(func(w *worker) { w.expireBefore(limit) })
			}
		}
	}()
	return exited
}
