package probes

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"

	"go.uber.org/zap"
	"golang.org/x/sys/unix"
)

// Upstream is a local server the sampled processes connect to that is not
// sampled itself: a reverse proxy's backend, say. It is found from the
// sampled processes' own sockets (see Sampler.Upstreams).
type Upstream struct {
	// Addr is the host:port the tree connects to, e.g. "127.0.0.1:8081".
	Addr string `json:"addr"`
	// ViaPID and Via are the sampled process that holds the connection
	// and its command name, e.g. 1234 and "nginx".
	ViaPID int32  `json:"via_pid"`
	Via    string `json:"via"`
	// PID, Start and Name are the listening socket's owner (the root
	// among its owners: a prefork master, not its workers); PID is 0 when
	// it could not be found, and Why then says why.
	PID     int32  `json:"pid,omitempty"`
	Start   uint64 `json:"start_ticks,omitempty"`
	Name    string `json:"name,omitempty"`
	Cmdline string `json:"cmdline,omitempty"`
	Why     string `json:"why,omitempty"`
}

// Served names the upstream's server: "pid 4321 (python3)", or why it is
// not known.
func (u Upstream) Served() string {
	if u.PID == 0 {
		return u.Why
	}
	return fmt.Sprintf("pid %d (%s)", u.PID, u.Name)
}

// String is the sentence that names the upstream, e.g. "nginx forwards to
// 127.0.0.1:8081, served by pid 4321 (python3)".
func (u Upstream) String() string {
	if u.PID == 0 {
		return fmt.Sprintf("%s forwards to %s, whose server is not known (%s)", u.Via, u.Addr, u.Why)
	}
	return fmt.Sprintf("%s forwards to %s, served by %s", u.Via, u.Addr, u.Served())
}

// tcpConn is a socket row with both addresses.
type tcpConn struct {
	tcpEntry
	Local, Remote netip.AddrPort
}

var errTCPAddr = errors.New("tcp: address is not HEXIP:HEXPORT")

// parseTCPConn parses one data row of /proc/net/tcp{,6} with its local
// and remote addresses.
func parseTCPConn(line []byte) (tcpConn, error) {
	e, err := parseTCPLine(line)
	if err != nil {
		return tcpConn{}, err
	}
	f := bytes.Fields(line)
	c := tcpConn{tcpEntry: e}
	if c.Local, err = parseHexAddrPort(f[1]); err != nil {
		return tcpConn{}, err
	}
	if c.Remote, err = parseHexAddrPort(f[2]); err != nil {
		return tcpConn{}, err
	}
	return c, nil
}

// parseHexAddrPort parses the kernel's "0100007F:1F90": the address as
// 32-bit words in the host's byte order (one word for IPv4, four for
// IPv6), the port in big-endian hex. A v4-mapped IPv6 address is unmapped.
func parseHexAddrPort(b []byte) (netip.AddrPort, error) {
	i := bytes.IndexByte(b, ':')
	if i < 0 || (i != 8 && i != 32) {
		return netip.AddrPort{}, errTCPAddr
	}
	raw := make([]byte, i/2)
	if _, err := hex.Decode(raw, b[:i]); err != nil {
		return netip.AddrPort{}, errTCPAddr
	}
	port, err := strconv.ParseUint(string(b[i+1:]), 16, 16)
	if err != nil {
		return netip.AddrPort{}, errTCPAddr
	}
	for w := 0; w < len(raw); w += 4 { // each word was printed as a number
		binary.NativeEndian.PutUint32(raw[w:], binary.BigEndian.Uint32(raw[w:]))
	}
	a, _ := netip.AddrFromSlice(raw)
	return netip.AddrPortFrom(a.Unmap(), uint16(port)), nil
}

// upstreamOwner is the cached owner of one listening socket.
type upstreamOwner struct {
	c         candidate
	name, why string
}

// Upstreams finds the local servers the sampled processes (the tree of
// the last sample, with the processes it follows) hold connections to,
// and that are not sampled: each socket of theirs that is connected (or
// connecting) to a port on which a socket listens in the root's network
// namespace, at an address of this machine, and whose listening socket
// no sampled process owns. Each address is named once.
//
// It reads the root's TCP tables first, and only when they hold a
// connection to a local server that is not the tree's own (the load's
// connections to the tree are not) does it readlink the sampled
// processes' fds to see whether one of them holds it: a look with
// nothing to find costs one sock_diag dump, so it can be made often.
// A proxy that speaks HTTP/1.0 to its backend holds each connection for
// one request (a millisecond, say), and a look catches it only while it
// is open; finding a listener's owner scans every process's fds once,
// and is then remembered by the listener's socket inode.
func (s *Sampler) Upstreams(ctx context.Context) []Upstream {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.procs) == 0 {
		return nil
	}
	listen, conns := s.readConns(s.procs[0].ID.PID)
	if !slices.ContainsFunc(conns, func(c tcpConn) bool { return s.upstreamCandidate(listen, c) }) {
		return nil
	}
	owned, inSet := s.sampledSockets()
	s.treeListeners = map[uint64]bool{}
	for _, ls := range listen {
		for _, l := range ls {
			if _, ok := owned[l.Inode]; ok {
				s.treeListeners[l.Inode] = true
			}
		}
	}
	var out []Upstream
	for _, c := range conns {
		if _, ok := owned[c.Inode]; !ok {
			continue
		}
		lis := listenersFor(listen[c.Remote.Port()], c)
		if len(lis) == 0 || slices.ContainsFunc(lis, func(l tcpConn) bool { _, ok := owned[l.Inode]; return ok }) {
			continue // not a local server, or one the sampled processes own
		}
		addr := c.Remote.String()
		if slices.ContainsFunc(out, func(u Upstream) bool { return u.Addr == addr }) {
			continue
		}
		o := s.listenerOwner(ctx, lis)
		if inSet[o.c.ID] {
			continue
		}
		via := owned[c.Inode]
		u := Upstream{Addr: addr, ViaPID: via, Via: s.commOf(via), PID: o.c.ID.PID, Start: o.c.ID.Start, Name: o.name, Cmdline: shorten(o.c.Cmdline, MaxCmdline), Why: o.why}
		out = append(out, u)
	}
	return out
}

// upstreamCandidate says whether c may be a sampled process's connection
// to a local server it does not own: c connects to a local listener that
// is not one the tree was last seen to own (treeListeners, nil before the
// first full look, when every such connection is a candidate).
func (s *Sampler) upstreamCandidate(listen map[uint16][]tcpConn, c tcpConn) bool {
	lis := listenersFor(listen[c.Remote.Port()], c)
	return len(lis) > 0 && !slices.ContainsFunc(lis, func(l tcpConn) bool { return s.treeListeners[l.Inode] })
}

func (s *Sampler) sampledSockets() (map[uint64]int32, map[procID]bool) {
	owned := map[uint64]int32{}
	inSet := make(map[procID]bool, len(s.procs))
	one := map[uint64]struct{}{}
	for _, p := range s.procs {
		inSet[p.ID] = true
		clear(one)
		if _, err := s.fs.fdScan(p.ID.PID, one); err != nil {
			continue
		}
		for ino := range one {
			owned[ino] = p.ID.PID
		}
	}
	return owned, inSet
}

// upstreamStates are the TCP states Upstreams reads: LISTEN and every
// state of a socket that is connected, connecting or closing (a proxy
// that speaks HTTP/1.0 to its backend holds each connection for a
// request only, and the backend may close first: CLOSE_WAIT). TIME_WAIT
// and CLOSE sockets have no owner.
const upstreamStates = 0xfff &^ (1<<tcpTimeWait | 1<<tcpClose | 1)

const tcpClose = 0x07

// readConns reads the TCP sockets of the root's network namespace: the
// listening ones by port, and the connections. It asks
// sock_diag when the root shares soakd's namespace (it skips the
// TIME_WAIT sockets a busy host holds thousands of, which the text tables
// format one by one: a look cost 9-22 ms of CPU that way here), and reads
// the root's /proc/PID/net/tcp{,6} otherwise.
func (s *Sampler) readConns(root int32) (map[uint16][]tcpConn, []tcpConn) {
	listen := map[uint16][]tcpConn{}
	var conns []tcpConn
	add := func(c tcpConn) {
		switch {
		case c.State == tcpListen:
			listen[c.Local.Port()] = append(listen[c.Local.Port()], c)
		case c.State != tcpTimeWait && c.State != tcpClose && c.Remote.Port() != 0:
			conns = append(conns, c)
		}
	}
	if s.sameNetNS(root) {
		if s.diagBuf == nil {
			s.diagBuf = make([]byte, 64<<10)
		}
		err := diagDumpStates(s.diagBuf, upstreamStates, func(m []byte) { add(diagConn(m)) })
		if err == nil {
			return listen, conns
		}
		clear(listen)
		conns = conns[:0]
	}
	for _, name := range []string{"net/tcp", "net/tcp6"} {
		b, err := s.fs.readSlow(s.fs.pidPath(root, name))
		if err != nil {
			continue
		}
		eachTCPConn(b, add)
	}
	return listen, conns
}

// diagConn reads a struct inet_diag_msg with both addresses (network
// byte order; an IPv4 address is the first 4 of its 16 bytes).
func diagConn(m []byte) tcpConn {
	c := tcpConn{tcpEntry: diagEntry(m)}
	addr := func(b []byte) netip.Addr {
		if m[0] == unix.AF_INET {
			return netip.AddrFrom4([4]byte(b[:4]))
		}
		return netip.AddrFrom16([16]byte(b[:16])).Unmap()
	}
	c.Local = netip.AddrPortFrom(addr(m[8:]), binary.BigEndian.Uint16(m[4:]))
	c.Remote = netip.AddrPortFrom(addr(m[24:]), binary.BigEndian.Uint16(m[6:]))
	return c
}

// eachTCPConn calls fn for each well-formed row of a TCP table.
func eachTCPConn(b []byte, fn func(tcpConn)) {
	for i, line := range bytes.Split(b, []byte("\n")) {
		if i == 0 || len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if c, err := parseTCPConn(line); err == nil {
			fn(c)
		}
	}
}

// listenersFor keeps the listening sockets that c's remote end reaches:
// its address, or the unspecified one when c's remote address is this
// machine's (loopback, c's own local address, or an interface's).
func listenersFor(lis []tcpConn, c tcpConn) []tcpConn {
	var out []tcpConn
	for _, l := range lis {
		la := l.Local.Addr()
		if la == c.Remote.Addr() || (la.IsUnspecified() && isLocalAddr(c.Remote.Addr(), c.Local.Addr())) {
			out = append(out, l)
		}
	}
	return out
}

func isLocalAddr(a, self netip.Addr) bool {
	if a.IsLoopback() || a == self {
		return true
	}
	addrs, _ := net.InterfaceAddrs()
	for _, x := range addrs {
		if n, ok := x.(*net.IPNet); ok {
			if ip, ok := netip.AddrFromSlice(n.IP); ok && ip.Unmap() == a {
				return true
			}
		}
	}
	return false
}

// listenerOwner finds the owner of the listening sockets lis, from the
// cache when their first inode was looked up before.
func (s *Sampler) listenerOwner(ctx context.Context, lis []tcpConn) upstreamOwner {
	key := lis[0].Inode
	if o, ok := s.upOwners[key]; ok {
		return o
	}
	want := map[uint64]struct{}{}
	for _, l := range lis {
		want[l.Inode] = struct{}{}
	}
	t := s.t
	t.mu.Lock()
	owners, denied := t.socketOwners(ctx, want)
	var o upstreamOwner
	roots := rootsOf(owners)
	switch {
	case len(roots) > 0:
		o.c = roots[0]
		o.name = s.commOfLocked(t.fs, o.c.ID.PID)
	case denied > 0:
		o.why = fmt.Sprintf("its owner is not visible: /proc/PID/fd of %d processes could not be read; run soakd as the server's user or grant it CAP_SYS_PTRACE", denied)
	default:
		o.why = "no process here owns its listening socket (another network namespace?)"
	}
	t.mu.Unlock()
	if ctx.Err() == nil { // a scan cut short is not the answer
		s.upOwners[key] = o
	}
	return o
}

// commOf returns pid's command name, "?" when it cannot be read.
func (s *Sampler) commOf(pid int32) string { return s.commOfLocked(s.fs, pid) }

func (s *Sampler) commOfLocked(fs *procFS, pid int32) string {
	b, err := fs.readPid(pid, "stat")
	if err != nil {
		return "?"
	}
	st, err := parseStat(b)
	if err != nil {
		return "?"
	}
	return st.Comm
}

// Follow samples u's server (and its descendants) with the tree from the
// next sample on, as the tree's own processes; it says false when u's
// server is unknown or already followed. Its resources then add to the
// tree's. soakd never signals a process it follows.
func (s *Sampler) Follow(u Upstream) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := procID{PID: u.PID, Start: u.Start}
	if u.PID == 0 || slices.Contains(s.walk.extra, id) {
		return false
	}
	s.walk.extra = append(s.walk.extra, id)
	s.log.Debug("probes: following an upstream: its processes are sampled with the tree", zap.String("upstream", u.String()))
	return true
}

// followedProcs reads the stat of the followed processes for a unit
// target (whose members come from its cgroup), without descendants.
func (s *Sampler) followedProcs(out []proc) []proc {
	for _, x := range s.walk.extra {
		if slices.ContainsFunc(out, func(p proc) bool { return p.ID.PID == x.PID }) {
			continue
		}
		b, err := s.fs.readPid(x.PID, "stat")
		if err != nil {
			continue
		}
		if st, err := parseStat(b); err == nil && st.StartTime == x.Start {
			out = append(out, proc{ID: x, Stat: st})
		}
	}
	return out
}
