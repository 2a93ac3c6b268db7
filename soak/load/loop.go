package load

import (
	"net"
	"net/netip"
	"os"
	"runtime"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// loopIOAllowed lets New choose the event loop (tests turn it off to run
// the same cases on the runtime's poller).
var loopIOAllowed = true

// useLoopIO tells whether the closed-loop workers run on event loops of
// their own: when there are too many for blocking sockets (useRawIO) and
// every target is plain http. Each loop is one goroutine with its own
// epoll instance, like a wrk thread: a request costs one write and one
// read, and one epoll_wait serves every connection that became ready; no
// goroutine parks or wakes per request, and no read ends in EAGAIN.
func useLoopIO(o *Options, targets []target) bool {
	if !loopIOAllowed || o.Rate > 0 || useRawIO(o) {
		return false
	}
	for _, t := range targets {
		if t.tls {
			return false
		}
	}
	return true
}

// loopConn is one connection of a worker on an event loop.
type loopConn struct {
	fd         int
	w          *worker
	wi         int // index of w in its loop
	target     int
	connecting bool
	used       bool // a request was made on it before the current one

	ep      *endpoint     // the request in flight, or nil
	start   time.Duration // Engine.mono
	attempt int
	wrote   int // request bytes written
	out     int // request bytes written, all attempts
	p       streamParser
}

// evLoop drives its share of the workers with non-blocking sockets.
type evLoop struct {
	e       *Engine
	acct    *worker // the loop's first worker: every request is counted in its stats
	epfd    int
	wake    int // eventfd, made readable at a stop
	workers []*worker
	conns   [][]*loopConn // per worker, per target
	byFD    []*loopConn
	pending []int // workers ready for their next request
	active  int   // workers not done
	buf     []byte
	events  []unix.EpollEvent
	endsM   sync.Mutex        // guards ends
	ends    map[int]connAddrs // the open connections by fd (Engine.EachConn)
}

// loopCount is the number of event loops: one per P but one, which is
// left to the sampler and the reporter (one loop on two cores, as wrk -t1).
func loopCount(workers int) int {
	return max(1, min(runtime.GOMAXPROCS(0)-1, workers))
}

// runLoops runs Concurrency workers on event loops until the stop.
func (e *Engine) runLoops() {
	n := loopCount(e.opts.Concurrency)
	loops := make([]*evLoop, n)
	for i := range loops {
		l, err := newEvLoop(e)
		if err != nil { // no epoll or eventfd: fall back to goroutines
			for _, made := range loops[:i] {
				made.close()
			}
			e.loopIO = false
			e.runClosed(time.Now())
			return
		}
		loops[i] = l
	}
	for i := range e.opts.Concurrency {
		l := loops[i%n]
		l.workers = append(l.workers, e.addWorker())
	}
	e.loopsMu.Lock()
	e.loops = loops
	stopped := e.stopped.Load()
	e.loopsMu.Unlock()
	if stopped {
		for _, l := range loops {
			l.close()
		}
		return
	}
	var wg sync.WaitGroup
	for _, l := range loops {
		wg.Go(l.run)
	}
	wg.Wait()
}

// wakeLoops makes every event loop see a stop at once.
func (e *Engine) wakeLoops() {
	e.loopsMu.Lock()
	defer e.loopsMu.Unlock()
	one := []byte{1, 0, 0, 0, 0, 0, 0, 0}
	for _, l := range e.loops {
		_, _ = unix.Write(l.wake, one)
	}
}

func newEvLoop(e *Engine) (*evLoop, error) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, err
	}
	wake, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		unix.Close(epfd)
		return nil, err
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(wake)}
	if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, wake, &ev); err != nil {
		unix.Close(epfd)
		unix.Close(wake)
		return nil, err
	}
	return &evLoop{e: e, epfd: epfd, wake: wake, buf: make([]byte, readBuf), events: make([]unix.EpollEvent, 256),
		ends: map[int]connAddrs{}}, nil
}

// close is called once the loop has finished; the eventfd stays open
// until then so a late stop can still write to it.
func (l *evLoop) close() {
	l.endsM.Lock()
	clear(l.ends)
	l.endsM.Unlock()
	for _, cs := range l.conns {
		for _, c := range cs {
			if c != nil && c.fd >= 0 {
				unix.Close(c.fd)
				c.fd = -1
				l.e.conns.Add(-1)
			}
		}
	}
	unix.Close(l.epfd)
	l.e.loopsMu.Lock()
	unix.Close(l.wake)
	l.wake = -1
	l.e.loopsMu.Unlock()
}

func (l *evLoop) run() {
	defer func() {
		l.e.closing.Store(true)
		l.close()
	}()
	l.acct = l.workers[0]
	l.conns = make([][]*loopConn, len(l.workers))
	for i := range l.workers {
		l.conns[i] = make([]*loopConn, len(l.e.targets))
		l.pending = append(l.pending, i)
	}
	l.active = len(l.workers)
	timeout := l.e.opts.Timeout
	tick := min(max(timeout/10, time.Millisecond), 100*time.Millisecond)
	nextCheck := l.e.mono() + tick
	var y yielder
	for {
		l.startPending()
		if l.active == 0 {
			return
		}
		n, err := unix.EpollWait(l.epfd, l.events, int(tick/time.Millisecond))
		if err != nil && err != unix.EINTR {
			l.abandonAll()
			return
		}
		if l.e.stopped.Load() {
			l.abandonAll()
			return
		}
		for _, ev := range l.events[:max(n, 0)] {
			fd := int(ev.Fd)
			if fd < len(l.byFD) && l.byFD[fd] != nil {
				l.ready(l.byFD[fd], ev.Events)
			}
		}
		now := l.e.mono()
		y.maybe(now)
		if now >= nextCheck {
			nextCheck = now + tick
			l.expire(int64(now - timeout))
		}
	}
}

// startPending starts the next request of every worker that is ready.
func (l *evLoop) startPending() {
	for len(l.pending) > 0 {
		i := l.pending[len(l.pending)-1]
		l.pending = l.pending[:len(l.pending)-1]
		l.start(i)
	}
}

// start begins worker i's next request, or retires the worker when the
// run is out of requests.
func (l *evLoop) start(i int) {
	w := l.workers[i]
	if !l.e.takeSlot() {
		l.active--
		return
	}
	ep := w.pick()
	now := l.e.mono()
	w.inflight.Store(int64(now))
	c := l.conns[i][ep.target]
	if c == nil {
		c = &loopConn{fd: -1, w: w, wi: i, target: ep.target}
		l.conns[i][ep.target] = c
	}
	c.ep, c.start, c.attempt, c.out = ep, now, 0, 0
	l.send(i, c)
}

// send (re)starts c's request: dials when c is closed, then writes.
func (l *evLoop) send(i int, c *loopConn) {
	c.p.reset(c.ep.head)
	c.wrote = 0
	if c.w.body != nil {
		c.w.body.buf = c.w.body.buf[:0]
	}
	if c.fd < 0 {
		if err := l.dial(c); err != nil {
			l.finish(i, c, err)
			return
		}
		if c.connecting {
			return // the connection's EPOLLOUT edge continues
		}
	}
	l.write(i, c)
}

// dial opens a non-blocking connection for c and registers it
// edge-triggered for both directions, so it is never modified again.
func (l *evLoop) dial(c *loopConn) error {
	w := c.w
	a := &w.addrs[c.target]
	if a.sa == nil {
		sa, family, err := sockaddr(l.e.targets[c.target].addr)
		if err != nil {
			return err
		}
		a.sa, a.family = sa, family
	}
	fd, err := unix.Socket(a.family, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return os.NewSyscallError("socket", err)
	}
	if l.e.opts.KeepAlive {
		_ = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	}
	err = unix.Connect(fd, a.sa)
	if err != nil && err != unix.EINPROGRESS {
		unix.Close(fd)
		return &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", err)}
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLOUT | unix.EPOLLRDHUP | unix.EPOLLET, Fd: int32(fd)}
	if err := unix.EpollCtl(l.epfd, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
		unix.Close(fd)
		return os.NewSyscallError("epoll_ctl", err)
	}
	for fd >= len(l.byFD) {
		l.byFD = append(l.byFD, nil)
	}
	l.byFD[fd] = c
	c.fd, c.connecting, c.used = fd, err == unix.EINPROGRESS, false
	l.endsM.Lock()
	l.ends[fd] = connAddrs{}
	l.endsM.Unlock()
	l.e.conns.Add(1)
	l.acct.st.mu.Lock()
	l.acct.st.connections++
	l.acct.st.mu.Unlock()
	return nil
}

// write sends what is left of c's request; the rest waits for EPOLLOUT.
func (l *evLoop) write(i int, c *loopConn) {
	req := c.ep.req
	for c.wrote < len(req) {
		n, err := unix.Write(c.fd, req[c.wrote:])
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			return
		case err != nil:
			l.finish(i, c, os.NewSyscallError("write", err))
			return
		}
		c.wrote += n
		c.out += n
	}
}

// ready handles the events of one connection.
func (l *evLoop) ready(c *loopConn, events uint32) {
	if c.ep == nil { // idle keep-alive connection: the server closed it
		if events&(unix.EPOLLIN|unix.EPOLLRDHUP|unix.EPOLLHUP|unix.EPOLLERR) != 0 {
			l.closeConn(c)
		}
		return
	}
	i := c.wi
	if c.connecting {
		if events&(unix.EPOLLOUT|unix.EPOLLERR|unix.EPOLLHUP) == 0 {
			return
		}
		c.connecting = false
		if errno, err := unix.GetsockoptInt(c.fd, unix.SOL_SOCKET, unix.SO_ERROR); err != nil || errno != 0 {
			if err == nil {
				err = unix.Errno(errno)
			}
			l.finish(i, c, &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", err)})
			return
		}
		l.write(i, c)
		return
	}
	if events&unix.EPOLLOUT != 0 && c.wrote < len(c.ep.req) {
		l.write(i, c)
		if c.ep == nil || c.wrote < len(c.ep.req) {
			return
		}
	}
	if events&(unix.EPOLLIN|unix.EPOLLRDHUP|unix.EPOLLHUP|unix.EPOLLERR) != 0 {
		l.read(i, c, events&(unix.EPOLLRDHUP|unix.EPOLLHUP|unix.EPOLLERR) != 0)
	}
}

// read reads what has arrived, once unless it filled the buffer (the
// registration is edge-triggered: more data brings another event). When
// the event also said the peer closed (hup), no further event will come:
// it reads on to the end of the stream, so an answer that arrives with
// the server's close (HTTP/1.0, a reset after the status line) is read
// whole instead of waiting out the timeout.
func (l *evLoop) read(i int, c *loopConn, hup bool) {
	for {
		n, err := unix.Read(c.fd, l.buf)
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			return
		case err != nil:
			l.finish(i, c, os.NewSyscallError("read", err))
			return
		case n == 0:
			if err := c.p.eof(); err != nil {
				l.finish(i, c, err)
			} else {
				c.p.r.close = true
				l.finish(i, c, nil)
			}
			return
		}
		done, extra, err := c.p.feed(l.buf[:n], c.w.body)
		if err != nil || done {
			if extra > 0 { // bytes after the response: do not reuse
				c.p.r.close = true
			}
			l.finish(i, c, err)
			return
		}
		if n < len(l.buf) && !hup {
			return
		}
	}
}

// finish ends c's request with err (nil: a whole response), retrying once
// on a new connection a reused one the server had closed, and queues the
// worker's next request.
func (l *evLoop) finish(i int, c *loopConn, err error) {
	w, e := c.w, l.e
	resp := c.p.r
	if err != nil && c.used && c.attempt == 0 && resp.bytesIn == 0 && connLost(err) &&
		!e.stopped.Load() && w.inflight.Load() > 0 {
		l.closeConn(c)
		c.attempt = 1
		l.send(i, c)
		return
	}
	if err != nil || resp.close || !e.opts.KeepAlive {
		l.closeConn(c)
	} else {
		c.used = true
	}
	if w.inflight.Swap(0) < 0 { // the engine's watchdog marked it
		l.closeConn(c)
		err = os.ErrDeadlineExceeded
	}
	start, ep := c.start, c.ep
	c.ep = nil
	l.pending = append(l.pending, i)
	if err != nil && e.stopped.Load() {
		l.acct.st.mu.Lock()
		l.acct.st.abandoned++
		l.acct.st.mu.Unlock()
		return
	}
	end := e.mono()
	// All the loop's requests go to one worker's stats: one histogram
	// stays in cache instead of one per worker (50 × 20 KB at c=50).
	// check reads the worker's own body buffer, so it runs as w.
	l.acct.recordFor(w, end-start, &resp, c.out, ep, err)
}

// expire cuts the requests in flight that started before limit or that
// the engine's watchdog marked.
func (l *evLoop) expire(limit int64) {
	for i, cs := range l.conns {
		w := l.workers[i]
		s := w.inflight.Load()
		if s == 0 || (s > limit && s != -1) {
			continue
		}
		for _, c := range cs {
			if c != nil && c.ep != nil {
				w.inflight.Store(-1)
				l.finish(i, c, os.ErrDeadlineExceeded)
			}
		}
	}
}

// abandonAll counts the requests in flight at a stop as abandoned.
func (l *evLoop) abandonAll() {
	for i, cs := range l.conns {
		w := l.workers[i]
		for _, c := range cs {
			if c != nil && c.ep != nil {
				c.ep = nil
				w.inflight.Store(0)
				l.acct.st.mu.Lock()
				l.acct.st.abandoned++
				l.acct.st.mu.Unlock()
			}
		}
	}
}

func (l *evLoop) closeConn(c *loopConn) {
	if c.fd < 0 {
		return
	}
	l.byFD[c.fd] = nil
	l.endsM.Lock()
	delete(l.ends, c.fd)
	l.endsM.Unlock()
	unix.Close(c.fd) // also leaves the epoll set
	c.fd, c.connecting = -1, false
	l.e.conns.Add(-1)
}

// eachConn calls fn with the addresses of each of the loop's connections
// open now, once connected. Holding endsM keeps each fd from closing
// meanwhile (closeConn leaves ends first).
func (l *evLoop) eachConn(fn func(local, remote netip.AddrPort)) {
	l.endsM.Lock()
	defer l.endsM.Unlock()
	for fd, a := range l.ends {
		if a.Local.Port() == 0 || a.Remote.Port() == 0 {
			a.readEnds(fd)
			l.ends[fd] = a
		}
		if a.Local.Port() != 0 {
			fn(a.Local, a.Remote)
		}
	}
}
