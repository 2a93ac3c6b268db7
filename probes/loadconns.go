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
// Listed by the load (SamplerOptions.LoadEnds): the load knows its
// connections' addresses, so the sampler need not find soakd's sockets
// among its fds (a readlink each) and every TCP socket of the machine (a
// dump walks all of the kernel's hash tables: 1.2 ms of CPU a sample on a
// shared machine). It looks up the server end of each of the load's
// connections by its two addresses, a hash lookup each, once per
// connection, and counts the ones a member holds. A socket counted once
// stays counted while a member holds it: soakd's close in flight, or a
// close between the fd read and the lookup. Only the load's connections
// count that way; another connection of soakd's process to the target
// is the target's.
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
	// With SamplerOptions.LoadEnds: ends are this sample's connections to
	// look up; inode the server end of each connection the load listed at
	// the previous sample whose end was found, nextInode this sample's.
	ends             []connEnds
	inode, nextInode map[connEnds]uint64
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
		wasLoad: map[uint64]struct{}{}, isLoad: map[uint64]struct{}{}, dumped: map[uint64]struct{}{},
		inode: map[connEnds]uint64{}, nextInode: map[connEnds]uint64{}}
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
	if !s.sameNetNS(root) || !s.readLoadConnsOf() {
		for i := range s.mems {
			s.mems[i].LoadConns, s.mems[i].LoadConnsValid = 0, false
		}
	}
}

// readLoadConnsOf counts the members' connections to soakd by the load's
// own list of them when there is one (readLoadEnds), else by soakd's fds
// and a dump of every socket (readLoadConns).
func (s *Sampler) readLoadConnsOf() bool {
	if s.opts.LoadEnds != nil {
		if ok, listed := s.readLoadEnds(); listed {
			return ok
		}
	}
	return s.readLoadConns()
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
	lp.known, lp.next = lp.next, lp.known
	s.countStillHeld(lp.dumped)
	return true
}

// countStillHeld counts, in each member, the sockets that were soakd's
// connections at the previous sample and are missing from seen although
// the member's fd read listed them, then makes this sample's count the
// previous. seen is the dump's sockets (missing: closed between the fd
// read and the dump), or the lookups' (missing: closed meanwhile, or no
// longer listed by the load).
func (s *Sampler) countStillHeld(seen map[uint64]struct{}) {
	lp := s.peers
	for ino, i := range lp.owner {
		_, listed := seen[ino]
		if _, was := lp.wasLoad[ino]; was && !listed {
			s.mems[i].LoadConns++
			lp.isLoad[ino] = struct{}{}
		}
	}
	lp.wasLoad, lp.isLoad = lp.isLoad, lp.wasLoad
}

// readLoadEnds counts the members' connections to soakd from the load's
// list of its connections (SamplerOptions.LoadEnds): the server end of
// each counts in the member holding it. Its inode is looked up by the
// connection's addresses (diagExact) the first time the connection is
// listed with its server end accepted, and remembered while the load
// lists it and a member holds that inode: while both ends hold the pair
// of addresses no other socket can have them. Once the server's end is
// closed, the load may close its own and open another with the same
// pair (its port reused) between two samples: that one is looked up.
// A socket counted at the previous sample that a member still holds
// counts again, whether or not the load still lists it (a close in
// flight) and whether or not it was found (closed since the fds were
// read). listed is false when the load could not list its connections; ok
// false when the lookups failed.
func (s *Sampler) readLoadEnds() (ok, listed bool) {
	lp := s.peers
	lp.ends = lp.ends[:0]
	clear(lp.isLoad)
	clear(lp.nextInode)
	if !s.opts.LoadEnds(func(local, remote netip.AddrPort) {
		e := connEnds{unmapped(local), unmapped(remote)}
		if ino, ok := lp.inode[e]; ok {
			if _, held := lp.owner[ino]; held {
				s.countLoadEnd(e, ino)
				return
			}
		}
		if e.Local.Port() != 0 && e.Remote.Port() != 0 { // else not connected yet
			lp.ends = append(lp.ends, e)
		}
	}) {
		return false, false
	}
	if lp.beforeDump != nil {
		lp.beforeDump()
	}
	if s.diagBuf == nil {
		s.diagBuf = make([]byte, 64<<10)
	}
	err := diagExact(s.diagBuf, lp.ends, func(k int, m []byte) {
		c, e := diagConn(m), lp.ends[k]
		// Not the listener a lookup falls back to, nor a socket in the
		// accept queue (no inode yet).
		if c.State != tcpListen && c.Local == e.Remote && c.Remote == e.Local && c.Inode != 0 {
			s.countLoadEnd(e, c.Inode)
		}
	})
	if err != nil {
		s.warnOnce("loadends", "probes: cannot look up the load's connections through sock_diag: the load's connections per process are missing, and the lives rule fits all of each process's fds", proc{ID: procID{PID: lp.pid}}, err)
		return false, true
	}
	lp.inode, lp.nextInode = lp.nextInode, lp.inode
	s.countStillHeld(lp.isLoad)
	return true, true
}

// countLoadEnd remembers ino as the server end of e, and counts it in the
// member that holds it, if any (not another server's).
func (s *Sampler) countLoadEnd(e connEnds, ino uint64) {
	lp := s.peers
	lp.nextInode[e] = ino
	i, ok := lp.owner[ino]
	if _, counted := lp.isLoad[ino]; ok && !counted {
		s.mems[i].LoadConns++
		lp.isLoad[ino] = struct{}{}
	}
}

// unmapped is a with an IPv4 address mapped into IPv6 unmapped, as
// diagConn reads the kernel's.
func unmapped(a netip.AddrPort) netip.AddrPort {
	return netip.AddrPortFrom(a.Addr().Unmap(), a.Port())
}
