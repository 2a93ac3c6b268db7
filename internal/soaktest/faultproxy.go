package soaktest

import (
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Toxics are the faults a FaultProxy puts on the wire, after Shopify's
// toxiproxy (latency, timeout, reset_peer, slow_close). This kernel has
// no netem qdisc, so loss and delay are made in user space.
//
// A chunk is what one read returns. soakd writes each request in one
// write and a test server each answer in one, so on loopback a chunk is
// one request or one answer; the counts below rely on it.
type Toxics struct {
	// Latency delays every chunk from the upstream to the client by
	// Latency plus a uniform jitter within ±Jitter.
	Latency, Jitter time.Duration
	// StallEvery, when > 0, loses every StallEvery-th chunk from the
	// clients (counted over all connections), and with it all of that
	// connection's later traffic both ways: a lost packet whose
	// retransmissions never arrive. The connection stays open until the
	// client closes it.
	StallEvery uint64
	// ResetEvery, when > 0, resets the client's connection (an RST, by
	// SO_LINGER 0) instead of passing on every ResetEvery-th chunk from
	// the upstream.
	ResetEvery uint64
	// SlowClose waits this long before closing the client's connection
	// once the upstream has closed its own.
	SlowClose time.Duration
	// Seed seeds the jitter.
	Seed uint64
}

// FaultProxy is a TCP proxy on a loopback port that passes traffic to
// an upstream through its Toxics.
type FaultProxy struct {
	Addr string // HOST:PORT the clients connect to
	URL  string // http://HOST:PORT/

	upstream string
	toxics   Toxics
	ln       net.Listener
	wg       sync.WaitGroup // the proxy's goroutines

	fromClients atomic.Uint64 // chunks read from clients
	fromUp      atomic.Uint64 // chunks read from the upstream
	// Stalled and Reset count the connections stalled and reset so far.
	Stalled, Reset atomic.Uint64

	mu     sync.Mutex // guards rng, conns and closed
	rng    *rand.Rand
	conns  map[net.Conn]struct{}
	closed bool
}

// StartFaultProxy listens on 127.0.0.1:0 and proxies each connection to
// upstream (HOST:PORT) through tx until the test ends; then it closes
// every connection and waits for its goroutines.
func StartFaultProxy(t testing.TB, upstream string, tx Toxics) *FaultProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("fault proxy: %v", err)
	}
	p := &FaultProxy{
		Addr: ln.Addr().String(), URL: "http://" + ln.Addr().String() + "/",
		upstream: upstream, toxics: tx, ln: ln,
		rng:   rand.New(rand.NewPCG(tx.Seed, 0x50a4d)),
		conns: map[net.Conn]struct{}{},
	}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.close)
	return p
}

func (p *FaultProxy) close() {
	p.ln.Close()
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

func (p *FaultProxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return // closed by the cleanup
		}
		up, err := net.Dial("tcp", p.upstream)
		if err != nil {
			c.Close() // as if the upstream refused
			continue
		}
		if !p.track(c, up) {
			return
		}
		l := &link{p: p, client: c, up: up}
		p.wg.Add(2)
		go l.clientToUp()
		go l.upToClient()
	}
}

// track records the connections for the cleanup; false once it has run.
func (p *FaultProxy) track(cs ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		for _, c := range cs {
			c.Close()
		}
		return false
	}
	for _, c := range cs {
		p.conns[c] = struct{}{}
	}
	return true
}

func (p *FaultProxy) untrack(cs ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		delete(p.conns, c)
		c.Close()
	}
}

// delay is Latency ± Jitter, never below zero.
func (p *FaultProxy) delay() time.Duration {
	d := p.toxics.Latency
	if j := p.toxics.Jitter; j > 0 {
		p.mu.Lock()
		d += time.Duration(p.rng.Int64N(int64(2*j)+1)) - j
		p.mu.Unlock()
	}
	return max(d, 0)
}

// link is one proxied connection.
type link struct {
	p          *FaultProxy
	client, up net.Conn
	stalled    atomic.Bool
}

// clientToUp passes requests on until the client closes, or swallows
// them once the link is stalled.
func (l *link) clientToUp() {
	defer l.p.wg.Done()
	defer l.p.untrack(l.client, l.up)
	buf := make([]byte, 32<<10)
	for {
		n, err := l.client.Read(buf)
		if n > 0 && !l.stalled.Load() {
			if every := l.p.toxics.StallEvery; every > 0 && l.p.fromClients.Add(1)%every == 0 {
				l.stalled.Store(true)
				l.p.Stalled.Add(1)
			}
		}
		if n > 0 && !l.stalled.Load() {
			if _, werr := l.up.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// upToClient passes answers on, late by the latency, resets the client
// instead where ResetEvery says, and closes the client's side (after
// SlowClose) once the upstream has closed.
func (l *link) upToClient() {
	defer l.p.wg.Done()
	buf := make([]byte, 32<<10)
	for {
		n, err := l.up.Read(buf)
		if n > 0 && !l.stalled.Load() {
			if l.p.toxics.Latency > 0 || l.p.toxics.Jitter > 0 {
				time.Sleep(l.p.delay())
			}
			if every := l.p.toxics.ResetEvery; every > 0 && l.p.fromUp.Add(1)%every == 0 {
				l.resetClient()
				return
			}
			if _, werr := l.client.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) && !l.stalled.Load() {
				time.Sleep(l.p.toxics.SlowClose)
				l.p.untrack(l.client, l.up)
			}
			return
		}
	}
}

func (l *link) resetClient() {
	if tc, ok := l.client.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	l.p.Reset.Add(1)
	l.p.untrack(l.client, l.up)
}
