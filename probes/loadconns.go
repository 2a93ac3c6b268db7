package probes

import (
	"net/netip"
	"os"
)

// The load's connections, per process. soakd's open loop keeps each
// connection it opens, and a prefork worker holds every connection it
// accepted: on a busy machine, where requests slow and the loop opens
// more, one worker's fds went from 11 to 53-65 within its life, and the
// lives rule read that as a leak. The tree's fds are judged net of the
// load's connections as the load counts them (load.Engine.OpenConns), but
// the load does not know which process accepted each. The sampler does:
// a process's socket whose peer is a socket of soakd's own process is
// one of soakd's connections (Member.LoadConns).
//
// Closes in flight: once soakd closes a connection, its end leaves its fd
// table (an orphan, inode 0, in FIN_WAIT) while the target's end stays
// open (CLOSE_WAIT) until the target reads the close. An address seen as
// soakd's is therefore remembered while a sampled socket still points at
// it. A connection opened and closed between two samples, whose target
// end outlives soakd's, is never seen as soakd's: it counts as the
// target's until the target closes it.
//
// Closes between the two reads: a sample lists the fds first and dumps
// the sockets a moment later. A worker that exits closes its sockets in
// between, and those counted in its fds were missing from the dump (a
// prefork worker at its last sample: 148 fds, 8 of them seen as
// soakd's). A socket that was one of soakd's connections at the previous
// sample, and is missing from the dump, is still counted as one.

// loadPeers is the state of the per-process count of soakd's connections.
type loadPeers struct {
	owner map[uint64]int // a sampled socket inode → its member's index in Sampler.mems
	self  map[uint64]struct{}
	known map[netip.AddrPort]struct{} // soakd's local addresses, and those a sampled socket still points at
	next  map[netip.AddrPort]struct{}
	// wasLoad holds the sampled sockets counted as soakd's connections at
	// the previous sample, isLoad this sample's; dumped the sampled
	// sockets the dump listed.
	wasLoad, isLoad, dumped map[uint64]struct{}
	beforeDump              func() // a test's hook between the fd reads and the dump
	pid                     int32  // soakd's own
	// on: the tree has had more than one process. Only then can a
	// process be replaced within it, which is what the lives rule fits,
	// so a one-process tree (most servers) does not pay for the count:
	// 1.7–2 ms a sample for one holding 64 connections, against 0.1.
	// Once on, it stays on, so that a process's series switches from all
	// its fds to their net at most once.
	on bool
}

// countingLoad says whether this sample counts each process's
// connections to soakd.
func (s *Sampler) countingLoad() bool { return s.peers != nil && s.peers.on }

func newLoadPeers() *loadPeers {
	return &loadPeers{owner: map[uint64]int{}, self: map[uint64]struct{}{},
		known: map[netip.AddrPort]struct{}{}, next: map[netip.AddrPort]struct{}{}, pid: int32(os.Getpid()),
		wasLoad: map[uint64]struct{}{}, isLoad: map[uint64]struct{}{}, dumped: map[uint64]struct{}{}}
}

// loadPeerStates are the TCP states whose sockets are read: every state
// of a socket with an fd (LISTEN, TIME_WAIT and CLOSE have none or no
// peer).
const loadPeerStates = 0xfff &^ (1<<tcpTimeWait | 1<<tcpClose | 1<<tcpListen | 1)

// scanFDs counts pid's fds and records its socket inodes as belonging to
// the member at index i; on a census sample they go to the census too.
func (s *Sampler) scanFDs(pid int32, i int, census bool) (uint64, error) {
	lp := s.peers
	return s.fs.fdSockets(pid, func(ino uint64) {
		lp.owner[ino] = i
		if census {
			s.tcp.owned[ino] = struct{}{}
		}
	})
}

// countLoadConns sets each member's LoadConns: its TCP sockets whose peer
// address is soakd's. It needs the root in soakd's network namespace
// (sock_diag sees only that one, and soakd's addresses mean nothing in
// another) and sock_diag; without them the counts are missing
// (LoadConnsValid false). Call it after every member is read: each
// member whose fds were listed says LoadConnsValid already.
func (s *Sampler) countLoadConns(root int32) {
	lp := s.peers
	defer clear(lp.owner)
	if !s.sameNetNS(root) || !s.readLoadConns() {
		for i := range s.mems {
			s.mems[i].LoadConns, s.mems[i].LoadConnsValid = 0, false
		}
	}
}

// readLoadConns counts the members' connections to soakd (see
// countLoadConns), false when the sockets could not be read.
func (s *Sampler) readLoadConns() bool {
	lp := s.peers
	clear(lp.self)
	if _, err := s.self.fdScan(lp.pid, lp.self); err != nil {
		return false
	}
	if s.diagBuf == nil {
		s.diagBuf = make([]byte, 64<<10)
	}
	type peer struct {
		member int
		inode  uint64
		remote netip.AddrPort
	}
	var theirs []peer
	clear(lp.next)
	clear(lp.dumped)
	if lp.beforeDump != nil {
		lp.beforeDump()
	}
	err := diagDumpStates(s.diagBuf, loadPeerStates, func(m []byte) {
		c := diagConn(m)
		if _, ok := lp.self[c.Inode]; ok {
			lp.next[c.Local] = struct{}{}
		} else if i, ok := lp.owner[c.Inode]; ok {
			lp.dumped[c.Inode] = struct{}{}
			if c.Remote.Port() != 0 {
				theirs = append(theirs, peer{i, c.Inode, c.Remote})
			}
		}
	})
	if err != nil {
		s.warnOnce("loadconns", "probes: cannot read the TCP sockets through sock_diag: the load's connections per process are missing, and the lives rule fits all of each process's fds", proc{ID: procID{PID: lp.pid}}, err)
		return false
	}
	clear(lp.isLoad)
	for _, p := range theirs {
		_, now := lp.next[p.remote]
		_, before := lp.known[p.remote]
		if now || before {
			s.mems[p.member].LoadConns++
			lp.next[p.remote] = struct{}{} // still pointed at: remembered
			lp.isLoad[p.inode] = struct{}{}
		}
	}
	for ino, i := range lp.owner {
		_, listed := lp.dumped[ino]
		if _, was := lp.wasLoad[ino]; was && !listed { // closed since its fd was read
			s.mems[i].LoadConns++
			lp.isLoad[ino] = struct{}{}
		}
	}
	lp.known, lp.next = lp.next, lp.known
	lp.wasLoad, lp.isLoad = lp.isLoad, lp.wasLoad
	return true
}
