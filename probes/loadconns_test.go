package probes

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"
)

// The load's connections per process (SamplerOptions.LoadConns): a
// process's sockets whose peer is soakd's own process (here the test's)
// count, another process's connections to it do not, and one whose close
// soakd sent but the process has not read yet still counts.
func TestLiveLoadConnsPerProcess(t *testing.T) {
	eachLoadWay(t, testLiveLoadConnsPerProcess)
}

func testLiveLoadConnsPerProcess(t *testing.T, lo *testLoad) {
	srv := startServer(t, "127.0.0.1:0")
	s := twoProcessSampler(t, srv, lo)
	root := func() Member {
		m, ok := memberOf(s.Sample(), srv.pid)
		if !ok {
			t.Fatalf("no member with the server's pid %d", srv.pid)
		}
		return m
	}
	base := root()
	if !base.LoadConnsValid {
		t.Fatalf("member %+v: LoadConnsValid false; want a reading", base)
	}
	// Another process's connection: one more fd, not the load's.
	_, port, _ := strings.Cut(srv.addr, ":")
	other := exec.Command("bash", "-c", fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%s; sleep 60", port))
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = other.Process.Kill(); _ = other.Wait() })
	waitFor(t, "the other process's connection", func() bool { return root().FDs == base.FDs+1 })
	if m := root(); m.LoadConns != base.LoadConns {
		t.Fatalf("another process's connection: load_conns %d → %d; want unchanged", base.LoadConns, m.LoadConns)
	}
	const n = 5
	var conns []net.Conn
	for range n {
		conns = append(conns, lo.dial(t, srv.addr))
	}
	waitFor(t, fmt.Sprintf("%d connections from soakd", n), func() bool {
		m := root()
		return m.FDs == base.FDs+1+n && m.LoadConns == base.LoadConns+n
	})
	// Closes in flight: a stopped server cannot read them, and holds its
	// ends (CLOSE_WAIT) while soakd's are gone from its fd table.
	if err := syscall.Kill(srv.pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(srv.pid, syscall.SIGCONT) })
	// kill returns before every thread has stopped: a thread still
	// running read the closes and closed its ends (a quiet CI run: fds
	// 13, load_conns 1 at the first sample).
	waitFor(t, "every thread of the server stopped", func() bool { return allStopped(srv.pid) })
	for _, c := range conns {
		lo.close(c)
	}
	for i := range 3 {
		if m := root(); m.FDs != base.FDs+1+n || m.LoadConns != base.LoadConns+n {
			t.Fatalf("sample %d after soakd closed its %d connections, the server stopped: fds %d, load_conns %d; want %d and %d",
				i+1, n, m.FDs, m.LoadConns, base.FDs+1+n, base.LoadConns+n)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := syscall.Kill(srv.pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the closes read", func() bool {
		m := root()
		return m.FDs == base.FDs+1 && m.LoadConns == base.LoadConns
	})
}

// A process that exits between the sample's fd reads and its socket dump
// (a prefork worker at its last sample) has its sockets listed as fds and
// gone from the dump: those that were soakd's connections at the previous
// sample still count as such.
func TestLiveLoadConnsOfAProcessExitingMidSample(t *testing.T) {
	eachLoadWay(t, testLiveLoadConnsOfAProcessExitingMidSample)
}

func testLiveLoadConnsOfAProcessExitingMidSample(t *testing.T, lo *testLoad) {
	srv := startServer(t, "127.0.0.1:0")
	s := twoProcessSampler(t, srv, lo)
	root := func() Member { m, _ := memberOf(s.Sample(), srv.pid); return m }
	base := root().LoadConns // the fork's request may keep its connection
	const n = 5
	for range n {
		lo.dial(t, srv.addr)
	}
	waitFor(t, fmt.Sprintf("%d connections from soakd", n), func() bool { return root().LoadConns == base+n })
	s.peers.beforeDump = func() {
		_ = syscall.Kill(srv.pid, syscall.SIGKILL)
		<-srv.done // reaped: its sockets are closed
	}
	m := root()
	if m.PID == 0 || m.FDs < n || m.LoadConns != base+n {
		t.Fatalf("the sample during the exit: %+v; want its %d connections to soakd counted", m, n)
	}
}

// memberOf is the member of sample with pid.
func memberOf(sample Sample, pid int) (Member, bool) {
	for _, m := range sample.Members {
		if m.PID == int32(pid) {
			return m, true
		}
	}
	return Member{}, false
}

// twoProcessSampler counts srv's connections to soakd: srv forks a child,
// since a one-process tree is not counted (TestLoadConnsOnlyInATree).
// With lo.listed it counts by lo's list of its connections.
func twoProcessSampler(t *testing.T, srv *server, lo *testLoad) *Sampler {
	t.Helper()
	srv.post(t, "/ctl/fork?n=1")
	s := NewSampler(openLive(t, Spec{PID: srv.pid}), lo.options(t))
	waitFor(t, "2 processes", func() bool { return s.Sample().Procs == 2 })
	return s
}

// TestLoadConnsOnlyInATree: a one-process tree's connections to soakd are
// not counted (no process in it can be replaced by another, which is what
// the lives rule fits, and the count costs a readlink per fd and a socket
// dump every sample); once the tree has had two processes they are, from
// then on.
func TestLoadConnsOnlyInATree(t *testing.T) {
	srv := startServer(t, "127.0.0.1:0")
	s := NewSampler(openLive(t, Spec{PID: srv.pid}), SamplerOptions{LoadConns: true, SmapsInterval: -1, Log: zaptest.NewLogger(t)})
	c, err := net.Dial("tcp", srv.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	for _, m := range s.Sample().Members {
		if m.LoadConnsValid {
			t.Fatalf("one process: member %+v has a load_conns reading; want none", m)
		}
	}
	srv.post(t, "/ctl/fork?n=1")
	waitFor(t, "2 processes", func() bool { return s.Sample().Procs == 2 })
	waitFor(t, "the root's connection from soakd", func() bool {
		m, ok := memberOf(s.Sample(), srv.pid)
		return ok && m.LoadConnsValid && m.LoadConns >= 1 // the fork's request may hold another
	})
}

// Without SamplerOptions.LoadConns the counts are not read, and say so.
func TestLoadConnsOff(t *testing.T) {
	srv := startServer(t, "127.0.0.1:0")
	s := NewSampler(openLive(t, Spec{PID: srv.pid}), SamplerOptions{SmapsInterval: -1, Log: zaptest.NewLogger(t)})
	for _, m := range s.Sample().Members {
		if m.LoadConnsValid || m.LoadConns != 0 {
			t.Errorf("member %+v: a load_conns reading without the option", m)
		}
	}
}

// allStopped says whether every thread of pid is stopped (state T).
func allStopped(pid int) bool {
	stats, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/stat", pid))
	if err != nil || len(stats) == 0 {
		return false
	}
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			return false
		}
		i := bytes.LastIndexByte(b, ')')
		if i < 0 || i+2 >= len(b) || (b[i+2] != 'T' && b[i+2] != 't') {
			return false
		}
	}
	return true
}

// testLoad plays soakd's load in a test: the connections it dials are the
// load's, and with listed it lists them as the engine does
// (SamplerOptions.LoadEnds); without, the sampler counts by soakd's fds
// and a dump of every socket.
type testLoad struct {
	listed bool
	mu     sync.Mutex // guards conns
	conns  map[net.Conn]struct{}
}

// eachLoadWay runs test with both ways of counting the load's connections.
func eachLoadWay(t *testing.T, test func(*testing.T, *testLoad)) {
	for _, listed := range []bool{false, true} {
		name := map[bool]string{false: "dump", true: "listed"}[listed]
		t.Run(name, func(t *testing.T) { test(t, &testLoad{listed: listed, conns: map[net.Conn]struct{}{}}) })
	}
}

// options are a Sampler's options counting the load's connections.
func (l *testLoad) options(t testing.TB) SamplerOptions {
	o := SamplerOptions{LoadConns: true, SmapsInterval: -1, Log: zaptest.NewLogger(t)}
	if l.listed {
		o.LoadEnds = l.each
	}
	return o
}

// dial opens one of the load's connections to addr, closed at the test's
// end. It makes one request on it and reads the answer: a server waiting
// for a first request gives up after its header timeout (10 s for the
// helpers), one waiting for the next keeps the connection.
func (l *testLoad) dial(t testing.TB, addr string) net.Conn {
	t.Helper()
	return l.dialFrom(t, nil, addr)
}

// dialFrom is dial from the local address local (any when nil).
func (l *testLoad) dialFrom(t testing.TB, local *net.TCPAddr, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		return rc.Control(func(fd uintptr) { _ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1) })
	}}
	if local != nil {
		d.LocalAddr = local
	}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(c, "GET /ctl/stats HTTP/1.1\r\nHost: soakd\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("a request on the connection: %v", err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	l.mu.Lock()
	l.conns[c] = struct{}{}
	l.mu.Unlock()
	t.Cleanup(func() { l.close(c) })
	return c
}

// close closes c, which leaves the load's list.
func (l *testLoad) close(c net.Conn) {
	l.mu.Lock()
	delete(l.conns, c)
	l.mu.Unlock()
	c.Close()
}

// each lists the open connections (SamplerOptions.LoadEnds).
func (l *testLoad) each(fn func(local, remote netip.AddrPort)) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for c := range l.conns {
		fn(c.LocalAddr().(*net.TCPAddr).AddrPort(), c.RemoteAddr().(*net.TCPAddr).AddrPort())
	}
	return true
}

// TestLiveLoadConnsListedAsDumped: on a prefork tree (testdata/recycle,
// three workers sharing the listener), counting by the load's list of its
// connections (SamplerOptions.LoadEnds) gives every process the count the
// dump of every socket gives, while the tree also holds another process's
// connections and the load has connections to a second server outside
// it; a connection the load closed, whose close the worker has read, is
// no longer counted.
func TestLiveLoadConnsListedAsDumped(t *testing.T) {
	addr, root := startRecycle(t, "--workers", "3")
	other := startServer(t, "127.0.0.1:0") // a second listener, outside the tree
	dumped := &testLoad{conns: map[net.Conn]struct{}{}}
	listed := &testLoad{listed: true, conns: map[net.Conn]struct{}{}}
	tg := openLive(t, Spec{PID: root})
	byDump, byList := NewSampler(tg, dumped.options(t)), NewSampler(tg, listed.options(t))
	waitFor(t, "4 processes", func() bool { return byDump.Sample().Procs == 4 && byList.Sample().Procs == 4 })
	_, port, _ := strings.Cut(addr, ":")
	bash := exec.Command("bash", "-c", fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%s 4<>/dev/tcp/127.0.0.1/%[1]s; sleep 60", port))
	if err := bash.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = bash.Process.Kill(); _ = bash.Wait() })
	for range 3 {
		listed.dial(t, other.addr)
	}
	const n = 9
	var conns []net.Conn
	for range n {
		conns = append(conns, listed.dial(t, addr))
	}
	same := func(want uint64) (string, bool) {
		d, l := loadConnsOf(byDump.Sample()), loadConnsOf(byList.Sample())
		got := fmt.Sprintf("by the dump %v, by the list %v", d, l)
		return got, maps.Equal(d, l) && sumOf(l) == want && len(l) == 4
	}
	var got string
	waitFor(t, fmt.Sprintf("%d connections counted alike", n), func() (ok bool) { got, ok = same(n); return ok })
	t.Logf("%d connections: %s", n, got)
	if got, ok := same(n); !ok {
		t.Fatalf("a second look: %s; want the same, summing to %d", got, n)
	}
	for _, c := range conns[:3] {
		listed.close(c)
	}
	waitFor(t, "the workers read 3 closes", func() bool { return sumOf(loadConnsOf(byDump.Sample())) == n-3 })
	for i := range 3 {
		if got, ok := same(n - 3); !ok {
			t.Fatalf("look %d after 3 closes read: %s; want the same, summing to %d", i+1, got, n-3)
		}
	}
	// A worker that exits closes its ends first (a recycled worker):
	// soakd's stay open, still listed, and are no longer counted.
	var pid int32
	var held uint64
	for p, c := range loadConnsOf(byList.Sample()) {
		if p != int32(root) && c > held {
			pid, held = p, c
		}
	}
	if err := syscall.Kill(int(pid), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	left := uint64(n-3) - held
	waitFor(t, fmt.Sprintf("worker %d's %d connections gone, the worker replaced", pid, held), func() (ok bool) {
		got, ok = same(left)
		_, gone := loadConnsOf(byList.Sample())[pid]
		return ok && !gone
	})
	t.Logf("worker %d killed: %s", pid, got)
}

// loadConnsOf is each member's LoadConns, by PID; a member without a
// reading shows as a huge count.
func loadConnsOf(s Sample) map[int32]uint64 {
	out := map[int32]uint64{}
	for _, m := range s.Members {
		out[m.PID] = m.LoadConns
		if !m.LoadConnsValid {
			out[m.PID] = 1 << 40
		}
	}
	return out
}

func sumOf(m map[int32]uint64) (n uint64) {
	for _, v := range m {
		n += v
	}
	return n
}

// A server listening on IPv6's any address holds a connection to its
// IPv4 address as an IPv6 socket with the addresses mapped: the listed
// count finds it as the dump does, and IPv6 connections as well.
func TestLiveLoadConnsListedDualStack(t *testing.T) {
	eachLoadWay(t, func(t *testing.T, lo *testLoad) {
		srv := startServer(t, "[::]:0")
		s := twoProcessSampler(t, srv, lo)
		root := func() Member { m, _ := memberOf(s.Sample(), srv.pid); return m }
		base := root().LoadConns // the fork's request may keep its connection
		_, port, _ := net.SplitHostPort(srv.addr)
		lo.dial(t, net.JoinHostPort("127.0.0.1", port))
		lo.dial(t, net.JoinHostPort("::1", port))
		waitFor(t, "2 connections from soakd, over IPv4 and IPv6", func() bool { return root().LoadConns == base+2 })
	})
}

// A connection of the load that takes a closed one's addresses between
// two samples (its port reused once the server closed its end) is looked
// up anew and counted.
func TestLiveLoadConnsListedPortReused(t *testing.T) {
	srv := startServer(t, "127.0.0.1:0")
	lo := &testLoad{listed: true, conns: map[net.Conn]struct{}{}}
	s := twoProcessSampler(t, srv, lo)
	root := func() Member { m, _ := memberOf(s.Sample(), srv.pid); return m }
	base := root()
	fds := func() int { // read without a sample
		ents, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", srv.pid))
		return len(ents)
	}
	local := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: freePort(t)}
	first := lo.dialFrom(t, local, srv.addr)
	waitFor(t, "the first connection counted", func() bool { return root().LoadConns == base.LoadConns+1 })
	// A reset leaves no TIME_WAIT at soakd's end: its port is free at
	// once, and the server closes its end on reading the reset.
	if err := first.(*net.TCPConn).SetLinger(0); err != nil {
		t.Fatal(err)
	}
	lo.close(first)
	waitFor(t, "the server closed the first", func() bool { return fds() == int(base.FDs) })
	lo.dialFrom(t, local, srv.addr)
	waitFor(t, "the server accepted the second", func() bool { return fds() == int(base.FDs)+1 })
	if m := root(); m.LoadConns != base.LoadConns+1 {
		t.Fatalf("the second connection, from the first's address %s: load_conns %d; want %d", local, m.LoadConns, base.LoadConns+1)
	}
}
