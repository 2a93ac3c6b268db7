package load

import (
	"bufio"
	"context"
	"crypto/tls"
	"net"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"golang.org/x/sys/unix"
)

// Histogram geometry: microseconds from 1 µs to 60 s, 2 significant
// digits (≤ 1 % error), about 20 KB per histogram whatever the count.
const (
	histMin    = 1
	histMax    = 60_000_000
	histDigits = 2
	readBuf    = 16 << 10
	bodyBufMax = 64 << 10 // prefix of a body kept for ExpectBody
)

func newHist() *hdrhistogram.Histogram {
	return hdrhistogram.New(histMin, histMax, histDigits)
}

// wconn is one worker's connection to one target.
type wconn struct {
	nc   net.Conn // on the runtime's poller, or nil
	raw  *rawConn // blocking socket (rawIO workers), or nil
	br   *bufio.Reader
	used bool // at least one request was made on the connection
}

func (c *wconn) open() bool { return c.nc != nil || c.raw != nil }

func (c *wconn) write(p []byte) (int, error) {
	if c.raw != nil {
		return c.raw.Write(p)
	}
	return c.nc.Write(p)
}

// rawAddr is a target's resolved socket address, for rawIO workers.
type rawAddr struct {
	sa     unix.Sockaddr
	family int
}

// stats is one worker's accounting. mu guards every field but is only ever
// contended by the once-per-interval reporter; completed and errors are
// also atomics so Completed and Errors can read them without the lock.
type stats struct {
	mu          sync.Mutex
	total, ivl  *hdrhistogram.Histogram // requests go to ivl, folded into total by take and summary
	successes   uint64
	bytesIn     uint64
	bytesOut    uint64
	connections uint64
	abandoned   uint64
	late        uint64
	censored    uint64 // timed-out requests, their latency censored at Timeout
	unanswered  uint64 // failed without a status line before the timeout: no latency
	causes      [nCauses]uint64
	classes     [6]uint64   // index status/100; 0 unused
	eps         []epStats   // per endpoint
	texts       []textEntry // distinct error texts, MaxErrorTexts a cause

	completed, errors atomic.Uint64
}

// worker makes requests one at a time on its own connections.
type worker struct {
	e     *Engine
	rng   uint64
	connM sync.Mutex // guards the nc and raw fields of conns against interrupt
	conns []wconn    // one per target
	body  *bodyBuf
	st    stats

	raw   bool      // blocking sockets for plain http (see useRawIO)
	addrs []rawAddr // per target, resolved at the first raw dial

	// inflight is the start of the request in flight (Engine.mono), 0
	// when idle, -1 once the watchdog has cut it at Timeout.
	inflight atomic.Int64
}

func newWorker(e *Engine, id int) *worker {
	w := &worker{
		e:     e,
		rng:   uint64(id)*0x9E3779B97F4A7C15 + uint64(time.Now().UnixNano()) | 1,
		conns: make([]wconn, len(e.targets)),
		raw:   e.rawIO,
		addrs: make([]rawAddr, len(e.targets)),
	}
	w.st.total, w.st.ivl = newHist(), newHist()
	w.st.eps = make([]epStats, len(e.eps))
	if e.opts.ExpectBody != nil {
		w.body = &bodyBuf{buf: make([]byte, 0, bodyBufMax)}
	}
	return w
}

// pick chooses an endpoint by weight with a xorshift RNG: the favoured
// endpoint (Engine.Favour) FavourShare of the time, when there is one.
func (w *worker) pick() *endpoint {
	eps := w.e.eps
	if len(eps) == 1 {
		return &eps[0]
	}
	if f := w.e.favour.Load(); f >= 0 && w.next()%1000 < favourPermille {
		return &eps[f]
	}
	r := int(w.next() % uint64(w.e.totalWeight))
	for i := range eps {
		if r < eps[i].cumW {
			return &eps[i]
		}
	}
	return &eps[len(eps)-1]
}

// next advances the worker's xorshift RNG.
func (w *worker) next() uint64 {
	w.rng ^= w.rng << 13
	w.rng ^= w.rng >> 7
	w.rng ^= w.rng << 17
	return w.rng
}

// do makes one request, started at now, and records it. Latency runs from
// intended, which is now in closed loop and the scheduled time in open
// loop; both are Engine.mono times. Timeout is enforced by the watchdog,
// not by a timer per request.
func (w *worker) do(intended, now time.Duration) {
	ep := w.pick()
	w.inflight.Store(int64(now))
	resp, out, err := w.roundTrip(ep)
	if w.inflight.Swap(0) < 0 { // cut by the watchdog: the connection is spoilt
		w.closeConn(&w.conns[ep.target])
		err = os.ErrDeadlineExceeded
	}
	end := w.e.mono()
	if err != nil && w.e.stopped.Load() {
		w.st.mu.Lock()
		w.st.abandoned++
		w.st.mu.Unlock()
		return
	}
	w.record(end-intended, &resp, out, ep, err)
}

// check applies ExpectStatus, ExpectBody and CheckLength in that order.
func (w *worker) check(r *response) string {
	e := w.e
	switch {
	case !e.status.accepts(r.status):
		return CauseStatus
	case w.body != nil && !e.opts.ExpectBody.Match(w.body.buf):
		return CauseBody
	case e.opts.CheckLength && !e.sameLength(r.bodyLen):
		return CauseLength
	}
	return ""
}

// record adds one completed request to the worker's accounting: err is
// its transport error, nil when a whole response came. A request that
// got a status line or timed out is a latency (a timeout censored at its
// measured time); one that failed otherwise without an answer is not.
func (w *worker) record(lat time.Duration, r *response, out int, ep *endpoint, err error) {
	w.recordFor(w, lat, r, out, ep, err)
}

// recordFor is record into w's accounting of a request made by chk,
// whose body buffer the checks read (an event loop counts the requests
// of all its workers in one).
func (w *worker) recordFor(chk *worker, lat time.Duration, r *response, out int, ep *endpoint, err error) {
	cause, text := "", ""
	if err != nil {
		cause = classify(err)
		text = w.e.errorText(cause, err, r)
	} else if cause = chk.check(r); cause != "" && cause != CauseStatus {
		text = w.e.errorText(cause, nil, r)
	}
	us := lat.Microseconds()
	us = max(histMin, min(us, histMax))
	st := &w.st
	st.mu.Lock()
	if r.status > 0 || cause == CauseTimeout { // into ivl only: take and summary fold it into total
		_ = st.ivl.RecordValue(us)
	} else {
		st.unanswered++
	}
	if r.status > 0 {
		st.classes[r.status/100]++
	}
	st.bytesIn += uint64(r.bytesIn)
	st.bytesOut += uint64(out)
	st.eps[ep.index].requests++
	if cause == "" {
		st.successes++
	} else {
		st.fail(cause, text, r, ep, w.e.mono())
	}
	st.completed.Add(1)
	st.mu.Unlock()
	if f := w.e.opts.OnResult; f != nil {
		f(Result{Latency: lat, Status: r.status, Cause: cause, BytesIn: r.bytesIn, BytesOut: out})
	}
}

// epStats counts one endpoint's requests.
type epStats struct{ requests, errors uint64 }

// fail counts a failed request: its cause, its endpoint, its text (the
// status line for a status mismatch). The caller holds st.mu.
func (st *stats) fail(cause, text string, r *response, ep *endpoint, at time.Duration) {
	ci := causeIndex(cause)
	st.causes[ci]++
	st.eps[ep.index].errors++
	if cause == CauseTimeout {
		st.censored++
	}
	if cause == CauseStatus {
		st.addText(ci, "", r.statusText(), at)
	} else {
		st.addText(ci, text, nil, at)
	}
	st.errors.Add(1)
}

// roundTrip sends ep's request and reads the response. A request that
// finds a reused keep-alive connection closed by the server before any
// response byte is retried once on a new connection, as browsers do.
func (w *worker) roundTrip(ep *endpoint) (response, int, error) {
	c := &w.conns[ep.target]
	out := 0
	for attempt := 0; ; attempt++ {
		if !c.open() {
			if err := w.dial(ep.target); err != nil {
				return response{}, out, err
			}
		}
		reused := c.used
		c.used = true
		resp, n, err := w.exchange(c, ep)
		out += n
		if err == nil && !resp.close && w.e.opts.KeepAlive {
			return resp, out, nil
		}
		w.closeConn(c)
		if err != nil && reused && attempt == 0 && resp.bytesIn == 0 && connLost(err) &&
			!w.e.stopped.Load() && w.inflight.Load() > 0 {
			continue
		}
		return resp, out, err
	}
}

// exchange writes the request and reads the response on c. There is no
// deadline call per request: the watchdog cuts a request at Timeout.
func (w *worker) exchange(c *wconn, ep *endpoint) (response, int, error) {
	if w.e.stopped.Load() { // an interrupt may have raced the dial
		return response{}, 0, context.Canceled
	}
	n, err := c.write(ep.req)
	if err != nil {
		return response{}, n, err
	}
	if w.body != nil {
		w.body.buf = w.body.buf[:0]
	}
	resp, err := readResponse(c.br, ep.head, w.body)
	return resp, n, err
}

// dial opens a connection to target i, with TLS when the URL says https.
func (w *worker) dial(i int) error {
	t := &w.e.targets[i]
	if w.raw && !t.tls {
		return w.dialRaw(i)
	}
	ctx, cancel := context.WithTimeout(w.e.stopCtx, w.e.opts.Timeout)
	defer cancel()
	nc, err := w.e.dialer.DialContext(ctx, "tcp", t.addr)
	if err != nil {
		return err
	}
	w.e.conns.Add(1)
	w.st.mu.Lock()
	w.st.connections++
	w.st.mu.Unlock()
	if t.tls {
		tc := tls.Client(nc, w.e.tlsConfig(t))
		if err := tc.HandshakeContext(ctx); err != nil {
			nc.Close()
			w.e.conns.Add(-1)
			return &handshakeError{err}
		}
		nc = tc
	}
	c := &w.conns[i]
	if c.br == nil {
		c.br = bufio.NewReaderSize(nc, readBuf)
	} else {
		c.br.Reset(nc)
	}
	w.connM.Lock()
	c.nc, c.used = nc, false
	w.connM.Unlock()
	return nil
}

// dialRaw opens a blocking socket to target i (see useRawIO).
func (w *worker) dialRaw(i int) error {
	a := &w.addrs[i]
	if a.sa == nil {
		sa, family, err := sockaddr(w.e.targets[i].addr)
		if err != nil {
			return err
		}
		a.sa, a.family = sa, family
	}
	c := &w.conns[i]
	err := dialRaw(a.sa, a.family, w.e.opts.KeepAlive, func(rc *rawConn) bool {
		w.connM.Lock()
		c.raw, c.used = rc, false
		w.connM.Unlock()
		w.e.conns.Add(1)
		return !w.e.stopped.Load() // else the stop may have missed rc
	})
	if err != nil {
		w.closeConn(c)
		return err
	}
	w.st.mu.Lock()
	w.st.connections++
	w.st.mu.Unlock()
	if c.br == nil {
		c.br = bufio.NewReaderSize(c.raw, readBuf)
	} else {
		c.br.Reset(c.raw)
	}
	return nil
}

func (w *worker) closeConn(c *wconn) {
	w.connM.Lock()
	nc, raw := c.nc, c.raw
	c.nc, c.raw = nil, nil
	w.connM.Unlock()
	if nc != nil {
		nc.Close()
		w.e.conns.Add(-1)
	}
	if raw != nil {
		raw.close()
		w.e.conns.Add(-1)
	}
}

// interrupt cuts short any request in flight; called once at a stop.
func (w *worker) interrupt() {
	w.connM.Lock()
	defer w.connM.Unlock()
	w.cutConns()
}

// cutConns wakes every call blocked on the worker's connections with an
// error; the worker then closes them. Called with connM held.
func (w *worker) cutConns() {
	for i := range w.conns {
		if nc := w.conns[i].nc; nc != nil {
			_ = nc.SetDeadline(time.Unix(1, 0))
		}
		if raw := w.conns[i].raw; raw != nil {
			raw.shutdown()
		}
	}
}

// expireBefore cuts the request in flight if it started before limit
// (Engine.mono); called by the watchdog.
func (w *worker) expireBefore(limit int64) {
	s := w.inflight.Load()
	if s <= 0 || s > limit {
		return
	}
	w.connM.Lock()
	defer w.connM.Unlock()
	if w.inflight.CompareAndSwap(s, -1) {
		w.cutConns()
	}
}

// closeAll closes the worker's connections when it exits.
func (w *worker) closeAll() {
	w.e.closing.Store(true)
	for i := range w.conns {
		w.closeConn(&w.conns[i])
	}
}

// eachConn calls fn with the addresses of each of the worker's
// connections open now, once connected. Holding connM keeps each from
// closing meanwhile (closeConn takes it out first).
func (w *worker) eachConn(fn func(local, remote netip.AddrPort)) {
	w.connM.Lock()
	defer w.connM.Unlock()
	for i := range w.conns {
		c := &w.conns[i]
		switch {
		case c.nc != nil:
			l, lok := c.nc.LocalAddr().(*net.TCPAddr)
			r, rok := c.nc.RemoteAddr().(*net.TCPAddr)
			if lok && rok { // an IPv4 address may come mapped into IPv6
				fn(unmapped(l.AddrPort()), unmapped(r.AddrPort()))
			}
		case c.raw != nil:
			if c.raw.ends.readEnds(c.raw.fd); c.raw.ends.Local.Port() != 0 {
				fn(c.raw.ends.Local, c.raw.ends.Remote)
			}
		}
	}
}

func unmapped(a netip.AddrPort) netip.AddrPort {
	return netip.AddrPortFrom(a.Addr().Unmap(), a.Port())
}
